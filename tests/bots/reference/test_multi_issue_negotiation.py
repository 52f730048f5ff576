"""The logroller: what it demands, which issues it gives up first, what it accepts, how well it trades."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest

from arena.seats import Turn
from bots.reference.multi_issue_negotiation import Logroller, guess_their_care
from bots.registry import BotSpecError, make_bot
from games.multi_issue_negotiation import MultiIssueNegotiation

GAME = MultiIssueNegotiation.spec.name
Policy = Callable[[Turn], str]


def logroller(seed: int = 0, **options: float) -> Logroller:
    return Logroller(GAME, seed, **options)


def play(seed: int, first: Policy, second: Policy) -> MultiIssueNegotiation:
    state = MultiIssueNegotiation.new(None, seed)
    policies = (first, second)
    while not state.is_over:
        seat = state.to_move()[0]
        state.step({seat: policies[seat](Turn.of(state, seat))})
    return state


def random_policy(seed: int) -> Policy:
    rng = random.Random(seed)
    return lambda turn: MultiIssueNegotiation.random_free_action(turn.observation, rng)


def test_opens_by_asking_for_its_own_end_of_every_issue_and_names_its_priority() -> None:
    state = MultiIssueNegotiation.new(None, 1)  # seat 0 weighs price 5, delivery 70, warranty 25
    assert logroller().act(Turn.of(state, 0)) == "propose 4 4 4: Delivery matters most to me."


@pytest.mark.parametrize(
    ("demand", "package"), [(100, (4, 4, 4)), (95, (0, 4, 4)), (90, (0, 4, 4)), (80, (0, 4, 2)), (30, (0, 2, 0))]
)
def test_gives_up_its_least_weighted_issues_first(demand: float, package: tuple[int, ...]) -> None:
    # Price (5) goes first, 1.25 a level, then warranty (25), 6.25 a level, then delivery (70), 17.5 a level:
    # demand 95 or 90 gives up price only (95; one level of warranty would leave 88.75); demand 80: warranty
    # down two levels too (82.5); demand 30: warranty gone (70), delivery down to 2 (35).
    data = MultiIssueNegotiation.new(None, 1).observe(0).data
    assert logroller().proposal(data, demand) == package


def test_among_equal_weights_it_gives_way_where_the_other_side_pushed_hardest() -> None:
    state = MultiIssueNegotiation.new({"issues": 2}, 0)
    state.weights = ((50, 50), (50, 50))
    state.step({0: "propose 4 4"})
    state.step({1: "propose 4 0"})  # seat 1 (wants low) gave up price and insisted on delivery
    data = state.observe(0).data
    assert guess_their_care(data) == [0.0, 1.0]
    assert logroller().proposal(data, 75) == (4, 2)


def test_demand_falls_from_everything_to_the_floor() -> None:
    bot = logroller(floor=0.6)
    assert bot.demand(1, 10) == 100
    assert bot.demand(10, 10) == pytest.approx(60)
    assert bot.demand(4, 10) == pytest.approx(100 - 40 * 3 / 9)


def test_accepts_a_proposal_that_meets_its_demand_and_anything_on_the_last_turn() -> None:
    state = MultiIssueNegotiation.new({"max_turns": 3}, 1)
    state.step({0: "propose 4 4 4"})
    state.step({1: "propose 4 4 3"})  # worth 93.75 to seat 0; its demand on turn 3 of 3 is the floor, 50
    assert logroller().act(Turn.of(state, 0)) == "accept: Agreed."
    state = MultiIssueNegotiation.new({"max_turns": 2}, 1)
    state.step({0: "propose 4 4 4"})  # worth 0 to seat 1, but the alternative is no deal
    assert logroller().act(Turn.of(state, 1)).startswith("accept")


def test_rejects_a_proposal_below_its_demand() -> None:
    state = MultiIssueNegotiation.new(None, 1)
    state.step({0: "propose 4 4 4"})
    assert logroller().act(Turn.of(state, 1)).startswith("propose")


def test_two_logrollers_deal_and_both_beat_a_random_player_in_its_seat() -> None:
    deals = 0
    mine: list[float] = []
    chance: list[float] = []
    for seed in range(30):
        state = play(seed, logroller(seed).act, logroller(seed + 1).act)
        deals += state.agreed
        mine.append(play(seed, logroller(seed).act, random_policy(seed)).returns()[0])
        chance.append(play(seed, random_policy(seed + 7), random_policy(seed)).returns()[0])
    assert deals >= 28
    assert statistics.mean(mine) > statistics.mean(chance) + 10


def test_two_logrollers_find_integrative_deals() -> None:
    """Both average above 50, what splitting every issue in the middle would give each."""
    returns = [play(seed, logroller(seed).act, logroller(seed + 1).act).returns() for seed in range(30)]
    assert statistics.mean(r[0] for r in returns) > 55
    assert statistics.mean(r[1] for r in returns) > 55


def test_every_action_is_legal() -> None:
    for config in ({}, {"issues": 5, "options": 3, "message_chars": 10}):
        for seed in range(10):
            state = MultiIssueNegotiation.new(config, seed)
            bots = (logroller(seed), logroller(seed + 1))
            while not state.is_over:
                seat = state.to_move()[0]
                action = bots[seat].act(Turn.of(state, seat))
                assert state.validate(seat, action) == action
                state.step({seat: action})


def test_options_come_from_the_spec_and_are_checked() -> None:
    bot = make_bot("logroller:floor=0.7", GAME)
    assert isinstance(bot, Logroller) and bot.floor == 0.7
    with pytest.raises(BotSpecError, match="'floor'"):
        make_bot("logroller:floor=-1", GAME)
