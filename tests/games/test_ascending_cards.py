"""Rules of ascending cards: the deal, the clock, correct plays, mistakes (held lower cards and
same-tick collisions), every end, actions, config, and what each seat may see."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.ascending_cards import AscendingCards, AscendingCardsConfig


def arranged(hands: list[list[int]], **config: Any) -> AscendingCards:
    """A game dealt the given hands (lowest first)."""
    game = AscendingCards.new({"players": len(hands), "cards_per_player": len(hands[0]), **config}, 0)
    game.hands = [list(hand) for hand in hands]
    return game


def everyone(game: AscendingCards, action: str, **others: str) -> dict[int, str]:
    """``action`` for every seat to move, except seats named like ``s2="play"``."""
    return {seat: others.get(f"s{seat}", action) for seat in game.to_move()}


# ---- the deal and the clock -------------------------------------------------------------


def test_the_deal_is_distinct_numbers_sorted_in_each_hand() -> None:
    for seed in range(30):
        game = AscendingCards.new({"players": 8, "cards_per_player": 3, "max_card": 30}, seed)
        cards = [c for hand in game.hands for c in hand]
        assert len(cards) == 24 == len(set(cards))
        assert all(1 <= c <= 30 for c in cards)
        assert all(hand == sorted(hand) and len(hand) == 3 for hand in game.hands)


def test_the_deal_is_one_chance_event_fixed_by_the_seed() -> None:
    game = AscendingCards.new(None, 5)
    assert game._chance_index == 1
    assert AscendingCards.new(None, 5).hands == game.hands
    assert len({str(AscendingCards.new(None, seed).hands) for seed in range(20)}) == 20


def test_when_everyone_waits_only_the_clock_moves() -> None:
    game = arranged([[10, 50], [30, 70]])
    assert game.to_move() == (0, 1)
    assert game.legal_actions(0) == ("play", "wait")
    assert game.step(everyone(game, "wait")) is None
    assert game.tick == 2
    assert game.hands == [[10, 50], [30, 70]]
    assert game.observe(0).data["events"] == []


def test_a_card_played_when_no_lower_card_is_held_scores_for_everyone() -> None:
    game = arranged([[10, 50], [30, 70]])
    assert game.step({0: "play", 1: "wait"}) == (1.0, 1.0)
    data = game.observe(1).data
    assert data["pile"] == [10] and data["hand_sizes"] == [1, 2]
    assert data["events"] == [{"tick": 1, "played": [{"seat": 0, "card": 10, "correct": True}], "discarded": []}]
    assert game.lives == 3


# ---- mistakes ---------------------------------------------------------------------------


def test_playing_over_a_held_lower_card_costs_a_life_and_discards_every_lower_card() -> None:
    game = arranged([[10, 50], [30, 70], [20, 90]])
    assert game.step({0: "wait", 1: "play", 2: "wait"}) is None  # 30 while 10 and 20 are held
    assert game.lives == 2
    assert game.hands == [[50], [70], [90]]
    data = game.observe(0).data
    assert data["pile"] == [30] and data["discarded"] == [10, 20]
    assert data["events"][0]["played"] == [{"seat": 1, "card": 30, "correct": False}]
    assert data["events"][0]["discarded"] == [{"seat": 0, "card": 10}, {"seat": 2, "card": 20}]
    assert data["score"] == 0
    assert "tick 1: seat 1 played 30 (a mistake: -1 life); discarded: 10 (seat 0), 20 (seat 2)" in game.observe(2).text


def test_cards_played_in_the_same_tick_go_down_lowest_first_and_only_the_lowest_is_correct() -> None:
    game = arranged([[40, 50], [30, 70], [20, 90]])
    assert game.step({0: "play", 1: "play", 2: "play"}) == (1.0, 1.0, 1.0)
    assert [p["card"] for p in game.observe(0).data["events"][0]["played"]] == [20, 30, 40]
    assert [p["correct"] for p in game.observe(0).data["events"][0]["played"]] == [True, False, False]
    assert game.lives == 1
    assert game.hands == [[50], [70], [90]]


# ---- the end ----------------------------------------------------------------------------


def test_a_full_match_with_hand_checked_returns() -> None:
    game = arranged([[5, 60], [20, 21], [40, 90]], ticks=10)
    rewards = [
        game.step(everyone(game, "wait")),  # tick 1
        game.step(everyone(game, "wait", s0="play")),  # tick 2: 5, correct
        game.step(everyone(game, "wait", s1="play")),  # tick 3: 20, correct
        game.step(everyone(game, "wait", s1="play", s2="play")),  # tick 4: 21 correct, 40 with it: a mistake
    ]
    assert game.to_move() == (0, 2)  # seat 1 has played both its cards
    rewards.append(game.step({0: "wait", 2: "play"}))  # tick 5: 90 over the held 60: a mistake, 60 discarded
    assert rewards == [None, (1.0,) * 3, (1.0,) * 3, (1.0,) * 3, None]
    assert game.is_over and game.to_move() == ()
    assert game.returns() == (3.0, 3.0, 3.0)
    assert game.lives == 1
    data = game.observe(0).data
    assert data["pile"] == [5, 20, 21, 40, 90] and data["discarded"] == [60]
    assert "Game over: every card has left the hands. Score: 3 of 6 cards played correctly." in game.observe(1).text
    with pytest.raises(GameOver):
        game.step({0: "play"})


def test_playing_every_card_in_order_scores_the_maximum() -> None:
    game = arranged([[3], [7]], ticks=2)
    assert game.step({0: "play", 1: "wait"}) == (1.0, 1.0)
    assert game.step({1: "play"}) == (1.0, 1.0)
    assert game.is_over and game.returns() == (2.0, 2.0) == (game.config.return_bounds()[1],) * 2


def test_losing_the_last_life_ends_the_game() -> None:
    game = arranged([[10, 50], [30, 70]], lives=1)
    game.step({0: "wait", 1: "play"})
    assert game.is_over
    assert game.returns() == (0.0, 0.0)
    assert game.hands == [[50], [70]]
    assert "every life is lost" in game.observe(0).text


def test_when_the_clock_runs_out_the_cards_still_held_are_lost() -> None:
    game = arranged([[10, 50], [30, 70]], ticks=3)
    game.step({0: "play", 1: "wait"})
    game.step({0: "wait", 1: "play"})
    assert not game.is_over
    game.step({0: "play", 1: "wait"})  # tick 3, the last: 50 is played, 70 is still held
    assert game.is_over
    assert game.returns() == (3.0, 3.0)
    assert game.hands[1] == [70]
    assert "the clock ran out" in game.observe(1).text


# ---- actions ----------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "canonical"), [("PLAY", "play"), (" p ", "play"), ("Wait", "wait"), ("w", "wait")])
def test_actions_are_canonicalised(action: str, canonical: str) -> None:
    game = arranged([[10], [30]])
    assert game.validate(0, action) == canonical


@pytest.mark.parametrize("action", ["play 10", "pass", "", "10"])
def test_anything_else_is_rejected_with_a_reason(action: str) -> None:
    game = arranged([[10], [30]])
    with pytest.raises(IllegalAction, match=r"answer play .* or wait"):
        game.step({0: action, 1: "wait"})
    assert game.tick == 1


def test_a_player_without_cards_no_longer_moves() -> None:
    game = arranged([[10], [30, 40]])
    game.step({0: "play", 1: "wait"})
    assert game.to_move() == (1,)
    assert game.legal_actions(0) == ()
    with pytest.raises(IllegalAction, match="no cards left"):
        game.validate(0, "play")


# ---- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"cards_per_player": 0}, "'cards_per_player' must be at least 1"),
        ({"players": 4, "cards_per_player": 3, "max_card": 11}, "'max_card' must be from 12"),
        ({"max_card": 1001}, r"'max_card' must be from 4 .* to 1000"),
        ({"lives": 0}, "'lives' must be at least 1"),
        ({"cards_per_player": 3, "ticks": 2}, "'ticks' must be at least cards_per_player"),
        ({"ticks": 1001}, "'ticks' must be at most 1000"),  # as the rounds of other games (bound_history)
        ({"players": 8, "ticks": 251}, "'ticks' must be at most 250"),
        ({"tick": 3}, "unknown config key 'tick'"),
        ({"players": 1}, "2 to 8 players"),
        ({"players": 9}, "2 to 8 players"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        AscendingCards.new(config)


def test_return_bounds_are_zero_to_the_cards_dealt() -> None:
    assert (AscendingCards.spec.min_return, AscendingCards.spec.max_return) == (0.0, 4.0)
    assert AscendingCardsConfig(players=8, cards_per_player=3).return_bounds() == (0.0, 24.0)
    assert AscendingCards.spec.action_space == ("play", "wait")


# ---- what each seat sees ----------------------------------------------------------------


def test_a_seat_sees_its_own_cards_and_only_counts_of_the_others() -> None:
    game = arranged([[10, 50], [30, 70]])
    other = arranged([[10, 50], [20, 95]])
    assert game.observe(0) == other.observe(0)
    assert game.observe(1) != other.observe(1)
    assert game.public_view() == other.public_view()
    assert game.full_view() != other.full_view()
    assert game.private_info(1) == [30, 70]
    assert "30" not in json.dumps(game.observe(0).data) and "70" not in game.observe(0).text


def test_observation_tells_the_whole_table() -> None:
    game = arranged([[10, 50], [30, 70]], ticks=12)
    game.step({0: "play", 1: "wait"})
    observation = game.observe(1)
    assert "You are seat 1 of 2 in Ascending cards (numbers 1 to 100" in observation.text
    assert "Tick 2 of 12. Lives: 3 of 3. Score: 1." in observation.text
    assert "Your cards: 30 70. Cards the others hold: seat 0 1." in observation.text
    assert "Pile (lowest first): 10. Discarded: none." in observation.text
    assert "tick 1: seat 0 played 10" in observation.text
    assert "answer play (lay your lowest card, 30, now) or wait" in observation.text
    assert observation.data == {
        "seat": 1,
        "players": 2,
        "tick": 2,
        "ticks": 12,
        "max_card": 100,
        "lives": 3,
        "max_lives": 3,
        "hand": [30, 70],
        "hand_sizes": [1, 2],
        "pile": [10],
        "discarded": [],
        "events": [{"tick": 1, "played": [{"seat": 0, "card": 10, "correct": True}], "discarded": []}],
        "score": 1,
    }


def test_observed_events_are_a_copy_the_reader_may_change() -> None:
    game = arranged([[10, 50], [30, 70]])
    game.step({0: "play", 1: "wait"})
    game.observe(0).data["events"][0]["played"].clear()
    assert game.observe(0).data["pile"] == [10]
    assert len(game.observe(0).data["events"][0]["played"]) == 1


def test_the_public_view_hides_hands_until_the_end() -> None:
    game = arranged([[10], [30]], ticks=2)
    groups = {g["label"]: g["cards"] for g in game.public_view()["render"][1]["groups"]}
    assert groups["Seat 0"] == ["?"] and groups["Seat 1"] == ["?"]
    full = {g["label"]: g["cards"] for g in game.full_view()["render"][1]["groups"]}
    assert full["Seat 0"] == ["10"] and full["Seat 1"] == ["30"]
    game.step({0: "wait", 1: "wait"})
    game.step({0: "wait", 1: "wait"})
    groups = {g["label"]: g["cards"] for g in game.public_view()["render"][1]["groups"]}
    assert game.is_over
    assert groups["Seat 0"] == ["10"] and groups["Seat 1"] == ["30"] and groups["Pile"] == []


def test_the_view_marks_mistaken_cards_on_the_pile() -> None:
    game = arranged([[10], [30]])
    game.step({0: "wait", 1: "play"})
    groups = {g["label"]: g["cards"] for g in game.public_view()["render"][1]["groups"]}
    assert groups["Pile"] == ["30!"] and groups["Discarded"] == ["10"]
