"""Iterated chicken: its payoff table (the crash is worst), spellings, a full match, config checks."""

from __future__ import annotations

import pytest

from games.api import ConfigError, IllegalAction
from games.iterated_chicken import IteratedChicken


def test_spec_is_a_simultaneous_two_player_social_dilemma() -> None:
    spec = IteratedChicken.spec
    assert (spec.name, spec.category) == ("iterated-chicken", "social_dilemma")
    assert spec.simultaneous and not spec.zero_sum
    assert spec.action_space == ("swerve", "straight")
    assert (spec.min_return, spec.max_return) == (-100.0, 10.0)


@pytest.mark.parametrize(
    ("move0", "move1", "paid"),
    [
        ("swerve", "swerve", (0.0, 0.0)),
        ("swerve", "straight", (-1.0, 1.0)),
        ("straight", "swerve", (1.0, -1.0)),
        ("straight", "straight", (-10.0, -10.0)),
    ],
)
def test_each_round_pays_the_default_table(move0: str, move1: str, paid: tuple[float, float]) -> None:
    assert tuple(IteratedChicken.new().step({0: move0, 1: move1})) == paid


def test_a_full_match_of_three_rounds() -> None:
    state = IteratedChicken.new({"rounds": 3})
    for move0, move1 in (("sw", "st"), ("Straight", "straight"), ("swerve", "SWERVE")):
        state.step({0: move0, 1: move1})
    # -1 - 10 + 0 for seat 0; +1 - 10 + 0 for seat 1.
    assert state.is_over and state.returns() == (-11.0, -9.0)
    assert state.observe(0).data["my_moves"] == ["swerve", "straight", "swerve"]
    grid = next(block for block in state.public_view()["render"] if block["type"] == "grid")
    assert grid["rows"] == [["SW", "ST", "SW"], ["ST", "ST", "SW"]]


def test_the_shared_first_letter_is_ambiguous_and_refused() -> None:
    with pytest.raises(IllegalAction, match="'s' is not a move; answer swerve or straight"):
        IteratedChicken.new().validate(0, "s")


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"straight_swerve": 0}, "straight_swerve"),
        ({"swerve_straight": 0}, "swerve_swerve"),
        ({"straight_straight": -1}, "swerve_straight"),
        ({"rounds": -1}, "rounds"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        IteratedChicken.new(values)


def test_a_nonnegative_variant_is_allowed() -> None:
    config = IteratedChicken.Config(swerve_swerve=3, swerve_straight=2, straight_swerve=4, straight_straight=0)
    assert config.return_bounds() == (0.0, 40.0)
