"""Kuhn poker rules: every betting sequence and its payoff, illegal actions, and what
each seat and spectators may see of the cards."""

from __future__ import annotations

import json
from functools import cache

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.kuhn_poker import KuhnPoker


@cache
def seeds_by_deal() -> dict[tuple[str, str], int]:
    """The first seed dealing each (seat 0's card, seat 1's card)."""
    found: dict[tuple[str, str], int] = {}
    seed = 0
    while len(found) < 6:
        game = KuhnPoker.new(None, seed)
        found.setdefault((game.observe(0).data["card"], game.observe(1).data["card"]), seed)
        seed += 1
        assert seed < 1000, found
    return found


def deal(cards: str, actions: str = "") -> KuhnPoker:
    """A hand with seat 0 holding cards[0] and seat 1 cards[1], after space-separated actions."""
    game = KuhnPoker.new(None, seeds_by_deal()[(cards[0], cards[1])])
    for action in actions.split():
        game.step({game.to_move()[0]: action})
    return game


def test_every_deal_is_reachable_and_the_two_cards_always_differ() -> None:
    deals = seeds_by_deal()
    assert sorted(deals) == sorted((a, b) for a in "JQK" for b in "JQK" if a != b)
    assert len(set(deals.values())) == 6


def test_the_deal_is_fixed_by_the_seed() -> None:
    for seed in range(20):
        first, second = KuhnPoker.new(None, seed), KuhnPoker.new(None, seed)
        assert first.observe(0) == second.observe(0)
        assert first.observe(1) == second.observe(1)


def test_hand_starts_with_antes_and_seat_0_to_check_or_bet() -> None:
    game = deal("KJ")
    assert game.to_move() == (0,)
    assert tuple(game.legal_actions(0)) == ("check", "bet")
    assert tuple(game.legal_actions(1)) == ()
    assert game.observe(0).data == {"card": "K", "opponent_card": "?", "history": [], "pot": 2, "to_move": 0}
    assert KuhnPoker.spec.action_space == ("check", "bet", "call", "fold")
    assert (KuhnPoker.spec.min_return, KuhnPoker.spec.max_return) == (-2.0, 2.0)
    assert KuhnPoker.spec.chance and KuhnPoker.spec.hidden_information and KuhnPoker.spec.zero_sum


@pytest.mark.parametrize(
    ("cards", "actions", "returns", "pot"),
    [
        ("KJ", "check check", (1.0, -1.0), 2),
        ("JQ", "check check", (-1.0, 1.0), 2),
        ("QK", "check bet fold", (-1.0, 1.0), 3),
        ("KQ", "check bet fold", (-1.0, 1.0), 3),
        ("KQ", "check bet call", (2.0, -2.0), 4),
        ("JK", "check bet call", (-2.0, 2.0), 4),
        ("JK", "bet fold", (1.0, -1.0), 3),
        ("QJ", "bet call", (2.0, -2.0), 4),
        ("QK", "bet call", (-2.0, 2.0), 4),
    ],
)
def test_every_betting_sequence_ends_with_its_payoff(cards: str, actions: str, returns: tuple[float, float], pot: int) -> None:
    game = deal(cards, actions)
    assert game.is_over
    assert game.returns() == returns
    assert game.observe(0).data["pot"] == pot
    assert game.to_move() == ()
    assert tuple(game.legal_actions(0)) == tuple(game.legal_actions(1)) == ()
    with pytest.raises(GameOver):
        game.step({0: "check"})


def test_only_the_end_pays() -> None:
    game = deal("KJ")
    assert game.step({0: "check"}) is None
    assert game.step({1: "bet"}) is None
    assert game.step({0: "call"}) == (2.0, -2.0)


def test_a_bet_is_answered_with_fold_or_call_by_the_other_seat() -> None:
    game = deal("QJ", "bet")
    assert game.to_move() == (1,)
    assert tuple(game.legal_actions(1)) == ("fold", "call")
    assert game.observe(1).data["pot"] == 3
    game = deal("QJ", "check bet")
    assert game.to_move() == (0,)
    assert tuple(game.legal_actions(0)) == ("fold", "call")


def test_checking_or_betting_when_facing_a_bet_is_rejected() -> None:
    game = deal("QJ", "bet")
    for action in ("check", "bet"):
        with pytest.raises(IllegalAction, match=r"face a bet.*fold or call"):
            game.step({1: action})
    assert game.step_count == 1


def test_calling_or_folding_with_no_bet_is_rejected() -> None:
    game = deal("QJ", "check")
    for action in ("call", "fold"):
        with pytest.raises(IllegalAction, match=r"no bet to.*check or bet"):
            game.step({1: action})


def test_unknown_words_and_wrong_seats_are_rejected() -> None:
    game = deal("QJ")
    with pytest.raises(IllegalAction, match="'raise' is not a Kuhn poker action"):
        game.validate(0, "raise")
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        game.validate(1, "check")


def test_case_and_spaces_are_forgiven() -> None:
    game = deal("QJ")
    assert game.validate(0, " BET ") == "bet"
    game.step({0: " Bet"})
    assert game.history == [{0: "bet"}]
    assert game.observe(1).data["history"] == ["bet"]


def test_config_rejects_other_player_counts_and_unknown_keys() -> None:
    with pytest.raises(ConfigError, match="2 players"):
        KuhnPoker.new({"players": 3})
    with pytest.raises(ConfigError, match="'ante'"):
        KuhnPoker.new({"ante": 2})


def test_a_seat_sees_its_own_card_but_not_the_other_while_the_hand_is_live() -> None:
    for actions in ("", "check", "bet", "check bet"):
        assert deal("KJ", actions).observe(0) == deal("KQ", actions).observe(0)
        assert deal("JK", actions).observe(1) == deal("QK", actions).observe(1)
        assert deal("KJ", actions).observe(0) != deal("QJ", actions).observe(0)
        assert deal("KJ", actions).observe(1) != deal("KQ", actions).observe(1)


def test_a_fold_keeps_the_other_card_hidden() -> None:
    assert deal("KJ", "bet fold").observe(0) == deal("KQ", "bet fold").observe(0)
    assert deal("QJ", "check bet fold").observe(1) == deal("KJ", "check bet fold").observe(1)
    assert deal("KJ", "bet fold").observe(0).data["opponent_card"] == "?"


def test_a_showdown_shows_both_cards() -> None:
    game = deal("QK", "bet call")
    assert game.observe(0).data["opponent_card"] == "K"
    assert game.observe(1).data["opponent_card"] == "Q"
    assert "seat 1 wins 2 chips" in game.observe(0).text


def test_observation_text_tells_card_pot_betting_and_turn() -> None:
    text = deal("QJ", "check bet").observe(0).text
    assert "Your card: Q" in text
    assert "Pot: 3" in text
    assert "seat 0 checks, seat 1 bets" in text
    assert "Seat 0 to act: fold or call" in text
    assert "J" not in text.replace("Your card: Q", "")


def test_observation_data_is_json() -> None:
    for actions in ("", "check", "bet call", "check bet fold"):
        for seat in (0, 1):
            data = deal("JQ", actions).observe(seat).data
            assert json.loads(json.dumps(data)) == data


def test_public_view_hides_cards_until_a_showdown() -> None:
    for actions in ("", "check", "bet", "check bet", "bet fold", "check bet fold"):
        live = deal("KJ", actions).public_view()
        assert live == deal("QK", actions).public_view()
        cards = next(block for block in live["render"] if block["type"] == "cards")
        assert [group["cards"] for group in cards["groups"]] == [["?"], ["?"]]
    shown = deal("KJ", "check check").public_view()
    cards = next(block for block in shown["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["K"], ["J"]]


def test_full_view_shows_both_cards() -> None:
    view = deal("KJ", "bet fold").full_view()
    cards = next(block for block in view["render"] if block["type"] == "cards")
    assert [group["cards"] for group in cards["groups"]] == [["K"], ["J"]]
    assert view["text"].startswith("Seat 0: K, seat 1: J.")
    assert json.loads(json.dumps(view)) == view
