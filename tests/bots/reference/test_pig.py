"""The hold-at bot for Pig: when it rolls and holds, and that it beats random play."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.pig import PigHoldAt, break_even
from bots.reference.random_bot import RandomBot
from bots.registry import BotSpecError, make_bot
from games.pig import Pig


def play(bots: tuple[Bot, ...], seed: int, config: Mapping[str, object] | None = None) -> Pig:
    state = Pig.new(config, seed)
    while not state.is_over:
        seat = state.to_move()[0]
        state.step({seat: bots[seat].act(Turn.of(state, seat))})
    return state


def turn_with(turn_total_rolls: list[int], score: int = 0, target: int = 100) -> Turn:
    """Seat 0's turn after rolling ``turn_total_rolls`` (none of them a 1), with ``score`` banked."""
    state = Pig.new({"target": target})
    state.scores[0] = score
    state.rolls = list(turn_total_rolls)
    return Turn.of(state, 0)


def test_it_rolls_below_the_threshold_and_holds_at_it() -> None:
    bot = PigHoldAt("pig", 0)
    assert bot.act(turn_with([])) == "roll"
    assert bot.act(turn_with([6, 6, 6])) == "roll"  # 18
    assert bot.act(turn_with([6, 6, 6, 2])) == "hold"  # 20
    assert bot.act(turn_with([6, 6, 6, 5])) == "hold"  # 23


def test_it_holds_as_soon_as_holding_wins() -> None:
    bot = PigHoldAt("pig", 0)
    assert bot.act(turn_with([3], score=96)) == "roll"  # 99: not yet
    assert bot.act(turn_with([4], score=96)) == "hold"  # 100: the target
    assert bot.act(turn_with([2], score=8, target=10)) == "hold"


def test_the_threshold_is_an_option() -> None:
    bot = make_bot("pig-hold-at:threshold=5", "pig")
    assert isinstance(bot, PigHoldAt) and bot.threshold == 5
    assert bot.act(turn_with([4])) == "roll"
    assert bot.act(turn_with([5])) == "hold"
    with pytest.raises(BotSpecError, match="'threshold' must be at least 1, or 0 for the die's own, got -1"):
        make_bot("pig-hold-at:threshold=-1", "pig")


def test_by_default_it_holds_where_one_more_roll_of_the_matchs_die_stops_paying() -> None:
    """Holding at 20 with a two-faced die needs ten 2s in a row: its matches ran out of steps (found by QA)."""
    assert [break_even(faces) for faces in (2, 3, 6, 10)] == [2, 5, 20, 54]
    for seed in range(5):
        state = play((PigHoldAt("pig", 0), PigHoldAt("pig", 1)), seed, {"die": 2})
        assert max(state.scores) >= 100 and state.step_count < 1_000  # holding at 20: 9,000 steps and more


def test_hold_at_20_beats_random_in_at_least_150_of_200_seeded_games() -> None:
    wins = 0
    for seed in range(200):
        if seed % 2 == 0:
            state = play((PigHoldAt("pig", seed), RandomBot("pig", seed + 1000)), seed)
            wins += state.winner == 0
        else:
            state = play((RandomBot("pig", seed + 1000), PigHoldAt("pig", seed)), seed)
            wins += state.winner == 1
    assert wins >= 150  # measured: 185


def test_it_plays_every_seat_of_a_four_player_game_legally() -> None:
    bots = tuple(PigHoldAt("pig", seat, threshold=10 + 5 * seat) for seat in range(4))
    state = play(bots, 3, {"players": 4, "target": 50})
    assert state.is_over and max(state.scores) >= 50
    assert sum(state.returns()) == pytest.approx(0.0)


def test_it_is_the_showcase_bot_for_pig_only() -> None:
    assert PigHoldAt.showcase and PigHoldAt.games == ("pig",)
    with pytest.raises(BotSpecError, match="plays pig"):
        make_bot("pig-hold-at", "nim")
