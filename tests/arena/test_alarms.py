"""The server's alarms: one task wakes the seats waiting on move slots once their deadlines
pass, never before, and lets go of a slot as soon as it is answered."""

from __future__ import annotations

import gc
import math
import weakref

import pytest
import trio
import trio.testing

from arena.sessions import ALARM_STEP_S, Alarms, MoveSlot


def slot_due(deadline: float) -> MoveSlot:
    return MoveSlot("m1", 0, 0, 0, {}, deadline=deadline)


async def woken_at(slot: MoveSlot, times: list[float]) -> None:
    await slot.changed()
    times.append(trio.current_time())


@pytest.mark.trio
@pytest.mark.parametrize("deadline", [5.0, 8.966000000000001])  # the second rounds below its own bucket's product
async def test_a_slot_is_woken_once_its_deadline_passed_and_not_before(
    autojump_clock: trio.testing.MockClock, deadline: float
) -> None:
    assert math.ceil(8.966000000000001 / ALARM_STEP_S) * ALARM_STEP_S < 8.966000000000001
    alarms, times = Alarms(), []
    async with trio.open_nursery() as nursery:
        await nursery.start(alarms.run)
        slot = slot_due(deadline)
        alarms.set(slot)
        nursery.start_soon(woken_at, slot, times)
        await trio.sleep(20)
        nursery.cancel_scope.cancel()
    assert len(times) == 1 and deadline <= times[0] <= deadline + ALARM_STEP_S


@pytest.mark.trio
async def test_an_earlier_deadline_set_while_the_task_sleeps_for_a_later_one_rings_first(
    autojump_clock: trio.testing.MockClock,
) -> None:
    alarms, late, early = Alarms(), [], []
    async with trio.open_nursery() as nursery:
        await nursery.start(alarms.run)
        later = slot_due(60.0)
        alarms.set(later)
        nursery.start_soon(woken_at, later, late)
        await trio.sleep(1)  # the task sleeps till 60 s
        sooner = slot_due(3.0)
        alarms.set(sooner)
        nursery.start_soon(woken_at, sooner, early)
        await trio.sleep(100)
        nursery.cancel_scope.cancel()
    assert 3.0 <= early[0] <= 3.0 + ALARM_STEP_S and 60.0 <= late[0] <= 60.0 + ALARM_STEP_S


@pytest.mark.trio
async def test_a_cleared_slot_is_not_woken_and_not_kept(autojump_clock: trio.testing.MockClock) -> None:
    """An answered turn is let go of at once: kept till its deadline, the turns of the last
    seconds (thousands a second on a busy server) stayed in memory."""
    alarms, times = Alarms(), []
    async with trio.open_nursery() as nursery:
        await nursery.start(alarms.run)
        answered, waiting = slot_due(5.0), slot_due(5.0)  # one bucket: clearing one keeps the other
        for slot in (answered, waiting):
            alarms.set(slot)
        nursery.start_soon(woken_at, waiting, times)
        alarms.clear(answered)
        gone = weakref.ref(answered)
        del answered
        gc.collect()
        assert gone() is None
        await trio.sleep(10)
        nursery.cancel_scope.cancel()
    assert len(times) == 1


@pytest.mark.trio
async def test_a_slot_with_no_deadline_is_never_kept(autojump_clock: trio.testing.MockClock) -> None:
    alarms = Alarms()
    async with trio.open_nursery() as nursery:
        await nursery.start(alarms.run)
        slot = slot_due(math.inf)
        alarms.set(slot)
        gone = weakref.ref(slot)
        del slot
        gc.collect()
        assert gone() is None
        nursery.cancel_scope.cancel()
