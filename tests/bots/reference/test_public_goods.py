"""Conditional cooperators and free-riders in the public goods game."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.public_goods import ConditionalCooperator, FreeRider
from bots.registry import make_bot
from games.public_goods import PublicGoods

GAME = PublicGoods.spec.name
EXACT = {"players": 3, "rounds": 3, "multiplier": 1.5}


def play(names: Sequence[str], config: Mapping[str, object]) -> PublicGoods:
    bots: list[Bot] = [make_bot(name, GAME, seed) for seed, name in enumerate(names)]
    state = PublicGoods.new(config)
    while not state.is_over:
        state.step({seat: bots[seat].act(Turn.of(state, seat)) for seat in state.to_move()})
    return state


def test_conditional_cooperators_follow_the_others_average_down_when_one_free_rides() -> None:
    state = play(["conditional-cooperator", "conditional-cooperator", "free-rider"], EXACT)
    # Round 1: 5, 5, 0 (pot 10 -> 15, 5 each). Round 2: the others gave 2.5 on average -> 3 (half up): 3, 3, 0
    # (pot 6 -> 9, 3 each). Round 3: the others gave 1.5 -> 2: 2, 2, 0 (pot 4 -> 6, 2 each).
    assert state.observe(0).data["moves"] == [[5, 5, 0], [3, 3, 0], [2, 2, 0]]
    # Cooperators: 10, 10, 10. Free-rider: 15, 13, 12.
    assert state.returns() == (30.0, 30.0, 40.0)


def test_with_punishment_the_cooperators_fine_the_free_rider() -> None:
    state = play(["conditional-cooperator", "conditional-cooperator", "free-rider"], {**EXACT, "punishment": True})
    assert state.observe(2).data["punished"] == [[2, 2, None]] * 3
    # Each round: cooperators pay 1 each, the free-rider is fined 3 twice: 30 - 3, 40 - 18.
    assert state.returns() == (27.0, 27.0, 22.0)


def test_conditional_cooperators_among_themselves_keep_giving_half_and_punish_nobody() -> None:
    state = play(["conditional-cooperator"] * 4, {"punishment": True})
    assert all(round_ == [5, 5, 5, 5] for round_ in state.observe(0).data["moves"])
    assert state.observe(0).data["punished"] == [[None] * 4] * 5
    assert state.returns() == pytest.approx((65.0,) * 4)  # 5 kept + 1.6 * 20 / 4 a round


def test_both_talk_when_there_is_a_talk_step() -> None:
    state = play(["conditional-cooperator", "free-rider"], {"players": 2, "rounds": 1, "cheap_talk": True})
    said = [m["text"] for m in state.observe(0).data["messages"]]
    assert said == ["I will give what the rest of you gave on average last round.", ""]
    assert state.observe(0).data["moves"] == [[5, 0]]


def test_the_conditional_cooperator_is_the_showcase() -> None:
    assert isinstance(make_bot("conditional-cooperator", GAME), ConditionalCooperator) and ConditionalCooperator.showcase
    assert isinstance(make_bot("free-rider", GAME), FreeRider) and not FreeRider.showcase
