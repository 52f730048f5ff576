"""The public goods game: pot, shares, the punishment step, spellings, config checks."""

from __future__ import annotations

import random

import pytest

from games.api import ConfigError, IllegalAction
from games.public_goods import PublicGoods

EXACT = {"players": 3, "rounds": 2, "multiplier": 1.5}
"""A multiplier that keeps every payoff exact in binary floating point."""


def test_spec_is_a_simultaneous_social_dilemma_for_two_to_eight() -> None:
    spec = PublicGoods.spec
    assert (spec.name, spec.category) == ("public-goods", "social_dilemma")
    assert spec.simultaneous and not spec.zero_sum
    assert (spec.min_players, spec.max_players, spec.default_config.players) == (2, 8, 4)
    assert spec.action_space == tuple(f"contribute {n}" for n in range(11))
    # 5 rounds: at least 1.6 * 10 / 4 a round, at most 10 + 1.6 * 10 * 3 / 4.
    assert (spec.min_return, spec.max_return) == pytest.approx((20.0, 110.0))


def test_a_full_match_pays_the_kept_tokens_plus_an_equal_share_of_the_grown_pot() -> None:
    state = PublicGoods.new(EXACT)
    # Round 1: pot 10 + 4 + 0 = 14, x 1.5 = 21, 7 each: 0 + 7, 6 + 7, 10 + 7.
    assert state.step({0: "contribute 10", 1: "4", 2: " Contribute  0 "}) == [7.0, 13.0, 17.0]
    # Round 2: pot 12, x 1.5 = 18, 6 each: 4 + 6, 4 + 6, 10 + 6.
    assert state.step({0: "6", 1: "6", 2: "0"}) == [10.0, 10.0, 16.0]
    assert state.is_over and state.returns() == (17.0, 23.0, 33.0)
    data = state.observe(2).data
    assert data["moves"] == [[10, 4, 0], [6, 6, 0]] and data["scores"] == [17.0, 23.0, 33.0]
    assert "contributions: you 0, seat 0 10, seat 1 4; pot 14 x 1.5 = 21, 7 each (you +17, seat 0 +7, seat 1 +13)" in (
        state.observe(2).text
    )


def test_with_punishment_each_round_ends_with_a_punishment_step() -> None:
    state = PublicGoods.new({**EXACT, "punishment": True})
    state.step({0: "10", 1: "4", 2: "0"})
    assert state.observe(0).data["phase"] == "punish" and state.observe(0).data["round"] == 1
    assert state.legal_actions(2) == ("none", "punish 0", "punish 1")
    # Seats 0 and 1 punish seat 2 (cost 1 each, fine 3 each); seat 2 punishes seat 0.
    assert state.step({0: "punish 2", 1: "punish 2", 2: "punish 0"}) == [-4.0, -1.0, -7.0]
    assert state.returns() == (3.0, 12.0, 10.0)
    assert state.observe(1).data["punished"] == [[2, 2, 0]]
    assert "seat 0 punished seat 2, you punished seat 2, seat 2 punished seat 0" in state.observe(1).text
    state.step({0: "6", 1: "6", 2: "0"})
    state.step({0: "none", 1: "nobody", 2: "none"})
    assert state.is_over and state.step_count == 4
    assert state.returns() == (13.0, 22.0, 26.0)
    assert "nobody punished" in state.observe(0).text
    grid = next(block for block in state.public_view()["render"] if block["type"] == "grid")
    assert grid["rows"] == [["10 p2", "6"], ["4 p2", "6"], ["0 p0", "0"]]


def test_a_bare_number_in_the_punishment_step_is_refused_not_read_as_a_seat() -> None:
    """A step earlier "0" meant "contribute 0": read as "punish 0" it fined seat 0 at the
    answerer's cost, from a player meaning no punishment (found by QA)."""
    state = PublicGoods.new({**EXACT, "punishment": True})
    state.step({0: "10", 1: "4", 2: "0"})
    with pytest.raises(IllegalAction, match="none, or punish <seat>"):
        state.validate(1, "0")


def test_a_player_cannot_punish_itself_or_overcontribute() -> None:
    state = PublicGoods.new({"punishment": True})
    with pytest.raises(
        IllegalAction, match="'contribute 11' is not a move; answer contribute <n> with n a whole number from 0 to 10"
    ):
        state.validate(0, "contribute 11")
    with pytest.raises(IllegalAction, match="not a move"):
        state.validate(0, "-1")
    state.step(dict.fromkeys(range(4), "5"))
    with pytest.raises(
        IllegalAction, match=r"'punish 1' is not a move; answer none, or punish <seat> naming one other seat \(0, 2, 3\)"
    ):
        state.validate(1, "punish 1")


def test_random_play_with_punishment_stays_within_the_bounds() -> None:
    for players in (2, 5, 8):
        config = {"players": players, "punishment": True, "punish_fine": 4.0}
        state = PublicGoods.new(config)
        rng = random.Random(players)
        while not state.is_over:
            state.step({seat: rng.choice(list(state.legal_actions(seat) or ())) for seat in state.to_move()})
        low, high = state.config.return_bounds()
        assert all(low - 1e-9 <= r <= high + 1e-9 for r in state.returns())
        assert set(state.config.action_space() or ()) >= {"none", f"punish {players - 1}", "contribute 10"}


def test_the_lowest_return_is_reached_by_giving_all_and_being_punished_by_everyone() -> None:
    state = PublicGoods.new({**EXACT, "rounds": 1, "punishment": True})
    state.step({0: "10", 1: "0", 2: "0"})
    state.step({0: "punish 1", 1: "punish 0", 2: "punish 0"})
    assert state.returns()[0] == state.config.return_bounds()[0] == 1.5 * 10 / 3 - 2 * 3 - 1


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"multiplier": 1.0}, "multiplier"),
        ({"multiplier": 4.0}, "multiplier"),
        ({"players": 2, "multiplier": 2.0}, "multiplier"),
        ({"endowment": 0}, "endowment"),
        ({"punish_cost": -1}, "punish_cost"),
        ({"punish_fine": 0}, "punish_fine"),
        ({"rounds": 0}, "rounds"),
        ({"players": 1}, "players"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        PublicGoods.new(values)


def test_two_players_with_the_default_multiplier_is_a_dilemma() -> None:
    assert PublicGoods.new({"players": 2}).config.multiplier == 1.6
    with pytest.raises(ConfigError, match="2 to 8 players, not 9"):
        PublicGoods.new({"players": 9})
