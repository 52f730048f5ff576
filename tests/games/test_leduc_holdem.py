"""Leduc hold'em rules: the deal, both betting rounds with their raise sizes and cap,
every way a hand ends with its hand-checked payoff, illegal actions, and what each seat
and spectators may see of the three cards."""

from __future__ import annotations

import json
from functools import cache

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.leduc_holdem import LeducHoldem


@cache
def seeds_by_deal() -> dict[str, int]:
    """The first seed dealing each "<seat 0's card><seat 1's card><public card>"."""
    found: dict[str, int] = {}
    seed = 0
    while len(found) < 24:
        game = LeducHoldem.new(None, seed)
        found.setdefault(game.private_info(0) + game.private_info(1) + "JQK"[game.public_card], seed)
        seed += 1
        assert seed < 5000, found
    return found


def deal(cards: str, actions: str = "") -> LeducHoldem:
    """A hand dealt ``cards`` (seat 0, seat 1, public) after space-separated actions."""
    game = LeducHoldem.new(None, seeds_by_deal()[cards])
    for action in actions.split():
        game.step({game.to_move()[0]: action})
    return game


def test_every_deal_of_ranks_is_reachable_except_three_of_a_kind() -> None:
    deals = seeds_by_deal()
    assert len(deals) == 24
    assert not {"JJJ", "QQQ", "KKK"} & set(deals)


def test_the_deal_is_fixed_by_the_seed() -> None:
    for seed in range(20):
        first, second = LeducHoldem.new(None, seed), LeducHoldem.new(None, seed)
        assert (first.cards, first.public_card) == (second.cards, second.public_card)


def test_hand_starts_with_antes_and_seat_0_to_check_or_raise() -> None:
    game = deal("KJQ")
    assert game.to_move() == (0,)
    assert tuple(game.legal_actions(0)) == ("check", "raise")
    assert tuple(game.legal_actions(1)) == ()
    assert game.observe(0).data == {
        "seat": 0,
        "card": "K",
        "public_card": None,
        "opponent_card": "?",
        "round": 1,
        "betting": [[]],
        "stakes": [1, 1],
        "pot": 2,
        "to_move": 0,
    }
    assert LeducHoldem.spec.action_space == ("fold", "check", "call", "raise")
    assert (LeducHoldem.spec.min_return, LeducHoldem.spec.max_return) == (-13.0, 13.0)
    assert LeducHoldem.spec.chance and LeducHoldem.spec.hidden_information and LeducHoldem.spec.zero_sum


@pytest.mark.parametrize(
    ("cards", "actions", "returns", "stakes"),
    [
        # Folds in round 1: the folder loses what it put in.
        ("KJQ", "raise fold", (1.0, -1.0), [3, 1]),
        ("JKQ", "check raise fold", (-1.0, 1.0), [1, 3]),
        ("QJK", "raise raise fold", (-3.0, 3.0), [3, 5]),
        ("QJK", "check raise raise fold", (3.0, -3.0), [5, 3]),
        # A fold in round 2, after a called raise in round 1 (3 each) and a raise of 4.
        ("QJK", "check raise call check raise fold", (-3.0, 3.0), [3, 7]),
        # Showdowns: the higher card wins when nobody pairs the public card.
        ("JKQ", "check check check check", (-1.0, 1.0), [1, 1]),
        ("JQK", "check check raise call", (-5.0, 5.0), [5, 5]),
        # A pair with the public card beats a higher card.
        ("QKQ", "check check check check", (1.0, -1.0), [1, 1]),
        # Both raises of both rounds, called: 1 + 2 + 2 + 4 + 4 = 13 each; seat 1's pair of J wins.
        ("KJJ", "raise raise call raise raise call", (-13.0, 13.0), [13, 13]),
        # Equal ranks split the pot.
        ("KKQ", "raise call raise call", (0.0, 0.0), [7, 7]),
    ],
)
def test_every_way_a_hand_ends_pays_what_the_loser_put_in(
    cards: str, actions: str, returns: tuple[float, float], stakes: list[int]
) -> None:
    game = deal(cards, actions)
    assert game.is_over
    assert game.returns() == returns
    assert game.observe(0).data["stakes"] == stakes
    assert game.to_move() == ()
    assert tuple(game.legal_actions(0)) == tuple(game.legal_actions(1)) == ()
    with pytest.raises(GameOver):
        game.step({0: "check"})


def test_only_the_end_pays() -> None:
    game = deal("KJQ")
    for action, seat in (("raise", 0), ("call", 1), ("check", 0), ("raise", 1)):
        assert game.step({seat: action}) is None
    assert game.step({0: "call"}) == (7.0, -7.0)


def test_a_round_ends_on_two_checks_or_a_call_and_round_2_starts_with_seat_0() -> None:
    for actions in ("check check", "raise call", "check raise call", "raise raise call", "check raise raise call"):
        game = deal("KJQ", actions)
        assert game.observe(1).data["round"] == 2
        assert game.to_move() == (0,)
        assert tuple(game.legal_actions(0)) == ("check", "raise")
    one_check = deal("KJQ", "check")
    assert one_check.observe(0).data["round"] == 1
    assert one_check.to_move() == (1,)


def test_raises_are_2_chips_in_round_1_and_4_in_round_2() -> None:
    assert deal("KJQ", "raise").stakes == [3, 1]
    assert deal("KJQ", "raise raise").stakes == [3, 5]
    assert deal("KJQ", "check check raise").stakes == [5, 1]
    assert deal("KJQ", "check check raise raise").stakes == [5, 9]
    assert deal("KJQ", "raise call raise").stakes == [7, 3]


def test_after_two_raises_in_a_round_only_fold_or_call_remain() -> None:
    game = deal("KJQ", "raise raise")
    assert tuple(game.legal_actions(0)) == ("fold", "call")
    with pytest.raises(IllegalAction, match=r"already has 2 raises.*fold or call"):
        game.step({0: "raise"})
    game = deal("KJQ", "raise")
    assert tuple(game.legal_actions(1)) == ("fold", "call", "raise")
    game = deal("KJQ", "raise call check raise raise")
    assert tuple(game.legal_actions(1)) == ("fold", "call")


def test_the_public_card_is_revealed_only_when_round_2_begins() -> None:
    for actions in ("", "check", "raise", "raise raise"):
        for seat in (0, 1):
            assert deal("KJQ", actions).observe(seat).data["public_card"] is None
            assert deal("KJQ", actions).observe(seat) == deal("KJK", actions).observe(seat)
        assert deal("KJQ", actions).public_view() == deal("QKJ", actions).public_view()
    revealed = deal("KJQ", "check check")
    assert [revealed.observe(seat).data["public_card"] for seat in (0, 1)] == ["Q", "Q"]
    assert "Public card: Q." in revealed.observe(1).text
    cards = next(block for block in revealed.public_view()["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["?"], ["?"], ["Q"]]


def test_calling_or_folding_with_no_bet_is_rejected() -> None:
    for actions in ("", "check", "check check"):
        game = deal("QJK", actions)
        for action in ("call", "fold"):
            with pytest.raises(IllegalAction, match=r"no bet to.*check or raise"):
                game.step({game.to_move()[0]: action})


def test_checking_when_facing_a_bet_is_rejected() -> None:
    game = deal("QJK", "raise")
    with pytest.raises(IllegalAction, match=r"face a bet.*fold or call or raise"):
        game.step({1: "check"})
    game = deal("QJK", "raise raise")
    with pytest.raises(IllegalAction, match=r"face a bet.*fold or call"):
        game.step({0: "check"})
    assert game.step_count == 2


def test_unknown_words_and_wrong_seats_are_rejected() -> None:
    game = deal("QJK")
    with pytest.raises(IllegalAction, match="'all-in' is not a Leduc hold'em action"):
        game.validate(0, "all-in")
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        game.validate(1, "check")


def test_case_spaces_and_bet_for_raise_are_forgiven() -> None:
    game = deal("QJK")
    assert game.validate(0, " CHECK ") == "check"
    assert game.validate(0, "Bet") == "raise"
    game.step({0: "bet"})
    assert game.history == [{0: "raise"}]
    assert game.observe(1).data["betting"] == [["raise"]]


def test_config_rejects_other_player_counts_and_unknown_keys() -> None:
    with pytest.raises(ConfigError, match="2 players"):
        LeducHoldem.new({"players": 3})
    with pytest.raises(ConfigError, match="'ante'"):
        LeducHoldem.new({"ante": 2})


def test_a_seat_sees_its_own_card_but_not_the_other_while_the_hand_is_live() -> None:
    for actions in ("", "raise", "check check", "raise call raise"):
        assert deal("KJQ", actions).observe(0) == deal("KQQ", actions).observe(0)
        assert deal("JKQ", actions).observe(1) == deal("QKQ", actions).observe(1)
        assert deal("KJQ", actions).observe(0) != deal("JKQ", actions).observe(0)
        assert deal("KJQ", actions).observe(1) != deal("KKQ", actions).observe(1)
        assert deal("KJQ", actions).private_info(1) == "J"


def test_a_fold_keeps_both_private_cards_hidden() -> None:
    assert deal("KJQ", "raise fold").observe(0) == deal("KQQ", "raise fold").observe(0)
    assert deal("KJQ", "check check raise fold").observe(1) == deal("QJQ", "check check raise fold").observe(1)
    assert deal("KJQ", "raise fold").observe(0).data["opponent_card"] == "?"
    assert deal("KJQ", "raise fold").public_view() == deal("QKQ", "raise fold").public_view()


def test_a_showdown_shows_both_cards() -> None:
    game = deal("QKQ", "check check check check")
    assert game.observe(0).data["opponent_card"] == "K"
    assert game.observe(1).data["opponent_card"] == "Q"
    assert "seat 0 wins 1 chip." in game.observe(1).text
    cards = next(block for block in game.public_view()["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["Q"], ["K"], ["Q"]]


def test_observation_text_tells_cards_pot_betting_and_turn() -> None:
    text = deal("QJK", "check raise call raise").observe(1).text
    assert "You are seat 1. Your card: J. Public card: K." in text
    assert "Pot: 10 chips; you have put in 3, the opponent 7 (you must add 4 to call)." in text
    assert "round 1: seat 0 checks, seat 1 raises, seat 0 calls; round 2: seat 0 raises" in text
    assert "Round 2, seat 1 to act: fold or call or raise." in text
    assert "Q" not in text.split("Betting")[0].replace("Leduc", "")


def test_observation_data_is_json() -> None:
    for actions in ("", "raise", "raise call", "check check raise fold", "raise call check check"):
        for seat in (0, 1):
            data = deal("JQK", actions).observe(seat).data
            assert json.loads(json.dumps(data)) == data


def test_full_view_shows_both_private_cards() -> None:
    view = deal("KJQ", "raise fold").full_view()
    cards = next(block for block in view["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["K"], ["J"], []]
    assert view["text"].startswith("Seat 0: K, seat 1: J, public card: -.")
    assert json.loads(json.dumps(view)) == view
