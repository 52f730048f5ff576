"""Sustainable and greedy harvesters on the commons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from arena.seats import Turn
from bots.reference.commons_harvest import GreedyHarvester, SustainableHarvester
from bots.registry import BotSpecError, make_bot
from games.commons_harvest import CommonsHarvest

GAME = CommonsHarvest.spec.name


def play(specs: Sequence[str], config: Mapping[str, object] | None = None) -> CommonsHarvest:
    bots = [make_bot(spec, GAME, seed) for seed, spec in enumerate(specs)]
    state = CommonsHarvest.new(config)
    while not state.is_over:
        state.step({seat: bots[seat].act(Turn.of(state, seat)) for seat in state.to_move()})
    return state


def test_sustainable_harvesters_bring_the_stock_to_half_and_keep_it_there() -> None:
    state = play(["sustainable-harvester"] * 4)
    # Round 1: 50 above half capacity, 12 each capped at 10: 60 left, + 6 = 66. Round 2: 16 above, 4 each: 50, + 6 = 56.
    # Then 1 each (52, + 6 = 58) and 2 each (50, + 6 = 56) in turn, rounds 3 to 20.
    assert state.stocks[:4] == [100, 66, 56, 58]
    assert state.stocks[-1] == 56 and min(state.stocks[1:]) == 56
    assert state.is_over and state.round == 20
    assert state.returns() == (41.0,) * 4  # 10 + 4 + 9 * 1 + 9 * 2


def test_greedy_harvesters_collapse_the_stock_in_three_rounds() -> None:
    state = play(["greedy-harvester"] * 4)
    # 100 - 40 = 60, + 6 = 66; 66 - 40 = 26, + floor(4.81) = 30; 40 asked of 30: 7.5 each, spare units to seats 0 and 1.
    assert state.stocks == [100, 66, 30, 0]
    assert state.is_over and state.round == 3
    assert state.returns() == (28.0, 28.0, 27.0, 27.0)


def test_the_target_option_sets_the_level_kept() -> None:
    state = play(["sustainable-harvester:target=0.8", "sustainable-harvester:target=0.8"], {"players": 2, "rounds": 3})
    # 100 - 80 = 20 above the target: 10 each; 80 left, + 4 = 84; 4 above: 2 each; 80, + 4 = 84 again.
    assert state.observe(0).data["moves"] == [[10, 10], [2, 2], [2, 2]]


def test_the_sustainable_harvester_proposes_its_quota_in_talk() -> None:
    state = play(["sustainable-harvester", "greedy-harvester"], {"players": 2, "rounds": 1, "cheap_talk": True})
    said = [m["text"] for m in state.observe(1).data["messages"]]
    assert said == ["Let's keep the stock near 50: I take 10 this round, and so should you.", ""]


def test_a_target_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(BotSpecError, match="'target'"):
        make_bot("sustainable-harvester:target=1.5", GAME)
    assert SustainableHarvester.showcase and not GreedyHarvester.showcase
