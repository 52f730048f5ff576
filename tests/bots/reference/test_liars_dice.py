"""The Liar's dice heuristic: its odds are exact binomial tails, it bids the strongest
claim it believes, challenges claims it doubts, always answers legally, and beats a
random player by a wide margin at two and at four seats."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.liars_dice import LiarsDiceHeuristic, holds_probability
from bots.reference.random_bot import RandomBot
from bots.registry import make_bot
from games.api import ConfigError
from games.liars_dice import LiarsDice

GAME = LiarsDice.spec.name


def play(actions: str, config: Mapping[str, object] | None = None, seed: int = 0) -> LiarsDice:
    game = LiarsDice.new(config, seed)
    for action in filter(None, (a.strip() for a in actions.split(","))):
        game.step({game.to_move()[0]: action})
    return game


def answer(game: LiarsDice, challenge_below: float = 0.5) -> str:
    return LiarsDiceHeuristic(GAME, challenge_below=challenge_below).act(Turn.of(game, game.to_move()[0]))


def test_holds_probability_counts_own_dice_and_the_odds_of_the_rest() -> None:
    assert holds_probability(2, 6, [6, 6, 1], 5, 6, False) == 1.0
    assert holds_probability(3, 6, [6, 6, 1], 1, 6, False) == pytest.approx(1 / 6)
    assert holds_probability(3, 6, [6, 6, 1], 1, 6, True) == 1.0
    assert holds_probability(3, 6, [6, 2, 3], 2, 6, True) == pytest.approx(1 / 9)
    assert holds_probability(2, 1, [1, 6], 2, 6, True) == pytest.approx(1 - (5 / 6) ** 2)
    assert holds_probability(5, 6, [6], 3, 6, False) == 0.0
    # At least one 6 among five dice: 1 - (5/6)^5.
    assert holds_probability(3, 6, [1, 2, 5, 6, 6], 5, 6, False) == pytest.approx(1 - (5 / 6) ** 5)


def test_a_hand_checked_match_between_two_heuristics() -> None:
    game = play("")
    assert game.dice == ((1, 2, 5, 6, 6), (3, 5, 6, 6, 6))
    # Seat 0 holds two 6s: "3 6" needs one 6 among five unknown dice (0.60); "4 6" needs two (0.20).
    assert answer(game) == "3 6"
    game.step({0: "3 6"})
    # Seat 1 holds three 6s, so "3 6" is certain; "4 6" needs one more 6 (0.60).
    assert answer(game) == "4 6"
    game.step({1: "4 6"})
    # Seat 0 needs two 6s among seat 1's five dice (0.20): it calls liar, and loses, as seat 1 has three.
    assert answer(game) == "liar"
    game.step({0: "liar"})
    assert game.returns() == (-1.0, 1.0)


def test_it_never_challenges_a_bid_its_own_dice_prove() -> None:
    game = play("3 6")
    assert answer(game, challenge_below=1.0) != "liar"


def test_it_challenges_a_bid_likelier_false_than_any_raise_is_true_whatever_the_threshold() -> None:
    # Seat 0 (two 6s) facing "4 6" (0.20 to hold); its best raise, "5 6", holds with 0.035.
    assert answer(play("3 6, 4 6"), challenge_below=0.0) == "liar"


def test_it_challenges_the_highest_bid_when_no_raise_is_left() -> None:
    game = play("4 6", {"dice": 2})
    assert tuple(game.legal_actions(1)) == ("liar",)
    assert answer(game, challenge_below=0.0) == "liar"


def test_it_only_ever_chooses_legal_actions_in_any_config() -> None:
    rng = random.Random(4)
    for config in ({"dice": 1}, {"players": 3, "dice": 2, "wild_ones": True}, {"faces": 4, "dice": 3}, {"players": 6}):
        for seed in range(15):
            game = LiarsDice.new(config, seed)
            while not game.is_over:
                seat = game.to_move()[0]
                turn = Turn.of(game, seat)
                assert answer(game) in (turn.legal_actions or ())
                game.step({seat: rng.choice(turn.legal_actions or ())})


def mean_return(seat: int, players: int, games: int) -> float:
    total = 0.0
    for seed in range(games):
        bots: list[Bot] = [RandomBot(GAME, 100 * seed + i) for i in range(players)]
        bots[seat] = LiarsDiceHeuristic(GAME, seed)
        game = LiarsDice.new({"players": players}, seed)
        while not game.is_over:
            turn = Turn.of(game, game.to_move()[0])
            game.step({turn.seat: bots[turn.seat].act(turn)})
        total += game.returns()[seat]
    return total / games


@pytest.mark.parametrize("seat", [0, 1])
def test_it_beats_random_heads_up_from_either_seat(seat: int) -> None:
    # A random player's expectation is 0 and the most is +1; measured: about +0.9.
    assert mean_return(seat, 2, 200) > 0.6


def test_it_almost_never_loses_against_three_random_players() -> None:
    # +1/3 each time another seat loses, -1 when it does; measured: it never lost in 300 games.
    assert mean_return(2, 4, 100) > 0.25


def test_make_bot_parses_challenge_below_and_rejects_bad_values() -> None:
    bot = make_bot("liars-dice-heuristic:challenge_below=0.3", GAME)
    assert isinstance(bot, LiarsDiceHeuristic) and bot.challenge_below == 0.3
    assert LiarsDiceHeuristic.showcase
    with pytest.raises(ConfigError, match="'challenge_below' must be between 0 and 1"):
        make_bot("liars-dice-heuristic:challenge_below=2", GAME)
    with pytest.raises(ConfigError, match="liars-dice"):
        make_bot("liars-dice-heuristic", "goofspiel")
