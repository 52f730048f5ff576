"""The worked example of docs/PLUGINS.md plays: its bot finds every number its game hides."""

from __future__ import annotations

import functools

import pytest
import trio

from arena.match import play_match
from arena.seats import LocalSeat, Turn
from bots.registry import make_bot
from tests.examples import example_module

example = example_module("guess_the_number")


@pytest.mark.parametrize("low_first", [False, True])
def test_halving_finds_any_number_from_1_to_20_in_5_guesses(low_first: bool) -> None:
    game = example.GuessTheNumber
    for seed in range(20):
        chooser = LocalSeat(make_bot("random", game.spec.name, seed), name="random", threaded=False)
        guesser = LocalSeat(example.Bisector(game.spec.name, seed, low_first=low_first), name="bisect", threaded=False)
        result = trio.run(functools.partial(play_match, game, [chooser, guesser], seed=seed))
        assert (result.status, result.returns, result.outcomes) == ("finished", [-1.0, 1.0], ["loss", "win"]), result.detail


def test_with_too_few_tries_the_chooser_can_win() -> None:
    state = example.GuessTheNumber.new({"high": 20, "tries": 1}, 0)
    state.step({0: "choose 3"})
    assert state.step({1: example.Bisector("guess-the-number").act(Turn.of(state, 1))}) == (1.0, -1.0)
