"""Iterated rock-paper-scissors: zero-sum scoring, spellings, a full match."""

from __future__ import annotations

import pytest

from games.api import ConfigError
from games.iterated_rock_paper_scissors import BEATEN_BY, BEATS, IteratedRockPaperScissors, outcome


def test_spec_is_a_simultaneous_zero_sum_competitive_game() -> None:
    spec = IteratedRockPaperScissors.spec
    assert (spec.name, spec.category) == ("iterated-rock-paper-scissors", "competitive")
    assert spec.simultaneous and spec.zero_sum
    assert spec.action_space == ("rock", "paper", "scissors")
    assert (spec.min_return, spec.max_return) == (-10.0, 10.0)
    assert IteratedRockPaperScissors.Config().rounds == 10


def test_each_hand_beats_one_and_loses_to_one() -> None:
    assert BEATS == {"rock": "scissors", "paper": "rock", "scissors": "paper"}
    assert all(BEATS[BEATEN_BY[hand]] == hand for hand in BEATS)
    assert [outcome("rock", other) for other in ("rock", "paper", "scissors")] == [0, -1, 1]


def test_a_full_match_of_five_rounds() -> None:
    state = IteratedRockPaperScissors.new({"rounds": 5})
    hands = [("rock", "scissors"), ("r", "p"), ("Paper", "paper"), ("scissors", "paper"), ("p", "ROCK")]
    rewards = [tuple(state.step({0: a, 1: b}) or ()) for a, b in hands]
    assert rewards == [(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0), (1.0, -1.0), (1.0, -1.0)]
    assert state.is_over and state.returns() == (2.0, -2.0)
    assert state.observe(1).data["my_moves"] == ["scissors", "paper", "paper", "paper", "rock"]
    assert "round 5: you rock, they paper (you -1, they +1)" in state.observe(1).text


def test_the_observation_lists_the_outcomes() -> None:
    data = IteratedRockPaperScissors.new().observe(0)
    assert "you rock, they scissors: 1 / -1" in data.text
    assert "Answer rock, paper or scissors." in data.text
    assert data.data["payoffs"] == {"win": 1.0, "draw": 0.0, "loss": -1.0}


@pytest.mark.parametrize(("values", "key"), [({"rounds": 0}, "rounds"), ({"win": 2}, "win")])
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        IteratedRockPaperScissors.new(values)
