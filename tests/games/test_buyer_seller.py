"""Buyer-seller: the draw, deals and no deals, the reference price, information regimes, the grammar."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest

from games.api import ConfigError, IllegalAction
from games.buyer_seller import BuyerSeller, BuyerSellerConfig, parse_action, reference_price


def test_spec_is_a_free_text_negotiation_with_chance_and_hidden_information() -> None:
    spec = BuyerSeller.spec
    assert (spec.name, spec.category) == ("buyer-seller", "negotiation")
    assert spec.chance and spec.hidden_information and spec.free_text
    assert not spec.simultaneous and not spec.zero_sum
    # The worst: a seller with cost 50 selling at 20 (-30), or a buyer with value 50 paying 80 (-30); the best: 80 - 20.
    assert (spec.min_return, spec.max_return) == (-30.0, 60.0)
    assert BuyerSellerConfig(cost_min=0, cost_max=10, value_min=40, value_max=50).return_bounds() == (-10.0, 50.0)


def test_cost_and_value_are_drawn_from_their_ranges_and_always_leave_room_for_a_deal() -> None:
    costs, values = set(), set()
    for seed in range(300):
        state = BuyerSeller.new(None, seed)
        assert 20 <= state.cost <= 50 <= state.value <= 80
        costs.add(state.cost)
        values.add(state.value)
    assert len(costs) > 20 and len(values) > 20


def test_the_buyer_seller_games_reference_price_under_complete_information_matches_the_hand_computed_midpoint() -> None:
    state = BuyerSeller.new({"information": "complete"}, 3)
    assert (state.cost, state.value) == (38, 71)
    state.step({0: "offer 60: fair"})
    assert state.step({1: "accept"}) == (22.0, 11.0)  # 60 - 38, 71 - 60
    # The Nash bargaining price: (38 + 71) / 2 = 54.5, so the deal at 60 is 5.5 above it.
    assert reference_price(38, 71) == 54.5
    outcome = {"reference_price": 54.5, "deal_price": 60, "distance_from_reference": 5.5}
    assert {k: state.full_view()[k] for k in outcome} == outcome
    for seat in (0, 1):
        data = state.observe(seat).data
        assert {k: data[k] for k in outcome} == outcome
    assert "reference price (their midpoint) was 54.5" in state.observe(0).text


def test_a_full_two_sided_match_hand_checked() -> None:
    state = BuyerSeller.new(None, 4)  # cost 35, value 66, each known only to its owner
    assert (state.cost, state.value) == (35, 66)
    assert state.step({0: "offer 70: it is a rare piece"}) is None
    assert state.step({1: "offer 40: my budget is tight"}) is None
    assert state.step({0: "offer 55: meet me"}) is None
    assert state.step({1: "offer 48"}) is None
    # The seller accepts the buyer's 48: 48 - 35 = 13 for the seller, 66 - 48 = 18 for the buyer.
    assert state.step({0: "accept: deal"}) == (13.0, 18.0)
    assert state.is_over and state.agreed and state.returns() == (13.0, 18.0)
    # Reference (35 + 66) / 2 = 50.5; distance 2.5.
    assert state.outcome() == {"reference_price": 50.5, "deal_price": 48, "distance_from_reference": 2.5}
    assert "Deal at price 48: you score 18, they score 13." in state.observe(1).text
    assert state.observe(0).data["history"][-1] == {"seat": 0, "action": "accept: deal"}


@pytest.mark.parametrize("max_turns", [1, 2, 5])
def test_no_deal_after_max_turns_gives_zero_to_both_and_still_records_the_reference(max_turns: int) -> None:
    state = BuyerSeller.new({"max_turns": max_turns}, 0)  # cost 39, value 63
    for turn in range(max_turns):
        assert not state.is_over
        state.step({turn % 2: "offer 50"})
    assert state.is_over and not state.agreed and state.to_move() == ()
    assert state.returns() == (0.0, 0.0)
    assert state.outcome() == {"reference_price": 51.0, "deal_price": None, "distance_from_reference": None}
    assert state.observe(1).data["reference_price"] == 51.0
    assert "No deal" in state.observe(0).text


def test_the_last_turn_is_announced() -> None:
    state = BuyerSeller.new({"max_turns": 2}, 0)
    state.step({0: "offer 60"})
    assert "This is the last turn: unless you accept, the game ends with no deal" in state.observe(1).text


def test_a_one_turn_game_does_not_offer_an_accept_it_would_refuse() -> None:
    """The only turn said "unless you accept", and accept was refused: no offer stood (found by QA)."""
    text = BuyerSeller.new({"max_turns": 1}, 0).observe(0).text
    assert "This is the last turn: whatever you answer, the game ends with no deal and 0 for both." in text


def test_accepting_a_later_offer_pays_at_that_price() -> None:
    state = BuyerSeller.new(None, 0)  # cost 39, value 63
    state.step({0: "offer 70"})
    state.step({1: "offer 45"})
    state.step({0: "offer 58"})
    assert state.step({1: "accept"}) == (19.0, 5.0)


@pytest.mark.parametrize(
    ("information", "seller_knows", "buyer_knows"),
    [
        ("complete", {"cost": 38, "value": 71}, {"cost": 38, "value": 71}),
        ("one-sided", {"cost": 38}, {"cost": 38, "value": 71}),
        ("two-sided", {"cost": 38}, {"value": 71}),
    ],
)
def test_private_information_follows_the_regime(information: str, seller_knows: dict, buyer_knows: dict) -> None:
    state = BuyerSeller.new({"information": information}, 3)
    assert state.private_info(0) == seller_knows
    assert state.private_info(1) == buyer_knows
    for seat, knows in ((0, seller_knows), (1, buyer_knows)):
        data = state.observe(seat).data
        assert (data["cost"], data["value"]) == (knows.get("cost"), knows.get("value"))
        assert data["reference_price"] is None
    assert ("The buyer's value: 71." in state.observe(0).text) == (information == "complete")
    assert ("The seller's cost: 38." in state.observe(1).text) == (information != "two-sided")


def test_everything_is_revealed_at_the_end() -> None:
    state = BuyerSeller.new(None, 3)
    state.step({0: "offer 60"})
    state.step({1: "accept"})
    for seat in (0, 1):
        data = state.observe(seat).data
        assert (data["cost"], data["value"]) == (38, 71)
    public = json.dumps(state.public_view())
    assert '"cost", "38"' in public and '"value", "71"' in public


def seeds_by(seat_number: str) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = defaultdict(list)
    for seed in range(200):
        groups[getattr(BuyerSeller.new(None, seed), seat_number)].append(seed)
    return groups


@pytest.mark.parametrize(("information", "seat"), [("two-sided", 0), ("two-sided", 1), ("one-sided", 0)])
def test_the_other_sides_hidden_number_never_reaches_an_observation_or_the_live_view(information: str, seat: int) -> None:
    own, hidden = ("cost", "value") if seat == 0 else ("value", "cost")
    pairs = [(seeds[0], other) for seeds in seeds_by(own).values() for other in seeds[1:]]
    pairs = [(a, b) for a, b in pairs if getattr(BuyerSeller.new(None, a), hidden) != getattr(BuyerSeller.new(None, b), hidden)]
    assert len(pairs) >= 5
    for first, second in pairs[:20]:
        a, b = BuyerSeller.new({"information": information}, first), BuyerSeller.new({"information": information}, second)
        for action in ({0: "offer 70: hello"}, {1: "offer 40"}, {0: "offer 60"}):
            assert a.observe(seat) == b.observe(seat)
            assert a.public_view() == b.public_view()
            a.step(action)
            b.step(action)
        assert a.observe(seat) == b.observe(seat)
        assert a.full_view() != b.full_view()


@pytest.mark.parametrize(
    ("action", "canonical"),
    [
        ("offer 45", "offer 45"),
        ("  OFFER $45 :  a   fair price ", "offer 45: a fair price"),
        ("offer 45: it cost me $40", "offer 45: it cost me $40"),
        ("offer 45:", "offer 45"),
    ],
)
def test_offers_are_canonicalised(action: str, canonical: str) -> None:
    assert BuyerSeller.new(None, 3).validate(0, action) == canonical


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("", "empty action"),
        ("offr 40", "did you mean 'offer'"),
        ("bid 40", "'bid' is not an action"),
        ("offer", "one whole-number price"),
        ("offer 40 50", "one whole-number price"),
        ("offer 40.5", "one whole-number price"),
        ("offer forty", "one whole-number price"),
        ("offer 40 please", "one whole-number price"),
        ("accept now", "after a colon"),
    ],
)
def test_malformed_actions_are_illegal_with_a_reason(action: str, reason: str) -> None:
    with pytest.raises(IllegalAction, match=reason):
        parse_action(action)


def test_illegal_moves_in_play_are_explained_and_change_nothing() -> None:
    state = BuyerSeller.new({"message_chars": 5}, 3)
    with pytest.raises(IllegalAction, match="no offer to accept yet; make one with 'offer'"):
        state.step({0: "accept"})
    with pytest.raises(IllegalAction, match="between 20 and 80, got 81"):
        state.step({0: "offer 81"})
    with pytest.raises(IllegalAction, match="between 20 and 80, got 19"):
        state.validate(0, "offer 19")
    with pytest.raises(IllegalAction, match="seat 0's turn, not seat 1's"):
        state.validate(1, "offer 50")
    with pytest.raises(IllegalAction, match="6 characters; the limit is 5"):
        state.validate(0, "offer 50: hello!")
    assert state.step_count == 0 and state.standing is None
    assert "'accept'" not in state.action_format(0)
    state.step({0: "offer 50"})
    assert "'accept'" in state.action_format(1)


def test_random_free_action_is_always_legal_and_often_deals() -> None:
    rng = random.Random(5)
    deals = 0
    for seed in range(60):
        state = BuyerSeller.new(None, seed)
        while not state.is_over:
            seat = state.to_move()[0]
            action = BuyerSeller.random_free_action(state.observe(seat), rng)
            assert state.validate(seat, action) == action
            state.step({seat: action})
        deals += state.agreed
    assert deals >= 45


def test_views_are_json_and_carry_the_outcome_for_the_record() -> None:
    state = BuyerSeller.new(None, 3)
    state.step({0: "offer 70: my price"})
    live = json.dumps(state.public_view())
    assert "my price" in live and "38" not in live and "71" not in live
    full = state.full_view()
    assert (full["reference_price"], full["deal_price"], full["distance_from_reference"]) == (54.5, None, None)
    json.dumps(full)


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"information": "complet"}, "information"),
        ({"information": "partial"}, "information"),
        ({"cost_min": -1}, "cost_min"),
        ({"cost_min": 30, "cost_max": 25}, "cost_max"),
        ({"value_min": 45}, "value_min"),
        ({"value_max": 49}, "value_max"),
        ({"max_turns": 0}, "max_turns"),
        ({"message_chars": -1}, "message_chars"),
    ],
)
def test_config_errors_name_the_key(values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        BuyerSeller.new(values)


def test_a_close_misspelling_of_the_regime_gets_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="did you mean 'complete'"):
        BuyerSeller.new({"information": "complet"})
