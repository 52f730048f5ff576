"""The fair trader: where it opens, how it concedes, what it accepts, and how close to fair its deals land."""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Mapping

import pytest

from arena.seats import Turn
from bots.reference.buyer_seller import FairTrader, estimate
from bots.registry import BotSpecError, make_bot
from games.buyer_seller import BuyerSeller, parse_action

GAME = BuyerSeller.spec.name
Policy = Callable[[Turn], str]


def play(seed: int, first: Policy, second: Policy, config: Mapping[str, object] | None = None) -> BuyerSeller:
    state = BuyerSeller.new(config, seed)
    policies = (first, second)
    while not state.is_over:
        seat = state.to_move()[0]
        state.step({seat: policies[seat](Turn.of(state, seat))})
    return state


def trader(seed: int = 0, **options: float) -> FairTrader:
    return FairTrader(GAME, seed, **options)


def price_of(action: str) -> int | None:
    return parse_action(action)[0]


def stubborn(price: int) -> Policy:
    return lambda turn: f"offer {price}: not a cent more"


@pytest.mark.parametrize(("information", "opening"), [("two-sided", 80), ("one-sided", 80), ("complete", 71)])
def test_the_seller_opens_at_the_top_of_what_the_buyer_may_pay(information: str, opening: int) -> None:
    state = BuyerSeller.new({"information": information}, 3)  # cost 38, value 71
    assert price_of(trader().act(Turn.of(state, 0))) == opening


def test_concedes_step_by_step_toward_the_midpoint_of_its_estimate() -> None:
    # Seed 3, two-sided: the seller (cost 38) estimates the value as 65, the middle of 50..80, so aims at 51.5.
    state = play(3, trader().act, stubborn(20))
    asks = [take for take, _ in state.log[::2]]
    assert asks[0] == 80
    assert all(later <= earlier for earlier, later in itertools.pairwise(asks))
    # Turn 9 of 10: 80 + (51.5 - 80) x 8/9 = 54.67, rounded up in its favour.
    assert asks[-1] == 55
    assert not state.agreed


def test_a_buyers_high_bid_raises_the_sellers_estimate_of_the_value() -> None:
    state = BuyerSeller.new(None, 3)
    state.step({0: "offer 80"})
    state.step({1: "offer 70"})
    assert estimate(state.observe(0).data) == (38, 70)
    assert estimate(state.observe(1).data) == (35, 71)  # the buyer: the middle of 20..50, below the seller's 80


def test_accepts_an_offer_at_least_as_good_as_its_own_next_one() -> None:
    state = BuyerSeller.new(None, 3)
    state.step({0: "offer 80"})
    state.step({1: "offer 75"})  # the seller would ask 80 + (56.5 - 80) x 2/9 = 74.8 -> 75 now
    assert trader().act(Turn.of(state, 0)).startswith("accept")
    state = BuyerSeller.new(None, 3)
    state.step({0: "offer 80"})
    state.step({1: "offer 74"})
    assert price_of(trader().act(Turn.of(state, 0))) == 75


def test_takes_any_offer_without_a_loss_on_the_last_turn_but_never_one_with_a_loss() -> None:
    state = BuyerSeller.new({"max_turns": 2}, 3)  # the buyer's value is 71
    state.step({0: "offer 71"})
    assert trader().act(Turn.of(state, 1)) == "accept: Deal at 71."
    state = BuyerSeller.new({"max_turns": 2}, 3)
    state.step({0: "offer 72"})
    assert price_of(trader().act(Turn.of(state, 1))) is not None


@pytest.mark.parametrize("seat", [0, 1])
def test_never_offers_at_a_loss(seat: int) -> None:
    for seed in range(30):
        policies = (trader(seed).act, stubborn(20)) if seat == 0 else (stubborn(80), trader(seed).act)
        state = play(seed, *policies)
        offers = [take for take, _ in state.log[seat::2] if take is not None]
        assert offers
        assert all(price >= state.cost for price in offers) if seat == 0 else all(price <= state.value for price in offers)


def test_two_fair_traders_deal_close_to_the_reference_price_under_complete_information() -> None:
    distances = []
    for seed in range(40):
        state = play(seed, trader(seed).act, trader(seed + 1).act, {"information": "complete"})
        assert state.agreed
        distances.append(state.outcome()["distance_from_reference"])
    assert statistics.mean(distances) < 3


@pytest.mark.parametrize("seat", [0, 1])
def test_a_fair_trader_earns_more_against_a_random_player_than_a_random_player_does(seat: int) -> None:
    fair, chance = [], []
    for seed in range(40):
        rng = random.Random(seed)

        def random_policy(turn: Turn, rng: random.Random = rng) -> str:
            return BuyerSeller.random_free_action(turn.observation, rng)

        policies = [random_policy, random_policy]
        chance.append(play(seed, *policies).returns()[seat])
        policies[seat] = trader(seed).act
        fair.append(play(seed, *policies).returns()[seat])
    assert statistics.mean(fair) > statistics.mean(chance) + 5


def test_every_action_is_legal_and_messages_respect_the_limit() -> None:
    for config in ({}, {"message_chars": 5}):
        for seed in range(10):
            state = BuyerSeller.new(config, seed)
            bots = (trader(seed), trader(seed + 1))
            while not state.is_over:
                seat = state.to_move()[0]
                action = bots[seat].act(Turn.of(state, seat))
                assert state.validate(seat, action) == action
                state.step({seat: action})


def test_options_come_from_the_spec_and_are_checked() -> None:
    bot = make_bot("fair-trader:concede=0.5", GAME)
    assert isinstance(bot, FairTrader) and bot.concede == 0.5
    with pytest.raises(BotSpecError, match="'concede'"):
        make_bot("fair-trader:concede=2", GAME)
    with pytest.raises(BotSpecError, match="plays buyer-seller"):
        make_bot("fair-trader", "item-negotiation")
