"""The Leduc hold'em heuristic: its decision rule at each kind of spot, its bluffing rate,
that it always answers legally, and that it beats a random player by a wide margin."""

from __future__ import annotations

from functools import cache

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.leduc_holdem import LeducHeuristic
from bots.reference.random_bot import RandomBot
from bots.registry import make_bot
from games.api import ConfigError
from games.leduc_holdem import LeducHoldem

GAME = LeducHoldem.spec.name


@cache
def seeds_by_deal() -> dict[str, int]:
    """The first seed dealing each "<seat 0's card><seat 1's card><public card>"."""
    found: dict[str, int] = {}
    seed = 0
    while len(found) < 24:
        game = LeducHoldem.new(None, seed)
        found.setdefault(game.private_info(0) + game.private_info(1) + "JQK"[game.public_card], seed)
        seed += 1
    return found


def deal(cards: str, actions: str = "") -> LeducHoldem:
    game = LeducHoldem.new(None, seeds_by_deal()[cards])
    for action in actions.split():
        game.step({game.to_move()[0]: action})
    return game


def decision(cards: str, actions: str = "", bluff: float = 0.0) -> dict[str, float]:
    game = deal(cards, actions)
    return LeducHeuristic(GAME, bluff=bluff).action_probabilities(Turn.of(game, game.to_move()[0]))


@pytest.mark.parametrize(
    ("cards", "actions", "expected"),
    [
        # A K raises when it can and calls when it cannot.
        ("KJQ", "", {"raise": 1.0}),
        ("JKQ", "raise", {"raise": 1.0}),
        ("KJQ", "raise raise", {"call": 1.0}),
        # A Q checks, and calls any bet.
        ("QJK", "", {"check": 1.0}),
        ("JQK", "raise", {"call": 1.0}),
        ("KQJ", "check raise raise", {"call": 1.0}),
        # A J checks and folds to a bet...
        ("JQK", "", {"check": 1.0, "raise": 0.0}),
        ("QJK", "raise", {"fold": 1.0}),
        # ...unless it pairs the public card, which makes it the strongest hand.
        ("JQJ", "check check", {"raise": 1.0}),
        ("QJJ", "check check raise", {"raise": 1.0}),
        # Any pair raises; an unpaired Q still only calls.
        ("QKQ", "check check", {"raise": 1.0}),
        ("QKK", "check check raise", {"raise": 1.0}),
        ("JQK", "check check raise", {"call": 1.0}),
    ],
)
def test_it_bets_strong_hands_calls_middling_ones_and_gives_up_weak_ones(
    cards: str, actions: str, expected: dict[str, float]
) -> None:
    assert decision(cards, actions) == expected


def test_it_bluffs_a_jack_at_the_stated_rate_and_never_against_a_bet() -> None:
    assert decision("JQK", bluff=0.25) == {"check": 0.75, "raise": 0.25}
    assert decision("QJK", "raise", bluff=0.25) == {"fold": 1.0}
    game = deal("JQK")
    turn = Turn.of(game, 0)
    bot = LeducHeuristic(GAME, seed=5, bluff=0.25)
    choices = [bot.act(turn) for _ in range(4000)]
    assert 900 < choices.count("raise") < 1100
    assert choices.count("raise") + choices.count("check") == 4000
    again = LeducHeuristic(GAME, seed=5, bluff=0.25)
    assert [again.act(turn) for _ in range(4000)] == choices


@pytest.mark.parametrize("bluff", [0.0, 0.5, 1.0])
def test_it_only_ever_chooses_legal_actions(bluff: float) -> None:
    bot = LeducHeuristic(GAME, seed=1, bluff=bluff)
    frontier = [deal(cards) for cards in seeds_by_deal()]
    visited = 0
    while frontier:
        game = frontier.pop()
        if game.is_over:
            continue
        turn = Turn.of(game, game.to_move()[0])
        probabilities = bot.action_probabilities(turn)
        assert set(probabilities) <= set(turn.legal_actions or ())
        assert sum(probabilities.values()) == pytest.approx(1.0)
        assert bot.act(turn) in probabilities
        visited += 1
        for action in turn.legal_actions or ():
            child = game.clone()
            child.step({turn.seat: action})
            frontier.append(child)
    assert visited > 24 * 20


def play_hand(first: Bot, second: Bot, seed: int) -> tuple[float, ...]:
    game = LeducHoldem.new(None, seed)
    bots = (first, second)
    while not game.is_over:
        turn = Turn.of(game, game.to_move()[0])
        game.step({turn.seat: bots[turn.seat].act(turn)})
    return game.returns()


def test_it_beats_random_by_over_half_a_chip_a_hand_from_either_seat() -> None:
    hands = 300
    as_first = sum(play_hand(LeducHeuristic(GAME, seed), RandomBot(GAME, 10_000 + seed), seed)[0] for seed in range(hands))
    as_second = sum(play_hand(RandomBot(GAME, 10_000 + seed), LeducHeuristic(GAME, seed), seed)[1] for seed in range(hands))
    # Measured: about +1.2 chips a hand in either seat.
    assert as_first / hands > 0.5
    assert as_second / hands > 0.5


def test_make_bot_parses_bluff_and_rejects_bad_values() -> None:
    bot = make_bot("leduc-heuristic:bluff=0.3", GAME)
    assert isinstance(bot, LeducHeuristic) and bot.bluff == 0.3
    assert LeducHeuristic.showcase
    for raw in ("-0.1", "1.5"):
        with pytest.raises(ConfigError, match="'bluff' must be between 0 and 1"):
            make_bot(f"leduc-heuristic:bluff={raw}", GAME)
    with pytest.raises(ConfigError, match="leduc-holdem"):
        make_bot("leduc-heuristic", "kuhn-poker")
