"""The minimal-winning coalition builder: its prices, proposals and votes, and its matches."""

from __future__ import annotations

import pytest

from arena.seats import Turn
from bots.reference.coalition_bargaining import MinimalWinning, asking_prices, continuation_value
from bots.registry import BotSpecError, make_bot
from games.coalition_bargaining import CoalitionBargaining

GAME = CoalitionBargaining.spec.name


def builder(seed: int = 0, **options: int) -> MinimalWinning:
    return MinimalWinning(GAME, seed, **options)


def shares_of(action: str) -> list[int]:
    head = action.partition(":")[0]
    return [int(word) for word in head.split()[1:]]


def test_the_continuation_value_is_an_equal_share_of_the_next_pie() -> None:
    state = CoalitionBargaining.new(None, 0)  # pies 100, 90, 81, 72, 64
    assert continuation_value(state.observe(0).data) == 30.0
    last = CoalitionBargaining.new({"max_rounds": 1}, 0)
    assert continuation_value(last.observe(0).data) == 0.0


def test_buys_one_partner_at_its_continuation_value_and_keeps_the_rest() -> None:
    proposals = {tuple(shares_of(builder(seed).act(Turn.of(CoalitionBargaining.new(None, 0), 0)))) for seed in range(20)}
    assert proposals == {(70, 30, 0), (70, 0, 30)}


@pytest.mark.parametrize(("players", "kept", "paid"), [(4, 54, 23), (5, 64, 18)])
def test_buys_just_a_majority_in_larger_games(players: int, kept: int, paid: int) -> None:
    # The next pie is 90: each seat can expect 90 / 4 = 22.5 (rounded up to 23) or 90 / 5 = 18; two partners are needed.
    shares = shares_of(builder().act(Turn.of(CoalitionBargaining.new({"players": players}, 0), 0)))
    assert shares[0] == kept and sorted(shares[1:]) == [0] * (players - 3) + [paid, paid]


def test_a_seat_that_voted_a_share_down_is_priced_above_it() -> None:
    state = CoalitionBargaining.new(None, 0)
    state.step({0: "propose 20 40 40"})
    state.step({1: "no", 2: "no"})
    data = state.observe(1).data
    # Round 2: everyone can expect 81 / 3 = 27; seat 2 turned down 40, so it asks 41. Seat 0 only ever said yes.
    assert asking_prices(data) == {0: 27, 2: 41}
    assert builder().act(Turn.of(state, 1)).startswith("propose 27 63 0: Seat 0 gets 27")


@pytest.mark.parametrize(("share", "vote"), [(29, "no"), (30, "yes"), (100, "yes")])
def test_votes_yes_when_its_share_reaches_its_continuation_value(share: int, vote: str) -> None:
    state = CoalitionBargaining.new(None, 0)
    state.step({0: f"propose {100 - share} {share} 0"})
    assert builder().act(Turn.of(state, 1)).startswith(vote)


def test_in_the_last_round_it_takes_everything_and_accepts_anything() -> None:
    state = CoalitionBargaining.new({"max_rounds": 1}, 0)
    assert shares_of(builder().act(Turn.of(state, 0))) == [100, 0, 0]
    state.step({0: "propose 100 0 0"})
    assert builder().act(Turn.of(state, 1)).startswith("yes")


def test_the_sweetener_adds_to_each_partner_as_far_as_the_pie_allows() -> None:
    state = CoalitionBargaining.new(None, 0)
    assert sorted(shares_of(builder(sweetener=5).act(Turn.of(state, 0)))) == [0, 35, 65]
    assert sorted(shares_of(builder(sweetener=500).act(Turn.of(state, 0)))) == [0, 0, 100]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_table_of_builders_agrees_in_the_first_round(players: int) -> None:
    state = CoalitionBargaining.new({"players": players}, 0)
    bots = [builder(seat) for seat in range(players)]
    while not state.is_over:
        actions = {seat: bots[seat].act(Turn.of(state, seat)) for seat in state.to_move()}
        for seat, action in actions.items():
            assert state.validate(seat, action) == action
        state.step(actions)
    assert len(state.votes) == 1 and sum(state.returns()) == 100.0


def test_every_action_is_legal_against_stubborn_voters_and_tight_limits() -> None:
    for config in ({}, {"players": 5, "message_chars": 2, "pie": 7, "shrink": 0.5}):
        state = CoalitionBargaining.new(config, 0)
        bots = [builder(seat) for seat in range(state.num_players)]
        while not state.is_over:
            actions = {}
            for seat in state.to_move():
                action = bots[seat].act(Turn.of(state, seat))
                assert state.validate(seat, action) == action
                actions[seat] = action if state.proposal is None or seat % 2 == 0 else "no"
            state.step(actions)


def test_options_come_from_the_spec_and_are_checked() -> None:
    bot = make_bot("minimal-winning:sweetener=3", GAME)
    assert isinstance(bot, MinimalWinning) and bot.sweetener == 3
    with pytest.raises(BotSpecError, match="'sweetener'"):
        make_bot("minimal-winning:sweetener=-1", GAME)
