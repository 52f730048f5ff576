"""The heuristic negotiator: when it accepts, what it proposes, and how it fares."""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Mapping

import pytest

from arena.seats import Turn
from bots.reference.negotiation import NegotiationHeuristic
from bots.registry import BotSpecError, make_bot
from games.item_negotiation import ItemNegotiation, format_action, parse_action, worth

GAME = ItemNegotiation.spec.name
Policy = Callable[[Turn], str]


def turn_for(state: ItemNegotiation, seat: int) -> Turn:
    return Turn.of(state, seat)


def play(seed: int, first: Policy, second: Policy, config: Mapping[str, object] | None = None) -> ItemNegotiation:
    state = ItemNegotiation.new(config, seed)
    policies = (first, second)
    while not state.is_over:
        seat = state.to_move()[0]
        state.step({seat: policies[seat](turn_for(state, seat))})
    return state


def heuristic(seed: int = 0, **options: float) -> NegotiationHeuristic:
    return NegotiationHeuristic(GAME, seed, **options)


def offer_worth(state: ItemNegotiation, seat: int, value: int) -> str:
    """A proposal by the seat to move that leaves ``seat`` a share worth exactly ``value``
    to it, by the values in its own observation."""
    data = state.observe(seat).data
    for kept in itertools.product(*(range(n + 1) for n in data["counts"])):
        given = [n - k for n, k in zip(data["counts"], kept, strict=True)]
        if worth(data["my_values"], given) == value:
            return format_action(kept)
    raise AssertionError(f"no share worth {value} in seed {state.seed}")


def test_accepts_an_offer_at_or_above_its_threshold() -> None:
    bot = heuristic()
    accept, _ = bot.thresholds(2, 10)
    assert 5 < accept * 10 <= 6
    state = ItemNegotiation.new(None, 3)
    state.step({0: offer_worth(state, 1, 6)})
    assert parse_action(bot.act(turn_for(state, 1)), state.config.items)[0] is None


def test_counter_proposes_when_an_offer_is_below_its_threshold() -> None:
    bot = heuristic()
    state = ItemNegotiation.new(None, 3)
    state.step({0: offer_worth(state, 1, 4)})
    action = bot.act(turn_for(state, 1))
    take, message = parse_action(action, state.config.items)
    assert take is not None and message
    assert worth(state.values[1], take) > 4
    state.step({1: action})


def test_a_higher_accept_at_rejects_what_the_default_accepts() -> None:
    state = ItemNegotiation.new(None, 3)
    state.step({0: offer_worth(state, 1, 6)})
    assert heuristic(accept_at=0.9).act(turn_for(state, 1)).startswith("propose")


def test_accepts_anything_on_the_last_turn_rather_than_leave_with_nothing() -> None:
    state = ItemNegotiation.new({"max_turns": 2}, 3)
    state.step({0: offer_worth(state, 1, 0)})
    assert heuristic().act(turn_for(state, 1)).startswith("accept")


def test_first_proposal_keeps_every_item_it_values_and_gives_away_the_rest() -> None:
    state = ItemNegotiation.new(None, 3)  # seat 1 values books 3, hats 4, balls 0
    state.step({0: "propose 2 1 1"})
    assert parse_action(heuristic().act(turn_for(state, 1)), state.config.items)[0] == (2, 1, 0)


def test_concedes_more_as_the_turns_run_out() -> None:
    def stubborn(turn: Turn) -> str:
        return format_action(turn.observation.data["counts"], "all mine")

    state = play(3, heuristic().act, stubborn)
    assert not state.agreed
    own = [worth(state.values[0], take) for take, _ in state.log[::2] if take is not None]
    assert len(own) == 5
    assert all(later <= earlier for earlier, later in itertools.pairwise(own))
    assert own[-1] < own[0]


@pytest.mark.parametrize(("theirs", "expected"), [("propose 0 1 3", (4, 0, 2)), ("propose 4 1 1", (2, 0, 3))])
def test_gives_up_what_the_other_sides_proposals_showed_it_wants(theirs: str, expected: tuple[int, ...]) -> None:
    # Seed 1: pool books 4, hats 1, balls 3; seat 0 values books 1, hats 0, balls 2. At turn 5 it
    # demands 8: two books and the balls, or four books and two balls; it gives what they asked for.
    state = ItemNegotiation.new(None, 1)
    assert state.observe(0).data["my_values"] == [1, 0, 2]
    for _ in range(2):
        state.step({0: "propose 4 1 3"})
        state.step({1: theirs})
    assert parse_action(heuristic().act(turn_for(state, 0)), state.config.items)[0] == expected


def test_every_action_is_legal_and_carries_a_short_polite_message() -> None:
    for seed in range(20):
        state = ItemNegotiation.new(None, seed)
        bots = (heuristic(seed), heuristic(seed + 1))
        while not state.is_over:
            seat = state.to_move()[0]
            action = bots[seat].act(turn_for(state, seat))
            assert state.validate(seat, action) == action
            _, message = parse_action(action, state.config.items)
            assert 0 < len(message) <= 60
            state.step({seat: action})


def test_two_heuristic_bots_nearly_always_deal_and_beat_two_random_bots() -> None:
    heuristic_returns: list[float] = []
    random_returns: list[float] = []
    deals = 0
    for seed in range(20):
        state = play(seed, heuristic(seed).act, heuristic(seed + 100).act)
        deals += state.agreed
        heuristic_returns += state.returns()
        rng = random.Random(seed)

        def random_policy(turn: Turn, rng: random.Random = rng) -> str:
            return ItemNegotiation.random_free_action(turn.observation, rng)

        random_returns += play(seed, random_policy, random_policy).returns()
    assert deals >= 18
    assert statistics.mean(heuristic_returns) > statistics.mean(random_returns) + 1


def test_options_come_from_the_spec_and_are_checked() -> None:
    bot = make_bot("negotiation-heuristic:accept_at=0.8,concede=0.25", GAME)
    assert isinstance(bot, NegotiationHeuristic)
    assert (bot.accept_at, bot.concede) == (0.8, 0.25)
    with pytest.raises(BotSpecError, match="'accept_at'"):
        make_bot("negotiation-heuristic:accept_at=1.5", GAME)
    with pytest.raises(BotSpecError, match="'concede'"):
        heuristic(concede=-0.1)
