"""Liar's dice rules: the bid order, the challenge and who loses it (with and without
wild ones, two and three players), illegal bids with reasons, config errors, and that
nobody sees anyone else's dice before the challenge."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.liars_dice import LiarsDice, LiarsDiceConfig

SMALL = {"dice": 2}


def play(actions: str, config: Mapping[str, object] = SMALL, seed: int = 0) -> LiarsDice:
    """A game after comma-separated actions, each by the seat to move."""
    game = LiarsDice.new(config, seed)
    for action in filter(None, (a.strip() for a in actions.split(","))):
        game.step({game.to_move()[0]: action})
    return game


def test_the_dice_of_seed_0_used_below() -> None:
    assert play("").dice == ((1, 6), (5, 6))
    assert play("", {"dice": 2, "players": 3}).dice == ((1, 6), (5, 6), (2, 5))
    assert play("", {"dice": 3, "wild_ones": True}).dice == ((1, 5, 6), (2, 5, 6))


def test_seat_0_must_open_with_a_bid() -> None:
    game = play("")
    assert game.to_move() == (0,)
    legal = tuple(game.legal_actions(0))
    assert legal[:3] == ("1 1", "1 2", "1 3") and legal[-1] == "4 6" and len(legal) == 24
    with pytest.raises(IllegalAction, match=r"no bid to challenge yet: make the first bid, e\.g\. '1 6'"):
        game.step({0: "liar"})


def test_each_bid_must_raise_the_quantity_or_the_face() -> None:
    game = play("2 4")
    assert game.to_move() == (1,)
    legal = tuple(game.legal_actions(1))
    assert legal[:4] == ("2 5", "2 6", "3 1", "3 2") and legal[-1] == "liar"
    for weaker in ("2 4", "2 3", "1 6"):
        with pytest.raises(IllegalAction, match=f"'{weaker}' does not beat the last bid '2 4'"):
            game.step({1: weaker})
    assert game.step_count == 1


def test_after_the_highest_bid_only_liar_remains() -> None:
    game = play("4 6")
    assert tuple(game.legal_actions(1)) == ("liar",)


@pytest.mark.parametrize(
    ("config", "actions", "returns", "loser"),
    [
        # Two 6s among (1, 6) and (5, 6): "2 6" holds, so the challenger (seat 0) loses.
        (SMALL, "1 6, 2 6, liar", (-1.0, 1.0), 0),
        # "3 6" fails: the bidder (seat 1) loses.
        (SMALL, "2 6, 3 6, liar", (1.0, -1.0), 1),
        # Exactly as many as the bid claims is enough: two 6s for "2 6", bid by seat 0.
        (SMALL, "2 6, liar", (1.0, -1.0), 1),
        # Three players, dice (1, 6), (5, 6), (2, 5): the loser pays 1, the other two get 1/2 each.
        ({"dice": 2, "players": 3}, "1 5, 2 5, liar", (0.5, 0.5, -1.0), 2),
        ({"dice": 2, "players": 3}, "1 6, 3 6, liar", (0.5, -1.0, 0.5), 1),
        ({"dice": 2, "players": 3}, "2 5, 3 5, 4 2, liar", (0.5, 0.5, -1.0), 2),
        # Wild ones, dice (1, 5, 6), (2, 5, 6): two 5s and a 1 make seat 0's "3 5" hold, so the challenger loses...
        ({"dice": 3, "wild_ones": True}, "3 5, liar", (1.0, -1.0), 1),
        # ...but not without wild ones, when the bidder loses...
        ({"dice": 3}, "3 5, liar", (-1.0, 1.0), 0),
        # ...and a bid on 1s counts only the 1s.
        ({"dice": 3, "wild_ones": True}, "2 1, liar", (-1.0, 1.0), 0),
    ],
)
def test_the_challenge_ends_the_game_and_the_loser_pays(
    config: Mapping[str, object], actions: str, returns: tuple[float, ...], loser: int
) -> None:
    game = play(actions, config)
    assert game.is_over
    assert game.returns() == returns
    assert game.loser == loser
    assert game.to_move() == ()
    assert all(tuple(game.legal_actions(seat)) == () for seat in range(game.num_players))
    for seat in range(game.num_players):
        assert game.observe(seat).data["loser"] == loser
    with pytest.raises(GameOver):
        game.step({0: "liar"})


def test_only_the_challenge_pays() -> None:
    game = play("")
    assert game.step({0: "1 6"}) is None
    assert game.step({1: "2 6"}) is None
    assert game.step({0: "liar"}) == (-1.0, 1.0)


def test_turns_go_round_the_table() -> None:
    game = play("1 2, 1 3, 1 4, 1 5", {"dice": 2, "players": 3})
    assert [bid["seat"] for bid in game.observe(0).data["bids"]] == [0, 1, 2, 0]
    assert game.to_move() == (1,)


def test_loosely_written_bids_are_canonicalised() -> None:
    game = play("")
    for written in ("bid 3 5", "3x5", "3 fives", "  3 5s ", "3-5", "3 FIVE", "3 * 5"):
        assert game.validate(0, written) == "3 5"
    assert game.validate(0, "2 sixes") == "2 6"
    game.step({0: "Bid 2 6s"})
    assert game.history == [{0: "2 6"}]
    for written in ("LIAR", " challenge", "call"):
        assert game.validate(1, written) == "liar"


def test_malformed_and_impossible_bids_are_rejected_with_the_reason() -> None:
    game = play("")
    with pytest.raises(IllegalAction, match="not a bid or 'liar'"):
        game.validate(0, "raise")
    with pytest.raises(IllegalAction, match="faces run from 1 to 6"):
        game.validate(0, "2 7")
    with pytest.raises(IllegalAction, match="faces run from 1 to 6"):
        game.validate(0, "2 sevens")
    with pytest.raises(IllegalAction, match="not a bid"):
        game.validate(0, "35")
    with pytest.raises(IllegalAction, match="quantity must be 1 to 4"):
        game.validate(0, "5 3")
    with pytest.raises(IllegalAction, match="quantity must be 1 to 4"):
        game.validate(0, "0 3")
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        game.validate(1, "1 1")


def test_config_is_checked_key_by_key() -> None:
    with pytest.raises(ConfigError, match="'dice' must be 1 to 10"):
        LiarsDice.new({"dice": 0})
    with pytest.raises(ConfigError, match="'dice' must be 1 to 10"):
        LiarsDice.new({"dice": 11})
    with pytest.raises(ConfigError, match="'faces' must be 2 to 12"):
        LiarsDice.new({"faces": 1})
    with pytest.raises(ConfigError, match="'wild_ones' must be true or false"):
        LiarsDice.new({"wild_ones": "sometimes"})
    with pytest.raises(ConfigError, match="2 to 6 players"):
        LiarsDice.new({"players": 7})


def test_bounds_and_action_space_follow_the_config() -> None:
    assert LiarsDiceConfig(players=3).return_bounds() == (-1.0, 0.5)
    assert LiarsDice.spec.default_config.return_bounds() == (-1.0, 1.0)
    space = LiarsDiceConfig(dice=2, faces=4).action_space()
    assert space[:5] == ("1 1", "1 2", "1 3", "1 4", "2 1")
    assert space[-2:] == ("4 4", "liar")
    assert len(space) == 17
    assert len(LiarsDice.spec.action_space or ()) == 10 * 6 + 1


def seeds_with(first: tuple[int, ...], config: Mapping[str, object] = SMALL) -> list[int]:
    """Seeds (under 300) dealing seat 0 the dice ``first``."""
    return [seed for seed in range(300) if LiarsDice.new(config, seed).dice[0] == first]


def test_a_seat_sees_its_own_dice_and_nobody_elses_until_the_challenge() -> None:
    seeds = seeds_with((2, 5))
    same, other = next((a, b) for a in seeds for b in seeds if play("", seed=a).dice[1] != play("", seed=b).dice[1])
    for actions in ("", "1 2", "1 2, 3 4"):
        assert play(actions, seed=same).observe(0) == play(actions, seed=other).observe(0)
        assert play(actions, seed=same).public_view() == play(actions, seed=other).public_view()
        assert play(actions, seed=same).observe(1) != play(actions, seed=other).observe(1)
    game = play("1 2", seed=same)
    assert game.observe(0).data["all_dice"] is None
    assert game.private_info(0) == [2, 5]
    cards = next(block for block in game.public_view()["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["?", "?"], ["?", "?"]]


def test_the_challenge_reveals_every_die() -> None:
    game = play("2 6, 3 6, liar")
    assert game.observe(0).data["all_dice"] == [[1, 6], [5, 6]]
    cards = next(block for block in game.public_view()["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["1", "6"], ["5", "6"]]
    assert "2 dice count towards the bid 3 6, so it fails: seat 1 loses." in game.observe(0).text


def test_observation_tells_dice_bids_and_what_to_answer() -> None:
    observation = play("1 6, 2 5").observe(0)
    assert "You are seat 0." in observation.text
    assert "Your dice: 1 6." in observation.text
    assert "seat 0 bids 1 6, seat 1 bids 2 5" in observation.text
    assert "The bid to beat: 2 5 (at least 2 of all the dice show 5), by seat 1." in observation.text
    assert 'or "liar" to challenge' in observation.text
    assert observation.data == {
        "seat": 0,
        "dice": [1, 6],
        "dice_per_player": 2,
        "total_dice": 4,
        "faces": 6,
        "wild_ones": False,
        "bids": [{"seat": 0, "quantity": 1, "face": 6}, {"seat": 1, "quantity": 2, "face": 5}],
        "current_bid": {"seat": 1, "quantity": 2, "face": 5},
        "to_move": 0,
        "all_dice": None,
        "loser": None,
    }
    assert json.loads(json.dumps(observation.data)) == observation.data


def test_with_wild_ones_the_bid_to_beat_says_ones_count_except_in_a_bid_on_1s() -> None:
    """Dice 1 5 6 and 2 5 6: '3 5' holds by the one, which the bracket left out."""
    wild = {"dice": 3, "wild_ones": True}
    assert "3 5 (at least 3 of all the dice show 5 or a wild 1)" in play("3 5", wild).observe(1).text
    assert "2 1 (at least 2 of all the dice show 1)," in play("2 1", wild).observe(1).text


def test_full_view_shows_every_die_while_live() -> None:
    view = play("1 6").full_view()
    cards = next(block for block in view["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["1", "6"], ["5", "6"]]
    assert json.loads(json.dumps(view)) == view
