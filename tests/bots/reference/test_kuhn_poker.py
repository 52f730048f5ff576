"""The Kuhn poker equilibrium bot, checked exactly: every deal and every action is
enumerated through the game engine (no sampling), weighted by the bot's own stated
probabilities, to get the game value and the best response against it."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from functools import cache

import pytest

from arena.seats import Turn
from bots.reference.kuhn_poker import THIRD, KuhnEquilibrium
from bots.registry import make_bot
from games.api import ConfigError
from games.kuhn_poker import KuhnPoker

Policy = Callable[[Turn], Mapping[str, float]]
InfoSet = tuple[str, tuple[str, ...]]
ALPHAS = (0.0, 1.0 / 6.0, THIRD)
GAME_VALUE = -1.0 / 18.0
"""Seat 0's expected return under any equilibrium (Kuhn 1950)."""


@cache
def initial_states() -> tuple[KuhnPoker, ...]:
    """One fresh hand per deal, each from the first seed that deals it."""
    by_deal: dict[tuple[str, str], KuhnPoker] = {}
    seed = 0
    while len(by_deal) < 6:
        game = KuhnPoker.new(None, seed)
        by_deal.setdefault((game.observe(0).data["card"], game.observe(1).data["card"]), game)
        seed += 1
    return tuple(by_deal[key] for key in sorted(by_deal))


def turn_for(game: KuhnPoker) -> Turn:
    return Turn.of(game, game.to_move()[0])


def info_set(turn: Turn) -> InfoSet:
    """What the mover knows: its own card and the public betting."""
    return (turn.observation.data["card"], tuple(turn.observation.data["history"]))


def expected_return(game: KuhnPoker, seat: int, policies: tuple[Policy, Policy]) -> float:
    """``seat``'s exact expected return from ``game`` when each seat plays its policy."""
    if game.is_over:
        return game.returns()[seat]
    turn = turn_for(game)
    total = 0.0
    for action, probability in policies[turn.seat](turn).items():
        if probability > 0.0:
            child = game.clone()
            child.step({turn.seat: action})
            total += probability * expected_return(child, seat, policies)
    return total


def value(seat: int, policies: tuple[Policy, Policy]) -> float:
    """Over the six equally likely deals."""
    return sum(expected_return(game, seat, policies) for game in initial_states()) / 6


def information_sets(seat: int) -> list[InfoSet]:
    """Every information set where ``seat`` acts, found by walking the whole tree."""
    found: set[InfoSet] = set()
    frontier = list(initial_states())
    while frontier:
        game = frontier.pop()
        if game.is_over:
            continue
        turn = turn_for(game)
        if turn.seat == seat:
            found.add(info_set(turn))
        for action in turn.legal_actions or ():
            child = game.clone()
            child.step({turn.seat: action})
            frontier.append(child)
    return sorted(found)


def best_response_value(seat: int, opponent: Policy) -> float:
    """The most ``seat`` can expect against ``opponent``: the best pure strategy, a map
    from each of the seat's information sets to one action. (A seat cannot tell apart
    states that differ only in the other card, so it must choose per information set.)"""
    sets = information_sets(seat)
    options = [("fold", "call") if history and history[-1] == "bet" else ("check", "bet") for _, history in sets]
    best = float("-inf")
    for choice in itertools.product(*options):
        plan = dict(zip(sets, choice, strict=True))

        def pure(turn: Turn, plan: dict[InfoSet, str] = plan) -> dict[str, float]:
            return {plan[info_set(turn)]: 1.0}

        policies: tuple[Policy, Policy] = (pure, opponent) if seat == 0 else (opponent, pure)
        best = max(best, value(seat, policies))
    return best


def uniform(turn: Turn) -> dict[str, float]:
    legal = turn.legal_actions or ()
    return {action: 1.0 / len(legal) for action in legal}


def test_each_seat_acts_at_six_information_sets() -> None:
    assert information_sets(0) == [(card, history) for card in "JKQ" for history in ((), ("check", "bet"))]
    assert information_sets(1) == [(card, history) for card in "JKQ" for history in (("bet",), ("check",))]


@pytest.mark.parametrize("alpha", ALPHAS)
def test_probabilities_cover_the_legal_actions_and_sum_to_one(alpha: float) -> None:
    bot = KuhnEquilibrium("kuhn-poker", alpha=alpha)
    frontier = list(initial_states())
    while frontier:
        game = frontier.pop()
        if game.is_over:
            continue
        turn = turn_for(game)
        probabilities = bot.action_probabilities(turn)
        assert list(probabilities) == list(turn.legal_actions or ())
        assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-15)
        assert all(0.0 <= p <= 1.0 for p in probabilities.values())
        for action in turn.legal_actions or ():
            child = game.clone()
            child.step({turn.seat: action})
            frontier.append(child)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_equilibrium_against_itself_is_worth_minus_one_eighteenth_to_seat_0(alpha: float) -> None:
    bot = KuhnEquilibrium("kuhn-poker", alpha=alpha)
    policies = (bot.action_probabilities, bot.action_probabilities)
    assert value(0, policies) == pytest.approx(GAME_VALUE, abs=1e-12)
    assert value(1, policies) == pytest.approx(-GAME_VALUE, abs=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seat", [0, 1])
def test_a_best_response_gains_nothing_against_the_equilibrium(alpha: float, seat: int) -> None:
    bot = KuhnEquilibrium("kuhn-poker", alpha=alpha)
    equilibrium_value = GAME_VALUE if seat == 0 else -GAME_VALUE
    gain = best_response_value(seat, bot.action_probabilities) - equilibrium_value
    # Rounding alone may leave the gain a hair below zero.
    assert -1e-12 <= gain <= 1e-9


def test_the_best_response_does_exploit_a_uniformly_random_player() -> None:
    assert best_response_value(0, uniform) > value(0, (uniform, uniform)) + 0.1
    assert best_response_value(1, uniform) > value(1, (uniform, uniform)) + 0.1


def test_the_strategy_matches_kuhns_table() -> None:
    alpha = 0.2
    bot = KuhnEquilibrium("kuhn-poker", alpha=alpha)
    expected = {
        ("J", ()): {"check": 1 - alpha, "bet": alpha},
        ("Q", ()): {"check": 1.0, "bet": 0.0},
        ("K", ()): {"check": 1 - 3 * alpha, "bet": 3 * alpha},
        ("J", ("check", "bet")): {"fold": 1.0, "call": 0.0},
        ("Q", ("check", "bet")): {"fold": 1 - alpha - 1 / 3, "call": alpha + 1 / 3},
        ("K", ("check", "bet")): {"fold": 0.0, "call": 1.0},
        ("J", ("check",)): {"check": 2 / 3, "bet": 1 / 3},
        ("Q", ("check",)): {"check": 1.0, "bet": 0.0},
        ("K", ("check",)): {"check": 0.0, "bet": 1.0},
        ("J", ("bet",)): {"fold": 1.0, "call": 0.0},
        ("Q", ("bet",)): {"fold": 2 / 3, "call": 1 / 3},
        ("K", ("bet",)): {"fold": 0.0, "call": 1.0},
    }
    seen = set()
    frontier = list(initial_states())
    while frontier:
        game = frontier.pop()
        if game.is_over:
            continue
        turn = turn_for(game)
        key = info_set(turn)
        seen.add(key)
        assert bot.action_probabilities(turn) == pytest.approx(expected[key], abs=1e-15), key
        for action in turn.legal_actions or ():
            child = game.clone()
            child.step({turn.seat: action})
            frontier.append(child)
    assert seen == set(expected)


def test_act_samples_the_stated_mix_with_its_own_generator() -> None:
    opening_with_jack = next(game for game in initial_states() if game.observe(0).data["card"] == "J")
    turn = turn_for(opening_with_jack)
    bot = KuhnEquilibrium("kuhn-poker", seed=7, alpha=THIRD)
    choices = [bot.act(turn) for _ in range(3000)]
    assert 900 < choices.count("bet") < 1100
    assert choices.count("bet") + choices.count("check") == 3000
    replay = KuhnEquilibrium("kuhn-poker", seed=7, alpha=THIRD)
    assert [replay.act(turn) for _ in range(3000)] == choices


def test_pure_choices_are_always_taken() -> None:
    king_facing_bet = next(game for game in initial_states() if game.observe(1).data["card"] == "K").clone()
    king_facing_bet.step({0: "bet"})
    bot = KuhnEquilibrium("kuhn-poker", seed=3, alpha=0.0)
    assert {bot.act(turn_for(king_facing_bet)) for _ in range(200)} == {"call"}


def test_make_bot_parses_alpha_and_rejects_values_outside_the_family() -> None:
    bot = make_bot("equilibrium:alpha=0.1", "kuhn-poker")
    assert isinstance(bot, KuhnEquilibrium)
    assert bot.alpha == 0.1
    assert make_bot("equilibrium:alpha=0.3333333333", "kuhn-poker").alpha == pytest.approx(THIRD)
    for raw in ("0.5", "-0.1", "1"):
        with pytest.raises(ConfigError, match="'alpha' must be between 0 and 1/3"):
            make_bot(f"equilibrium:alpha={raw}", "kuhn-poker")
    with pytest.raises(ConfigError, match="'alpha' must be a number"):
        make_bot("equilibrium:alpha=lots", "kuhn-poker")
    with pytest.raises(ConfigError, match="kuhn-poker"):
        make_bot("equilibrium", "connect-four")
