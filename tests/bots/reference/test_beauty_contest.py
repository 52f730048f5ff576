"""The level-k bot for the beauty contest: its guesses by level, its adaptation, its results."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.beauty_contest import LevelK, level_k_guess
from bots.reference.random_bot import RandomBot
from bots.registry import BotSpecError, make_bot
from games.beauty_contest import BeautyContest

GAME = "beauty-contest"


def play(bots: tuple[Bot, ...], seed: int = 0, config: Mapping[str, object] | None = None) -> BeautyContest:
    state = BeautyContest.new({"players": len(bots), **(config or {})}, seed)
    while not state.is_over:
        state.step({seat: bots[seat].act(Turn.of(state, seat)) for seat in state.to_move()})
    return state


@pytest.mark.parametrize(("k", "guess"), [(0, "50"), (1, "33"), (2, "22"), (3, "15"), (20, "0")])
def test_first_round_guess_is_fraction_to_the_k_times_50(k: int, guess: str) -> None:
    # 50 * (2/3)^k: 50, 33.3, 22.2, 14.8, 0.015.
    assert LevelK(GAME, 0, k=k).act(Turn.of(BeautyContest.new(), 0)) == guess


def test_later_rounds_anchor_on_the_last_average() -> None:
    state = BeautyContest.new({"rounds": 2})
    state.step({0: "30", 1: "30", 2: "30"})
    assert LevelK(GAME, 0).act(Turn.of(state, 0)) == "13"  # 30 * 4/9 = 13.3
    assert LevelK(GAME, 0, k=0).act(Turn.of(state, 0)) == "30"


def test_guesses_are_rounded_half_up_and_kept_in_range() -> None:
    assert level_k_guess(3, 0.5, 50) == 6  # 6.25
    assert level_k_guess(1, 0.5, 45) == 23  # 22.5 rounds up
    assert level_k_guess(2, 2.0, 50) == 100  # 200, capped
    assert level_k_guess(5, 0.1, 50) == 0


def test_level_2_beats_levels_0_and_1() -> None:
    state = play((LevelK(GAME, 0, k=0), LevelK(GAME, 1, k=1), LevelK(GAME, 2, k=2)))
    # Guesses 50, 33, 22: average 35, target 23.3, so 22 wins.
    assert state.returns() == (0.0, 0.0, 1.0)


def test_level_2_wins_well_over_its_share_against_random_players() -> None:
    total = 0.0
    for seed in range(300):
        seat = seed % 3
        bots: list[Bot] = [RandomBot(GAME, seed * 10 + i) for i in range(3)]
        bots[seat] = LevelK(GAME, seed)
        total += play(tuple(bots), seed).returns()[seat]
    assert total / 300 > 0.6  # a fair share is 1/3; measured 0.725


def test_in_a_talk_step_it_announces_its_guess() -> None:
    state = play(tuple(LevelK(GAME, seat) for seat in range(3)), config={"cheap_talk": True, "rounds": 2})
    messages = state.observe(0).data["messages"]
    assert [m["text"] for m in messages[:3]] == ["I will guess 22."] * 3
    assert [m["text"] for m in messages[3:]] == ["I will guess 10."] * 3  # 22 * 4/9 = 9.8
    assert state.observe(0).data["moves"] == [[22, 22, 22], [10, 10, 10]]


def test_k_is_an_option_within_bounds() -> None:
    bot = make_bot("level-k:k=1", GAME)
    assert isinstance(bot, LevelK) and bot.k == 1
    with pytest.raises(BotSpecError, match="'k' must be between 0 and 20, got 21"):
        make_bot("level-k:k=21", GAME)
    with pytest.raises(BotSpecError, match="'k' must be between 0 and 20, got -1"):
        make_bot("level-k:k=-1", GAME)
    assert LevelK.showcase and LevelK.games == (GAME,)
