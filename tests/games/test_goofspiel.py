"""Goofspiel rules: simultaneous bids, who takes each prize (ties discard it), the ranking
returns for two and more players (hand-checked matches), the prize order options, illegal
bids with reasons, config errors, and that the order of the prizes to come stays unknown."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.goofspiel import Goofspiel, GoofspielConfig, rank_returns


def play(bids: Sequence[Sequence[int]], config: Mapping[str, object], seed: int = 0) -> Goofspiel:
    """A game after ``bids``: for each turn, the card each seat bids."""
    game = Goofspiel.new(config, seed)
    for turn in bids:
        game.step({seat: str(card) for seat, card in enumerate(turn)})
    return game


DESCENDING_4 = {"cards": 4, "prize_order": "descending"}


def test_every_seat_bids_at_once_from_the_same_hand() -> None:
    game = Goofspiel.new(DESCENDING_4)
    assert game.to_move() == (0, 1)
    assert tuple(game.legal_actions(0)) == tuple(game.legal_actions(1)) == ("bid 1", "bid 2", "bid 3", "bid 4")
    with pytest.raises(IllegalAction, match=r"expected actions for seats \[0, 1\]"):
        game.step({0: "bid 1"})
    assert Goofspiel.spec.simultaneous and not Goofspiel.spec.hidden_information and Goofspiel.spec.zero_sum


@pytest.mark.parametrize(
    ("config", "bids", "points", "returns"),
    [
        # Prizes 4, 3, 2, 1. Seat 0 takes 4 and 3, seat 1 takes 2 and 1: 7 to 3.
        (DESCENDING_4, [(4, 1), (3, 2), (2, 3), (1, 4)], [7, 3], (1.0, -1.0)),
        # Tied bids discard the prizes 4 and 3; then seat 0 takes 2, seat 1 takes 1.
        (DESCENDING_4, [(4, 4), (3, 3), (2, 1), (1, 2)], [2, 1], (1.0, -1.0)),
        # Every bid tied: nobody scores, a draw.
        (DESCENDING_4, [(1, 1), (2, 2), (3, 3), (4, 4)], [0, 0], (0.0, 0.0)),
        # Prizes 3, 2, 1: seat 0 takes 3, seat 1 takes 2 and 1: 3 to 3, a draw.
        ({"cards": 3, "prize_order": "descending"}, [(3, 1), (1, 2), (2, 3)], [3, 3], (0.0, 0.0)),
        # Ascending prizes 1, 2, 3: seat 0 takes 1, the 2s tie, seat 1 saves its 3 for the last prize: 1 to 3.
        ({"cards": 3, "prize_order": "ascending"}, [(3, 1), (2, 2), (1, 3)], [1, 3], (-1.0, 1.0)),
        # Three players, prizes 3, 2, 1. Turn 1: seats 0 and 1 tie at 3, discarded. Turn 2: seat 2 takes 2.
        # Turn 3: seats 1 and 2 tie at 2, discarded. Points 0, 0, 2: seat 2 beats both, the others beat nobody.
        (
            {"cards": 3, "prize_order": "descending", "players": 3},
            [(3, 3, 1), (2, 1, 3), (1, 2, 2)],
            [0, 0, 2],
            (-0.5, -0.5, 1.0),
        ),
        # Three players ranked 3 > 2 > 1 points: +1, 0, -1.
        ({"cards": 3, "prize_order": "descending", "players": 3}, [(3, 2, 1), (1, 3, 2), (2, 1, 3)], [3, 2, 1], (1.0, 0.0, -1.0)),
    ],
)
def test_hand_checked_matches_pay_by_rank_of_points(
    config: Mapping[str, object], bids: Sequence[Sequence[int]], points: list[int], returns: tuple[float, ...]
) -> None:
    game = play(bids, config)
    assert game.is_over
    assert game.points == points
    assert game.returns() == returns
    assert game.to_move() == ()
    assert all(tuple(game.legal_actions(seat)) == () for seat in range(game.num_players))
    with pytest.raises(GameOver):
        game.step({seat: "bid 1" for seat in range(game.num_players)})


def test_rank_returns_counts_opponents_beaten_minus_opponents_ahead() -> None:
    assert rank_returns([5, 5]) == (0.0, 0.0)
    assert rank_returns([1, 9, 4, 4]) == (-1.0, 1.0, 0.0, 0.0)
    assert sum(rank_returns([3, 8, 8, 1, 6])) == 0.0


def test_only_the_last_turn_pays() -> None:
    game = Goofspiel.new(DESCENDING_4)
    for turn in ((4, 1), (3, 2), (2, 3)):
        assert game.step({0: f"bid {turn[0]}", 1: f"bid {turn[1]}"}) is None
    assert game.step({0: "bid 1", 1: "bid 4"}) == (1.0, -1.0)


def test_random_prize_order_is_a_permutation_fixed_by_the_seed() -> None:
    orders = {Goofspiel.new(None, seed).prizes for seed in range(20)}
    assert len(orders) > 15
    for order in orders:
        assert sorted(order) == list(range(1, 14))
    assert Goofspiel.new(None, 7).prizes == Goofspiel.new(None, 7).prizes
    assert Goofspiel.new({"prize_order": "descending"}, 7).prizes == tuple(range(13, 0, -1))
    assert Goofspiel.new({"prize_order": "ascending"}, 7).prizes == tuple(range(1, 14))


def test_spent_cards_leave_the_hand() -> None:
    game = play([(4, 1)], DESCENDING_4)
    assert tuple(game.legal_actions(0)) == ("bid 1", "bid 2", "bid 3")
    assert tuple(game.legal_actions(1)) == ("bid 2", "bid 3", "bid 4")
    with pytest.raises(IllegalAction, match=r"already played your 4; your cards: 1, 2, 3"):
        game.validate(0, "bid 4")
    assert game.observe(1).data["hands"] == [[1, 2, 3], [2, 3, 4]]


def test_bids_are_forgiving_about_form_and_strict_about_cards() -> None:
    game = Goofspiel.new(DESCENDING_4)
    for written in ("bid 3", "3", " BID 3 ", "Bid 3"):
        assert game.validate(0, written) == "bid 3"
    with pytest.raises(IllegalAction, match="there is no card 5: cards run from 1 to 4"):
        game.validate(0, "5")
    with pytest.raises(IllegalAction, match="there is no card 0"):
        game.validate(0, "bid 0")
    with pytest.raises(IllegalAction, match="'queen' is not a bid"):
        game.validate(0, "queen")
    game.step({0: "4", 1: " bid 1"})
    assert game.history == [{0: "bid 4", 1: "bid 1"}]


def test_config_is_checked_key_by_key() -> None:
    with pytest.raises(ConfigError, match="'cards' must be 1 to 52"):
        Goofspiel.new({"cards": 0})
    with pytest.raises(ConfigError, match="'cards' must be 1 to 52"):
        Goofspiel.new({"cards": 53})
    with pytest.raises(ConfigError, match=r"'prize_order' must be one of random, descending, ascending.*'descending'"):
        Goofspiel.new({"prize_order": "descend"})
    with pytest.raises(ConfigError, match="2 to 8 players"):
        Goofspiel.new({"players": 9})
    assert GoofspielConfig(cards=3).action_space() == ("bid 1", "bid 2", "bid 3")
    assert (Goofspiel.spec.min_return, Goofspiel.spec.max_return) == (-1.0, 1.0)


def test_the_order_of_the_prizes_to_come_is_hidden_from_players_and_spectators() -> None:
    by_first: dict[int, list[int]] = {}
    for seed in range(100):
        by_first.setdefault(Goofspiel.new(None, seed).prizes[0], []).append(seed)
    first, second = next(seeds[:2] for seeds in by_first.values() if len(seeds) > 1)
    a, b = Goofspiel.new(None, first), Goofspiel.new(None, second)
    assert a.prizes != b.prizes
    assert a.observe(0) == b.observe(0)
    assert a.public_view() == b.public_view()
    assert a.observe(0).data["prizes_to_come"] == sorted(a.prizes[1:])


@pytest.mark.parametrize(
    ("order", "said"),
    [
        ("descending", "Prizes still to come after this one, in descending order: 3, 2, 1."),
        ("ascending", "Prizes still to come after this one, in ascending order: 2, 3, 4."),
        ("random", "Prizes still to come after this one (order unknown): "),
    ],
)
def test_observation_says_whether_the_prize_order_is_fixed(order: str, said: str) -> None:
    # A fixed order was called unknown, so a player could not plan on a schedule the config made certain.
    observation = Goofspiel.new({"cards": 4, "prize_order": order}).observe(0)
    assert said in observation.text
    assert observation.data["prize_order"] == order


def test_observation_tells_prize_hands_points_and_history() -> None:
    game = play([(4, 1), (3, 3)], DESCENDING_4)
    observation = game.observe(1)
    assert observation.data == {
        "seat": 1,
        "turn": 3,
        "turns": 4,
        "prize": 2,
        "hand": [2, 4],
        "hands": [[1, 2], [2, 4]],
        "points": [4, 0],
        "prizes_to_come": [1],
        "prize_order": "descending",
        "history": [{"prize": 4, "bids": [4, 1], "winner": 0}, {"prize": 3, "bids": [3, 3], "winner": None}],
        "to_move": [0, 1],
    }
    text = observation.text
    assert "You are seat 1." in text
    assert "Turn 3 of 4: prize 2. Points: seat 0 4, seat 1 0." in text
    assert "Your cards: 2, 4." in text
    assert "Seat 0's cards: 1, 2." in text
    assert "turn 1: prize 4; seat 0 bid 4, you bid 1: seat 0 wins 4" in text
    assert "turn 2: prize 3; seat 0 bid 3, you bid 3: tied, prize discarded" in text
    assert json.loads(json.dumps(observation.data)) == observation.data


def test_views_show_every_bid_and_the_points() -> None:
    game = play([(4, 1), (3, 2), (2, 3), (1, 4)], DESCENDING_4)
    view = game.public_view()
    grid = next(block for block in view["render"] if block["type"] == "grid")
    assert grid["rows"] == [["4", "3", "2", "1"], ["4", "3", "2", "1"], ["1", "2", "3", "4"]]
    assert view["text"].startswith("Game over: seat 0 wins. Points: seat 0 7, seat 1 3.")
    assert game.full_view() == view
    assert json.loads(json.dumps(view)) == view


@pytest.mark.parametrize("order", ["descending", "ascending"])
def test_a_fixed_prize_order_lists_the_prizes_to_come_in_that_order_in_text_and_data(order: str) -> None:
    state = Goofspiel.new({"prize_order": order, "cards": 4}, 0)
    observation = state.observe(0)
    expected = [3, 2, 1] if order == "descending" else [2, 3, 4]
    assert observation.data["prizes_to_come"] == expected
    assert f"in {order} order: {', '.join(map(str, expected))}." in observation.text
