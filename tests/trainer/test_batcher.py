"""The batcher: many matches' turns in one forward pass, in an order trio cannot change.

The rollout tests play real iterated prisoner's dilemma matches through ``play_match``
(the learner is the tiny model, its opponent the scripted ``tit-for-tat``); the others
drive a ``Batcher`` over a plain function, so each failure path is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio
import trio.testing

from trainer.batcher import Batcher, ThreadBatcher
from trainer.policy import Policy
from trainer.rollout import MatchPlan, Rollout, SeatPlan, play_rollouts

ROUNDS = 3


@pytest.fixture(scope="module")
def policy(tiny_model_dir: Path) -> Policy:
    return Policy.load(tiny_model_dir)


def plans(count: int) -> list[MatchPlan]:
    """``count`` matches of the learner against tit-for-tat, the learner in either seat."""
    learner, opponent = SeatPlan("learner", "learner"), SeatPlan("bot", "tit-for-tat")
    seatings = ((learner, opponent), (opponent, learner))
    return [MatchPlan(i, "iterated-prisoners-dilemma", 100 + i, seatings[i % 2], {"rounds": ROUNDS}) for i in range(count)]


def learner_actions(rollouts: Sequence[Rollout]) -> list[list[tuple[int, str | None]]]:
    """Per match, the learner's (step, action) of every turn it was asked."""
    return [[(t.step, t.action) for t in r.result.turns if t.seat in r.learner_seats()] for r in rollouts]


@pytest.mark.trio
async def test_sixteen_matches_share_forward_passes(policy: Policy) -> None:
    before = policy.forward_passes
    rollouts = await play_rollouts(plans(16), policy, seed=1, concurrency=16)
    passes = policy.forward_passes - before
    turns = sum(len(actions) for actions in learner_actions(rollouts))
    assert all(r.result.status == "finished" and r.result.reason == "complete" for r in rollouts)
    assert turns == 16 * ROUNDS
    assert passes * 8 <= turns, f"{passes} forward passes for {turns} turns"
    assert sum(len(r.samples) for r in rollouts) == turns


@pytest.mark.trio
async def test_the_same_seed_gives_the_same_actions_whatever_the_concurrency(policy: Policy) -> None:
    first = learner_actions(await play_rollouts(plans(8), policy, seed=5, concurrency=8))
    again = learner_actions(await play_rollouts(plans(8), policy, seed=5, concurrency=3))
    assert first == again
    played = {action for match in first for _, action in match}
    assert played == {"cooperate", "defect"}, "a policy that always plays one move would make this test empty"
    other_seed = learner_actions(await play_rollouts(plans(8), policy, seed=6, concurrency=8))
    assert other_seed != first


@dataclass(frozen=True)
class Ask:
    key: tuple[int, ...]


@pytest.mark.trio
async def test_a_batch_error_reaches_every_waiter_and_the_batcher_goes_on() -> None:
    calls: list[list[Ask]] = []

    def decide(requests: Sequence[Ask]) -> list[int]:
        calls.append(list(requests))
        if len(calls) == 1:
            raise RuntimeError("the model ran out of memory")
        return [request.key[0] * 10 for request in requests]

    batcher: Batcher[Ask, int] = Batcher(decide, max_batch=8)
    errors: list[str] = []

    async def ask(n: int) -> None:
        try:
            await batcher.decide(Ask((n,)))
        except RuntimeError as error:
            errors.append(f"{n}: {error}")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(batcher.run)
        async with trio.open_nursery() as waiters:
            for n in (3, 1, 2):
                waiters.start_soon(ask, n)
        assert sorted(errors) == [f"{n}: the model ran out of memory" for n in (1, 2, 3)]
        assert calls == [[Ask((1,)), Ask((2,)), Ask((3,))]]  # one batch, in key order
        assert await batcher.decide(Ask((4,))) == 40
        nursery.cancel_scope.cancel()
    assert batcher.batches == 2 and batcher.requests == 4


@pytest.mark.trio
async def test_a_cancelled_waiter_takes_its_request_out_of_the_batch() -> None:
    seen: list[list[Ask]] = []

    def decide(requests: Sequence[Ask]) -> list[int]:
        seen.append(list(requests))
        return [0 for _ in requests]

    batcher: Batcher[Ask, int] = Batcher(decide)
    gone = trio.CancelScope()

    async def impatient() -> None:
        with gone:
            await batcher.decide(Ask((1,)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(impatient)
        await trio.testing.wait_all_tasks_blocked()
        gone.cancel()  # its clock ran out before any batch was formed
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(batcher.run)
        assert await batcher.decide(Ask((2,))) == 0
        nursery.cancel_scope.cancel()
    assert gone.cancelled_caught
    assert seen == [[Ask((2,))]]


@pytest.mark.trio
async def test_batches_hold_at_most_max_batch_and_an_idle_program_does_not_wait_out_max_wait() -> None:
    sizes: list[int] = []

    def decide(requests: Sequence[Ask]) -> list[int]:
        sizes.append(len(requests))
        return [request.key[0] for request in requests]

    batcher: Batcher[Ask, int] = Batcher(decide, max_batch=4, max_wait_s=60)
    answers: dict[int, int] = {}

    async def ask(n: int) -> None:
        answers[n] = await batcher.decide(Ask((n,)))

    with trio.fail_after(10):  # a batcher that sat out its 60 s max_wait_s would fail here
        async with trio.open_nursery() as nursery:
            nursery.start_soon(batcher.run)
            async with trio.open_nursery() as waiters:
                for n in range(10):
                    waiters.start_soon(ask, n)
            nursery.cancel_scope.cancel()
    assert answers == {n: n for n in range(10)}
    assert max(sizes) == 4 and sum(sizes) == 10


def test_bad_batch_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_batch >= 1"):
        Batcher(lambda requests: requests, max_batch=0)
    with pytest.raises(ValueError, match="window_s >= 0"):
        ThreadBatcher(lambda requests: requests, window_s=-1)


def test_threads_asking_at_once_share_batches_and_each_gets_its_own_answer() -> None:
    """Twelve threads ask together: far fewer calls than requests, none over max_batch,
    every answer the caller's own; a failing batch fails its waiters only."""
    import threading

    sizes: list[int] = []

    def double(requests: Sequence[Ask]) -> list[int]:
        sizes.append(len(requests))
        if any(r.key == (-1,) for r in requests):
            raise RuntimeError("the model broke")
        return [2 * r.key[0] for r in requests]

    batcher: ThreadBatcher[Ask, int] = ThreadBatcher(double, max_batch=5, window_s=0.05)
    answers: dict[int, int] = {}
    start = threading.Barrier(12)

    def ask(n: int) -> None:
        start.wait()
        answers[n] = batcher.decide(Ask((n,)))

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {n: 2 * n for n in range(12)}
    assert sum(sizes) == 12 and max(sizes) <= 5 and len(sizes) < 12
    with pytest.raises(RuntimeError, match="the model broke"):
        batcher.decide(Ask((-1,)))
    assert batcher.decide(Ask((4,))) == 8  # the batcher goes on
