"""play_match: turns, clocks, retries, forfeits, voids, events and the record."""

from __future__ import annotations

import json
import math
import pickle
import threading
from array import array
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pytest
import trio
import trio.testing

import games
from arena.match import Clock, Forfeits, MatchEvent, outcomes_of, play_match, settled
from arena.seats import LocalSeat, Move, RemoteSeat, SeatForfeit, Turn
from arena.sessions import Alarms, BotSession, Connection
from arena.store import Store
from games.api import Observation
from games.iterated_prisoners_dilemma import IteratedPrisonersDilemma
from games.mini_hanabi import MiniHanabi
from games.tic_tac_toe import TicTacToe


def scripted(actions: Sequence[str | None], name: str = "scripted") -> LocalSeat:
    """A seat that answers the given actions in order (None: a reply with no action)."""
    queue = list(actions)

    async def policy(turn: Turn) -> Move:
        return Move(action=queue.pop(0), raw="reply")

    return LocalSeat(policy, name=name)


def first_legal(name: str = "first") -> LocalSeat:
    async def policy(turn: Turn) -> str:
        assert turn.legal_actions
        return turn.legal_actions[0]

    return LocalSeat(policy, name=name)


@pytest.mark.trio
async def test_a_complete_match_records_returns_outcomes_and_the_action_log() -> None:
    x = scripted(["a1", "a2", "a3"], "x")
    o = scripted(["b1", "b2"], "o")
    result = await play_match(TicTacToe, [x, o], seed=5, match_id="m1")
    assert result.status == "finished" and result.reason == "complete"
    assert result.returns == [1.0, -1.0]
    assert result.outcomes == ["win", "loss"] and result.ranks == [1, 2]
    assert result.actions == [{0: "a1"}, {1: "b1"}, {0: "a2"}, {1: "b2"}, {0: "a3"}]
    assert [(t.seat, t.step, t.action, t.accepted) for t in result.turns][-1] == (0, 4, "a3", True)
    assert result.turns[-1].reward == 1.0 and result.turns[-2].reward == -1.0
    assert result.players == ["x", "o"] and result.match_id == "m1" and result.seed == 5
    json.dumps(result.to_dict())


@pytest.mark.trio
@pytest.mark.parametrize("threaded", [True, False])
async def test_a_plain_function_handing_on_to_an_async_policy_is_awaited(threaded: bool) -> None:
    """``lambda turn: policy(turn)`` looks synchronous: run in a worker thread, its coroutine was
    refused by trio (TypeError) and the seat forfeited for a crash (found by a QA helper)."""

    async def policy(turn: Turn) -> str:
        await trio.sleep(0)
        assert turn.legal_actions
        return turn.legal_actions[0]

    seats = [LocalSeat(lambda turn: policy(turn), name=name, threaded=threaded) for name in ("x", "o")]
    result = await play_match(TicTacToe, seats, seed=5)
    assert (result.status, result.reason, result.forfeit_seat) == ("finished", "complete", None)


@pytest.mark.trio
async def test_an_accepted_variant_of_an_action_is_recorded_in_its_canonical_form() -> None:
    """ "B2" was stored as sent, outside its own turn's legal actions, while the match played b2."""
    result = await play_match(TicTacToe, [scripted(["A1", "A2", " a3 "], "x"), scripted(["zz", "B1", "b2"], "o")], seed=5)
    assert [(t.action, t.accepted) for t in result.turns] == [
        ("a1", True),
        ("zz", False),
        ("b1", True),
        ("a2", True),
        ("b2", True),
        ("a3", True),
    ]
    assert all(t.action in (t.legal_actions or ()) for t in result.turns if t.accepted)


@pytest.mark.trio
async def test_log_probs_are_kept_as_doubles_and_given_back_as_lists() -> None:
    async def with_logprobs(turn: Turn) -> Move:
        assert turn.legal_actions
        return Move(action=turn.legal_actions[0], logprobs=[-0.5, 0, -math.inf])

    result = await play_match(TicTacToe, [LocalSeat(with_logprobs), first_legal()], seed=5)
    kept = result.turns[0].logprobs
    assert isinstance(kept, array) and kept.itemsize == 8 and list(kept) == [-0.5, 0.0, -math.inf]
    assert result.to_dict()["turns"][0]["logprobs"] == [-0.5, 0.0, -math.inf]


@pytest.mark.trio
async def test_a_result_crosses_to_the_store_writer_whole() -> None:
    """It goes pickled, with its turns as rows of values (``MatchResult.__reduce__``)."""

    async def with_extras(turn: Turn) -> Move:
        assert turn.legal_actions
        return Move(action=turn.legal_actions[-1], raw="r", prompt="p", tokens_in=3, tokens_out=1, cost=0.5, logprobs=[-1.0])

    result = await play_match(TicTacToe, [LocalSeat(with_extras), first_legal()], seed=5)
    result.turns[1].rejection, result.turns[1].reward = "not there", -1.0  # every field carried, changed ones too
    copied = pickle.loads(pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
    assert copied == result and copied.turns[0].logprobs == array("d", [-1.0])
    assert all(type(turn) is type(result.turns[0]) for turn in copied.turns)


@pytest.mark.trio
async def test_a_match_that_reaches_max_steps_without_ending_is_void_and_asks_no_further_turn() -> None:
    """Pig never ends when nobody holds: a tournament of two such bots never finished."""
    asked: list[int] = []

    async def always_roll(turn: Turn) -> str:
        asked.append(turn.step)
        return "roll"

    seats = [LocalSeat(always_roll, name=name) for name in ("a", "b")]
    result = await play_match(games.get("pig"), seats, seed=3, max_steps=25)
    assert (result.status, result.reason, result.detail) == ("void", "void", "the match reached 25 steps without ending")
    assert result.returns == [0.0, 0.0] and result.outcomes == ["void", "void"]
    assert len(result.actions) == len(result.turns) == 25 and max(asked) == 24


@pytest.mark.trio
async def test_illegal_answers_are_retried_with_the_reason_then_accepted() -> None:
    reasons: list[str | None] = []

    async def picky(turn: Turn) -> str:
        reasons.append(turn.retry_reason)
        assert turn.legal_actions
        return turn.legal_actions[0] if turn.attempt == 2 else "z9"

    result = await play_match(TicTacToe, [LocalSeat(picky), first_legal()], max_retries=2, clock=Clock(move_ms=5_000))
    assert result.reason == "complete"
    assert reasons[0] is None
    assert reasons[1] == reasons[2] == "'z9' is not a cell; cells are a1 to c3 (column letter, then row)"
    first_three = result.turns[:3]
    assert [t.accepted for t in first_three] == [False, False, True]
    assert [t.attempt for t in first_three] == [0, 1, 2]
    assert first_three[0].rejection is not None and "not a cell" in first_three[0].rejection


@pytest.mark.trio
async def test_the_reason_for_refusing_a_huge_action_is_cut_short() -> None:
    reasons: list[str | None] = []

    async def rambling(turn: Turn) -> str:
        reasons.append(turn.retry_reason)
        assert turn.legal_actions
        return turn.legal_actions[0] if turn.attempt else "z" * 100_000

    result = await play_match(TicTacToe, [LocalSeat(rambling), first_legal()], clock=Clock(move_ms=5_000))
    said = reasons[1]
    assert said is not None and said == result.turns[0].rejection
    assert said.startswith("'zzz") and said.endswith("… (cut; 100062 characters in all)") and len(said) < 550


@pytest.mark.trio
async def test_k_plus_one_illegal_answers_forfeit_and_record_the_reason() -> None:
    result = await play_match(TicTacToe, [first_legal(), scripted(["a1", "a1", "a1"])], max_retries=2)
    assert result.reason == "illegal" and result.forfeit_seat == 1
    assert "3 illegal answers" in result.detail and "already taken" in result.detail
    assert result.returns == [1.0, -1.0]
    assert result.outcomes == ["win", "forfeit"]
    assert [t.accepted for t in result.turns if t.seat == 1] == [False, False, False]
    no_retry = await play_match(TicTacToe, [first_legal(), scripted(["a1"])], max_retries=0)
    assert no_retry.detail.startswith("1 illegal answer; last:")


@pytest.mark.trio
async def test_a_reply_without_an_action_counts_as_a_format_error_and_a_retry() -> None:
    result = await play_match(TicTacToe, [scripted([None, "b2", "a1", "c1"]), scripted(["a2", "a3", "c3"])], max_retries=1)
    record = result.turns[0]
    assert record.format_error and not record.accepted and record.rejection is not None
    # no bracket advice: `action` is the action itself, and "[b2]" would be refused (found by a QA helper)
    assert record.rejection == "no action found in the reply: answer with an action"
    assert result.turns[1].accepted and result.turns[1].action == "b2"


@pytest.mark.trio
async def test_a_seat_that_sleeps_past_its_deadline_forfeits_on_time(autojump_clock: trio.testing.MockClock) -> None:
    async def sleeper(turn: Turn) -> str:
        await trio.sleep(60)
        return "b2"

    result = await play_match(TicTacToe, [first_legal(), LocalSeat(sleeper)], clock=Clock(move_ms=1_000, grace_ms=500))
    assert result.reason == "timeout" and result.forfeit_seat == 1
    assert "1000 ms" in result.detail
    assert result.returns == [1.0, -1.0] and result.outcomes == ["win", "forfeit"]


@pytest.mark.trio
async def test_a_move_read_as_the_deadline_passes_is_stale_not_lost(autojump_clock: trio.testing.MockClock) -> None:
    """The deadline cancels the waiting seat, which closes its slot only once it runs: a move
    read in between was taken into the dead slot, counted, and never answered (found by QA).
    Which of the two runs first at the deadline is the scheduler's draw: played 20 times."""
    for _ in range(20):
        session = BotSession("bob", grace_s=5.0)
        session.attach(Connection(trio.open_memory_channel[object](100)[0]))
        offered: list[str | None] = []

        async def late_move(session: BotSession, offered: list[str | None]) -> None:
            while ("m1", 1) not in session.slots:
                await trio.sleep(0.001)
            slot = session.slots[("m1", 1)]
            await trio.sleep_until(slot.deadline)
            offered.append(session.offer_move("m1", 1, slot.step, slot.attempt, Move("b2")))

        async with trio.open_nursery() as nursery:
            alarms = Alarms()
            nursery.start_soon(alarms.run)
            nursery.start_soon(late_move, session, offered)
            seats = [first_legal(), RemoteSeat(session, alarms, "m1", 1)]
            result = await play_match(TicTacToe, seats, clock=Clock(move_ms=1_000, grace_ms=0), match_id="m1")
            nursery.cancel_scope.cancel()
        assert offered == ["stale"] and result.reason == "timeout" and result.forfeit_seat == 1


@pytest.mark.trio
async def test_an_answer_given_in_time_counts_though_the_deadline_passes_before_its_seat_runs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The deadline's cancellation then finds the seat woken already, and trio does not deliver
    it: the answer is taken, and the match goes on. A clock kept for the whole match (one cancel
    scope, its deadline set for each answer) stayed cancelled, and the seat forfeited on time
    at its next checkpoint, its move recorded as played."""
    given = trio.Event()

    async def on_cue(turn: Turn) -> str:
        if turn.step == 1:
            await given.wait()
        assert turn.legal_actions
        return turn.legal_actions[0]

    async def cue() -> None:
        await trio.sleep(0.999)  # seat 1 was asked at 0, on a clock of 1 s without grace
        given.set()
        autojump_clock.jump(0.01)  # past its deadline before it runs again

    async with trio.open_nursery() as nursery:
        nursery.start_soon(cue)
        result = await play_match(TicTacToe, [first_legal(), LocalSeat(on_cue)], clock=Clock(move_ms=1_000, grace_ms=0))
    assert result.turns[1].accepted and result.turns[1].think_ms > 1_000
    assert (result.status, result.reason, result.forfeit_seat) == ("finished", "complete", None)


@pytest.mark.trio
async def test_a_lone_surrogate_in_a_policys_reply_is_stored_as_a_replacement_character(tmp_path: Path) -> None:
    """An OpenAI-compatible endpoint's reply held "\\ud800": the match was played, then could
    not be stored, and was lost (found by QA)."""

    async def odd(turn: Turn) -> Move:
        assert turn.legal_actions
        return Move(action=turn.legal_actions[0], raw="I play \ud800 \ud83d\ude00", prompt="\udc80")

    result = await play_match(TicTacToe, [LocalSeat(odd), first_legal()])
    store = Store(tmp_path / "arena.db")
    store.finish_match(result)
    record = store.match(result.match_id)
    assert record is not None and record["turns"][0]["raw"] == "I play \ufffd \U0001f600"
    assert record["turns"][0]["prompt"] == "\ufffd"


def test_a_policy_call_the_clock_abandoned_is_counted_until_it_returns() -> None:
    """The command waits for it before exiting: a thread left inside torch as the interpreter
    shut down aborted `arena tournament run` with status 134 when its last match was void (found by QA)."""
    import time

    from arena.seats import POLICY_THREADS

    def slow(turn: Turn) -> str:
        time.sleep(0.5)
        assert turn.legal_actions
        return turn.legal_actions[0]

    result = trio.run(lambda: play_match(TicTacToe, [LocalSeat(slow), first_legal()], clock=Clock(move_ms=10, grace_ms=0)))
    assert result.reason == "timeout"
    assert not POLICY_THREADS.wait(0.0)  # abandoned, still answering
    assert POLICY_THREADS.wait(5.0)


async def stuck(turn: Turn) -> str:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


@pytest.mark.trio
async def test_seats_of_a_simultaneous_step_out_of_time_at_once_void_the_match(autojump_clock: trio.testing.MockClock) -> None:
    """One of them was scored the winner, whichever the scheduler ran first, and rated so."""
    game = games.get("iterated-rock-paper-scissors")
    result = await play_match(game, [LocalSeat(stuck), LocalSeat(stuck)], clock=Clock(move_ms=1_000, grace_ms=0))
    assert (result.status, result.reason, result.forfeit_seat) == ("void", "void", None)
    assert result.outcomes == ["void", "void"] and result.returns == [0.0, 0.0]
    assert result.detail == (
        "seats 0, 1 failed at once: seat 0 timeout: no answer within 1000 ms; seat 1 timeout: no answer within 1000 ms"
    )


@pytest.mark.trio
async def test_the_seat_of_a_simultaneous_step_out_of_time_first_forfeits_alone(autojump_clock: trio.testing.MockClock) -> None:
    game = games.get("iterated-rock-paper-scissors")
    clock = Clock(move_ms=1_000, grace_ms=0, bank_ms=500)
    first = await play_match(game, [LocalSeat(stuck), LocalSeat(stuck)], clock=clock)  # equal banks: at once
    assert first.status == "void"
    result = await play_match(game, [first_legal(), LocalSeat(stuck)], clock=clock)
    assert (result.status, result.reason, result.forfeit_seat, result.outcomes) == ("finished", "timeout", 1, ["win", "forfeit"])


@pytest.mark.trio
async def test_a_timeout_after_an_illegal_answer_names_the_seats_whole_budget(autojump_clock: trio.testing.MockClock) -> None:
    async def wrong_then_stuck(turn: Turn) -> str:
        if turn.attempt:
            await trio.sleep_forever()
        await trio.sleep(0.6)
        return "z9"

    result = await play_match(TicTacToe, [LocalSeat(wrong_then_stuck), first_legal()], clock=Clock(move_ms=1_000, grace_ms=0))
    assert result.reason == "timeout" and result.forfeit_seat == 0
    # the time it had at the step, not what was left at its retry; "no answer" after an illegal one was untrue (found by QA)
    assert result.detail == "no legal answer within 1000 ms"


@pytest.mark.trio
async def test_the_grace_period_saves_a_move_just_past_the_budget(autojump_clock: trio.testing.MockClock) -> None:
    async def late(turn: Turn) -> str:
        await trio.sleep(1.2)
        assert turn.legal_actions
        return turn.legal_actions[0]

    result = await play_match(TicTacToe, [LocalSeat(late), first_legal()], clock=Clock(move_ms=1_000, grace_ms=500))
    assert result.reason == "complete"


@pytest.mark.trio
async def test_the_bank_pays_for_slow_moves_until_it_runs_out(autojump_clock: trio.testing.MockClock) -> None:
    deadlines: list[int | None] = []

    async def slow(turn: Turn) -> str:
        deadlines.append(turn.deadline_ms)
        await trio.sleep(2.0)
        assert turn.legal_actions
        return turn.legal_actions[0]

    result = await play_match(TicTacToe, [LocalSeat(slow), first_legal()], clock=Clock(move_ms=1_000, grace_ms=0, bank_ms=2_500))
    # Each move spends 1 s beyond the budget: the bank goes 2500 -> 1500 -> 500, then the third move times out.
    assert deadlines[0] == 3_500 and deadlines[1] == 2_500 and deadlines[2] == 1_500
    assert result.reason == "timeout" and result.forfeit_seat == 0


@pytest.mark.trio
async def test_the_bank_is_charged_the_overrun_to_the_nearest_ms(autojump_clock: trio.testing.MockClock) -> None:
    """400 ms of bank less an overrun of 202.3 ms left 197.7, said as 198: rounded down it was
    197, a charge of 203 (found by QA)."""
    clocks: list[tuple[int, ...]] = []

    async def slow_once(turn: Turn) -> str:
        clocks.append(turn.clocks)
        if len(clocks) == 1:
            await trio.sleep(0.5023)
        assert turn.legal_actions
        return turn.legal_actions[0]

    await play_match(TicTacToe, [LocalSeat(slow_once), first_legal()], clock=Clock(move_ms=300, grace_ms=0, bank_ms=400))
    assert clocks[1][0] == 198


@pytest.mark.trio
async def test_a_bot_past_its_reconnection_window_has_0_ms_left_not_less() -> None:
    session = BotSession("gone", grace_s=0.0)
    session.disconnected_at = trio.current_time() - 1.0
    assert session.grace_left_ms() == 0


@pytest.mark.trio
async def test_every_turn_shows_every_seats_bank_as_the_step_began(autojump_clock: trio.testing.MockClock) -> None:
    seen: list[tuple[int, int, tuple[int, ...]]] = []

    def recording(pause_s: float) -> LocalSeat:
        async def policy(turn: Turn) -> str:
            seen.append((turn.seat, turn.attempt, turn.clocks))
            await trio.sleep(pause_s)
            assert turn.legal_actions
            return turn.legal_actions[0] if turn.attempt else "z9"  # one illegal answer first, every step

        return LocalSeat(policy)

    await play_match(TicTacToe, [recording(0.6), recording(0.1)], clock=Clock(move_ms=1_000, bank_ms=3_000))
    # Seat 0 spends 1.2 s a step (two answers of 0.6 s): 200 ms beyond move_ms come out of its bank
    # when its move is accepted; seat 1 stays within move_ms. A retry shows the bank as the step began.
    assert seen[:8] == [
        (0, 0, (3_000, 3_000)),
        (0, 1, (3_000, 3_000)),
        (1, 0, (2_800, 3_000)),
        (1, 1, (2_800, 3_000)),
        (0, 0, (2_800, 3_000)),
        (0, 1, (2_800, 3_000)),
        (1, 0, (2_600, 3_000)),
        (1, 1, (2_600, 3_000)),
    ]


@pytest.mark.trio
async def test_a_synchronous_policy_stuck_in_a_thread_is_abandoned_by_the_clock() -> None:
    stop = threading.Event()

    def stuck(turn: Turn) -> str:
        stop.wait(10)
        return "b2"

    with trio.fail_after(5):
        result = await play_match(TicTacToe, [LocalSeat(stuck), first_legal()], clock=Clock(move_ms=100, grace_ms=50))
    stop.set()
    assert result.reason == "timeout" and result.forfeit_seat == 0


@pytest.mark.trio
async def test_a_crashing_policy_forfeits_with_the_error() -> None:
    async def broken(turn: Turn) -> str:
        raise ZeroDivisionError("oops")

    result = await play_match(TicTacToe, [first_legal(), LocalSeat(broken)])
    assert result.reason == "crash" and result.forfeit_seat == 1 and "ZeroDivisionError: oops" in result.detail


@pytest.mark.trio
async def test_a_seat_that_resigns_forfeits_with_its_reason() -> None:
    async def resigner(turn: Turn) -> str:
        raise SeatForfeit("resign", "lost cause")

    result = await play_match(TicTacToe, [LocalSeat(resigner), first_legal()])
    assert (result.reason, result.detail, result.forfeit_seat) == ("resign", "lost cause", 0)
    assert result.outcomes == ["forfeit", "win"]


class BrokenTicTacToe(TicTacToe):
    """A game whose rules crash mid-match: the engine's fault, not a seat's."""

    def _apply(self, actions):  # type: ignore[no-untyped-def]
        if self.step_count == 2:
            raise RuntimeError("rules bug")
        return super()._apply(actions)


@pytest.mark.trio
async def test_an_engine_fault_voids_the_match_and_scores_nobody() -> None:
    result = await play_match(BrokenTicTacToe, [first_legal(), first_legal()])
    assert result.status == "void" and result.reason == "void" and "rules bug" in result.detail
    assert result.outcomes == ["void", "void"] and result.returns == [0.0, 0.0]


class OverflowingTicTacToe(TicTacToe):
    """A game whose payoffs overflow: its returns are not finite numbers."""

    def returns(self) -> Sequence[float]:
        return [float("-inf"), float("nan")]


@pytest.mark.trio
async def test_returns_that_are_not_finite_void_the_match_as_an_engine_fault() -> None:
    """Stored, an infinite return made every later leaderboard of all games fail (HTTP 500)."""
    result = await play_match(OverflowingTicTacToe, [first_legal(), first_legal()])
    assert result.status == "void" and result.forfeit_seat is None and result.returns == [0.0, 0.0]
    assert result.detail.startswith("engine fault: returns that are not finite numbers: [-inf, nan]")


class SetupBugTicTacToe(TicTacToe):
    """A plugin's bug in ``_setup``: no match can be laid out."""

    def _setup(self) -> None:
        raise RuntimeError("boom in _setup")


@pytest.mark.trio
async def test_a_game_that_cannot_set_up_gives_a_void_result_naming_it_not_an_exception() -> None:
    """Raised, it ended an in-process tournament with a traceback, told the CLI only "boom in
    _setup", and a server voided the match as its own fault (found by a QA helper)."""
    events: list[MatchEvent] = []
    ended: list[dict[str, object]] = []

    class Told(LocalSeat):
        async def end(self, result: dict[str, object]) -> None:  # type: ignore[override]
            ended.append(result)

    seats = [Told(lambda turn: turn.legal_actions[0], name=name) for name in "ab"]
    result = await play_match(SetupBugTicTacToe, seats, seed=7, match_id="m1", on_event=events.append)
    assert (result.status, result.reason, result.match_id, result.seed, result.players) == ("void", "void", "m1", 7, ["a", "b"])
    assert result.detail == "engine fault: tic-tac-toe could not set up the match: RuntimeError: boom in _setup"
    assert result.engine_fault and result.outcomes == ["void", "void"] and result.returns == [0.0, 0.0]
    assert [(event.kind, event.data["result"]) for event in events] == [("end", result)]
    assert [told["status"] for told in ended] == ["void", "void"]


class ViewBugTicTacToe(TicTacToe):
    """A plugin's bug in ``full_view``, met once the match is over."""

    def full_view(self) -> dict[str, object]:
        raise RuntimeError("boom in full_view")


class SetViewTicTacToe(TicTacToe):
    """A final view no encoding carries (a set)."""

    def full_view(self) -> dict[str, object]:
        return {"text": "", "cells": {1, 2}}


@pytest.mark.trio
@pytest.mark.parametrize(
    ("game", "said"), [(ViewBugTicTacToe, "RuntimeError: boom in full_view"), (SetViewTicTacToe, "TypeError")]
)
async def test_a_final_view_the_game_cannot_give_voids_the_match_instead_of_raising(game: type[TicTacToe], said: str) -> None:
    """Raised out of play_match, it killed an in-process tournament on every run and lost the
    match played with ``arena play --db`` (found by a QA helper)."""
    result = await play_match(game, [first_legal(), first_legal()])
    assert result.status == "void" and result.detail.startswith(f"engine fault: {said}") and result.final_view == {}
    assert len(result.turns) >= 5  # the moves played are kept


class BrokenEverywhereTicTacToe(TicTacToe):
    """A step that raises leaves a state whose final view fails too."""

    def _apply(self, actions):  # type: ignore[no-untyped-def]
        if self.step_count == 2:
            raise RuntimeError("root cause: boom in step")
        return super()._apply(actions)

    def full_view(self) -> dict[str, object]:
        raise KeyError("board")


@pytest.mark.trio
async def test_a_void_match_keeps_its_first_cause_when_its_final_view_fails_too() -> None:
    """The view's KeyError stood for the step's error in the detail (found by a QA helper reviewing the change)."""
    result = await play_match(BrokenEverywhereTicTacToe, [first_legal(), first_legal()])
    assert result.status == "void" and result.detail == "engine fault: RuntimeError: root cause: boom in step"


@dataclass(frozen=True)
class _ScaledConfig(TicTacToe.Config):
    scale: float = 1.0

    def return_bounds(self) -> tuple[float, float]:
        return (-1 / self.scale, 1 / self.scale)


class ScaledTicTacToe(TicTacToe):
    """Bounds that raise under one config (scale 0), which the registry's check of the default does not meet."""

    spec = replace(TicTacToe.spec, name="scaled-tic-tac-toe", default_config=_ScaledConfig())
    Config = _ScaledConfig


@pytest.mark.trio
async def test_return_bounds_that_raise_for_the_matchs_config_void_it_instead_of_raising() -> None:
    """It escaped play_match once the match was played out: a tournament died, the server
    voided it as its own fault (found by a QA helper reviewing the change)."""
    result = await play_match(ScaledTicTacToe, [first_legal(), first_legal()], config={"scale": 0})
    assert result.status == "void" and result.detail == "engine fault: ZeroDivisionError: float division by zero"


@pytest.mark.trio
async def test_a_game_that_cannot_set_up_still_refuses_a_wrong_number_of_seats() -> None:
    with pytest.raises(ValueError, match="tic-tac-toe with this config needs 2 seats, got 3"):
        await play_match(SetupBugTicTacToe, [first_legal(), first_legal(), first_legal()])


class OutOfBoundsTicTacToe(TicTacToe):
    """A game whose returns pass the bounds it declares (-1 to 1)."""

    def returns(self) -> Sequence[float]:
        return [100.0, -100.0]


@pytest.mark.trio
async def test_returns_outside_the_games_bounds_void_a_complete_match() -> None:
    """The ratings and the trainer scale returns by the bounds: recorded, the match was rated."""
    result = await play_match(OutOfBoundsTicTacToe, [first_legal(), first_legal()])
    assert result.status == "void" and result.returns == [0.0, 0.0]
    assert result.detail == "engine fault: returns [100.0, -100.0] outside the game's bounds [-1, 1] (its Config.return_bounds)"


class SlowTicTacToe(TicTacToe):
    """A game whose observation takes 4 s (of a mock clock) to compute, once."""

    clock: trio.testing.MockClock | None = None

    def observe(self, seat: int) -> Observation:
        if SlowTicTacToe.clock is not None:
            SlowTicTacToe.clock.jump(4)
            SlowTicTacToe.clock = None
        return super().observe(seat)


@pytest.mark.trio
async def test_the_time_a_game_takes_to_make_a_turn_is_not_charged_to_the_seat(autojump_clock: trio.testing.MockClock) -> None:
    """The step's clock started before the game computed the observation: a seat of a slow
    game lost on time for the game's own computing (found by a QA helper)."""

    async def thinking(turn: Turn) -> str:
        await trio.sleep(0.01)
        assert turn.legal_actions
        return turn.legal_actions[0]

    SlowTicTacToe.clock = autojump_clock
    seats = [LocalSeat(thinking), LocalSeat(thinking)]
    result = await play_match(SlowTicTacToe, seats, clock=Clock(move_ms=1_500, bank_ms=0, grace_ms=100))
    assert (result.status, result.reason) == ("finished", "complete"), result.detail


class NumberedTicTacToe(TicTacToe):
    """A plugin's bug: legal actions listed as cell numbers, not strings."""

    def legal_actions(self, seat: int) -> Sequence[str]:
        return [index for index, _ in enumerate(super().legal_actions(seat))]  # type: ignore[misc]


@pytest.mark.trio
async def test_legal_actions_that_are_not_strings_void_the_match_instead_of_forfeiting_the_seat() -> None:
    result = await play_match(NumberedTicTacToe, [first_legal(), first_legal()])
    assert result.status == "void" and result.forfeit_seat is None, result.detail
    assert "legal_actions(0) must list strings" in result.detail


class NumberedDilemma(IteratedPrisonersDilemma):
    """The same bug in a game whose seats move at once."""

    def legal_actions(self, seat: int) -> Sequence[str]:
        return [index for index, _ in enumerate(super().legal_actions(seat))]  # type: ignore[misc]


@pytest.mark.trio
async def test_a_fault_every_seat_of_a_simultaneous_step_meets_is_said_as_itself() -> None:
    """It was 'ExceptionGroup: Exceptions from Trio nursery (2 sub-exceptions)' (found by a QA helper)."""
    result = await play_match(NumberedDilemma, [first_legal(), first_legal()])
    assert result.status == "void" and "must list strings" in result.detail, result.detail


@pytest.mark.trio
@pytest.mark.parametrize(
    "message",
    ["y" * 1000, '"' * 1000, "\U000e0041" * 83 + "yyyy"],
    ids=["letters", "quote-marks", "invisible"],
)
async def test_the_longest_talk_a_built_in_config_allows_stays_under_the_bound(message: str) -> None:
    """Eight players talking 1,000 characters a round for 20 rounds show some 27 million
    characters: a bound of 20 million voided this legal match as the game's fault (found by a
    QA helper reviewing the bound). Quote marks show escaped, as two characters each; an
    invisible character shows as its 12-character escape, and counted as one it voided the
    match again (found by a QA helper): it counts as its escape now, 83 of them and 4 letters
    filling a message."""

    def talk_in_full(turn: Turn) -> str:
        return message if turn.legal_actions is None else turn.legal_actions[0]

    seats = [LocalSeat(talk_in_full, name=f"t{seat}", threaded=False) for seat in range(8)]
    config = {"players": 8, "rounds": 20, "cheap_talk": True, "message_chars": 1000}
    result = await play_match(games.get("public-goods"), seats, config=config)
    assert result.status == "finished" and result.forfeit_seat is None, result.detail


class RetellingDilemma(IteratedPrisonersDilemma):
    """A plugin's game that retells every round, whatever the history window."""

    def observe(self, seat: int) -> Observation:
        seen = super().observe(seat)
        return Observation("x" * 1000 * self.step_count + seen.text, seen.data)


@pytest.mark.trio
async def test_a_match_whose_observations_grow_past_the_bound_is_void(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept with every turn, a retold history grew a server by 25 MB a second (found by a QA helper)."""
    from arena import match

    monkeypatch.setattr(match, "MAX_SHOWN_CHARS", 100_000)
    result = await play_match(RetellingDilemma, [first_legal(), first_legal()], config={"rounds": 100})
    assert result.status == "void" and result.forfeit_seat is None
    assert result.detail.startswith(
        "engine fault: GameError: iterated-prisoners-dilemma: the observations of this match passed 100,000"
    )
    assert len(result.actions) < 20


@pytest.mark.trio
async def test_simultaneous_seats_are_asked_concurrently() -> None:
    # Each seat waits for the other to have been asked: asking one after the other would deadlock.
    asked = [trio.Event(), trio.Event()]

    def waiting(seat: int) -> LocalSeat:
        async def policy(turn: Turn) -> str:
            asked[seat].set()
            await asked[1 - seat].wait()
            return "cooperate"

        return LocalSeat(policy)

    with trio.fail_after(5):
        result = await play_match(IteratedPrisonersDilemma, [waiting(0), waiting(1)], config={"rounds": 1})
    assert result.reason == "complete" and result.returns == [3.0, 3.0]


@pytest.mark.trio
async def test_a_forfeit_in_a_simultaneous_step_cancels_the_other_seat(autojump_clock: trio.testing.MockClock) -> None:
    cancelled = []

    async def patient(turn: Turn) -> str:
        try:
            await trio.sleep(5)
        except trio.Cancelled:
            cancelled.append(turn.seat)
            raise
        return "defect"

    async def crashes(turn: Turn) -> str:
        raise ValueError("bad bot")

    result = await play_match(IteratedPrisonersDilemma, [LocalSeat(patient), LocalSeat(crashes)], config={"rounds": 3})
    assert result.reason == "crash" and result.forfeit_seat == 1 and cancelled == [0]
    # not zero-sum: the forfeiter gets the minimum return, the other keeps what it had
    assert result.returns == [0.0, 0.0] and result.outcomes == ["ranked", "forfeit"]


@pytest.mark.trio
async def test_per_round_rewards_belong_to_each_seats_last_turn() -> None:
    moves = {0: ["cooperate", "defect"], 1: ["cooperate", "cooperate"]}

    def seat(s: int) -> LocalSeat:
        async def policy(turn: Turn) -> str:
            return moves[s][turn.step]

        return LocalSeat(policy)

    result = await play_match(IteratedPrisonersDilemma, [seat(0), seat(1)], config={"rounds": 2})
    rewards = {(t.seat, t.step): t.reward for t in result.turns}
    assert rewards == {(0, 0): 3.0, (1, 0): 3.0, (0, 1): 5.0, (1, 1): 0.0}
    assert result.returns == [8.0, 3.0] and result.ranks == [1, 2]


@pytest.mark.trio
async def test_a_forfeit_in_a_team_game_costs_the_whole_team() -> None:
    async def resigner(turn: Turn) -> str:
        raise SeatForfeit("resign")

    result = await play_match(MiniHanabi, [LocalSeat(resigner), first_legal()])
    assert result.returns == [0.0, 0.0] and result.outcomes == ["forfeit", "ranked"] and result.ranks == [1, 1]


@pytest.mark.trio
async def test_a_forfeit_before_anyone_scored_ranks_the_forfeiter_last() -> None:
    """The forfeiter's minimum return (0 in the prisoner's dilemma) tied with the 0 of a player
    who had not scored yet: the record ranked both first, unlike the ratings."""

    async def resigner(turn: Turn) -> str:
        raise SeatForfeit("resign")

    result = await play_match(IteratedPrisonersDilemma, [LocalSeat(resigner), first_legal()], config={"rounds": 3})
    assert result.returns == [0.0, 0.0] and result.outcomes == ["forfeit", "ranked"] and result.ranks == [2, 1]


@pytest.mark.trio
async def test_a_forfeit_never_scores_above_the_seats_that_stayed() -> None:
    """Public goods pays every seat at least 20 over a whole match, its minimum return, and 0
    before the first round: a seat that gave up at once got 20 and the others 0, so crashing
    paid in the mean-return column (found by a QA helper)."""

    async def resigner(turn: Turn) -> str:
        raise SeatForfeit("resign")

    seats = [LocalSeat(resigner), first_legal(), first_legal(), first_legal()]
    result = await play_match(games.get("public-goods"), seats)
    assert games.get("public-goods").spec.min_return == 20.0
    assert result.forfeit_seat == 0 and result.returns == [0.0, 0.0, 0.0, 0.0] and result.ranks == [4, 1, 1, 1]


@pytest.mark.trio
async def test_events_cover_the_start_steps_rejections_and_the_end_in_order() -> None:
    events: list[MatchEvent] = []
    result = await play_match(TicTacToe, [scripted(["a1", "q", "a2", "a3"]), scripted(["b1", "b2"])], on_event=events.append)
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("step") == len(result.actions) == 5
    assert kinds.count("rejected") == 1
    assert len(result.turns) == 6
    assert all(e.state is events[0].state for e in events)
    attempts = [e.data["attempts"] for e in events if e.kind == "step"]
    assert attempts == [{0: 0}, {1: 0}, {0: 1}, {1: 0}, {0: 0}]  # "q" was rejected, a2 accepted at attempt 1
    assert events[-1].data["result"] is result


@pytest.mark.trio
async def test_async_event_handlers_are_awaited() -> None:
    seen: list[str] = []

    async def handler(event: MatchEvent) -> None:
        await trio.sleep(0)
        seen.append(event.kind)

    await play_match(TicTacToe, [scripted(["a1", "a2", "a3"]), scripted(["b1", "b2"])], on_event=handler)
    assert seen[0] == "start" and seen[-1] == "end"


@pytest.mark.trio
async def test_a_wrong_seat_count_is_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="needs 2 seats, got 1"):
        await play_match(TicTacToe, [first_legal()])


@pytest.mark.parametrize(
    ("game", "returns", "words", "ranks"),
    [
        pytest.param("public-goods", [6.6, 6.6000000000000005, 3.0], ["ranked"] * 3, [1, 1, 3], id="ranked"),
        pytest.param("kuhn-poker", [0.30000000000000004, 0.3], ["draw", "draw"], [1, 1], id="zero-sum"),
        pytest.param("kuhn-poker", [1.0, -1.0], ["win", "loss"], [1, 2], id="zero-sum decided"),
    ],
)
def test_returns_equal_but_for_float_noise_share_a_rank(
    game: str, returns: list[float], words: list[str], ranks: list[int]
) -> None:
    """One payoff summed in two orders must not rank one seat above the other: the stored ranks
    and outcomes read a match as the ratings do."""
    assert outcomes_of(games.get(game), returns, None) == (words, ranks)


@pytest.mark.trio
async def test_a_seat_that_gives_up_while_another_is_asked_forfeits_there_and_then() -> None:
    forfeits = Forfeits()
    asked: list[int] = []

    async def thinks_for_ever(turn: Turn) -> str:
        asked.append(turn.seat)
        if turn.seat == 1:
            forfeits.give_up(0, SeatForfeit("resign", "x resigned: bored"))  # as the server does from another task
            await trio.sleep_forever()
        return turn.legal_actions[0]

    seats = [LocalSeat(thinks_for_ever, name=name) for name in ("x", "o")]
    with trio.fail_after(5):
        result = await play_match(TicTacToe, seats, clock=Clock(move_ms=60_000), forfeits=forfeits)
    assert (result.reason, result.forfeit_seat, result.detail) == ("resign", 0, "x resigned: bored")
    assert result.outcomes == ["forfeit", "win"] and asked == [0, 1]
    assert [(turn.seat, turn.accepted) for turn in result.turns] == [(0, True)]  # the turn it stopped is not one
    forfeits = Forfeits()
    forfeits.give_up(1, SeatForfeit("resign", "o resigned"))  # before the first step: no seat is asked
    result = await play_match(TicTacToe, seats, forfeits=forfeits)
    assert (result.reason, result.forfeit_seat, result.turns, asked) == ("resign", 1, [], [0, 1])  # nobody asked


class NoisyDilemma(IteratedPrisonersDilemma):
    """Returns summed in floating point: equal, but for their last bit."""

    def returns(self) -> list[float]:
        return [0.1 + 0.2, 0.3]


@pytest.mark.trio
async def test_returns_that_differ_only_by_float_noise_tie() -> None:
    """Public goods returned 67.6 and 67.60000000000001 for the same score (found by a QA helper)."""
    assert 0.1 + 0.2 != 0.3
    result = await play_match(NoisyDilemma, [first_legal(), first_legal()], config={"rounds": 1})
    assert result.returns == [0.3, 0.3] and result.ranks == [1, 1]
    assert settled(2) == 2 and type(settled(2)) is int
    assert settled(67.60000000000001) == 67.6 and settled(-1e-300) == -1e-300
    assert settled(123456789.125) == 123456789.125
    assert settled(999999999995.5352) < settled(999999999995.6953)  # a tenth apart near 10^12 (twelve digits tied them)


def test_a_clocks_times_are_every_field_it_has() -> None:
    """What a match records and announces of its clock (``Clock.times``): none left out."""
    clock = Clock(move_ms=7, grace_ms=8, bank_ms=9)
    assert clock.times() == asdict(clock)
