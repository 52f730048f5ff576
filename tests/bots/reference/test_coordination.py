"""Coordination bots: the focal point always matches itself; followers converge after a round."""

from __future__ import annotations

import statistics

from arena.seats import Turn
from bots.base import Bot
from bots.reference.coordination import FocalPoint, FollowMajority
from bots.reference.random_bot import RandomBot
from games.coordination import Coordination

COLOURS = ("red", "blue", "green", "yellow")


def play(make: type[Bot], players: int, rounds: int, seed: int) -> float:
    game = Coordination.new({"players": players, "rounds": rounds, "options": COLOURS}, seed)
    bots = [make("coordination", players * seed + i) for i in range(players)]
    while not game.is_over:
        game.step({seat: bots[seat].act(Turn.of(game, seat)) for seat in game.to_move()})
    return game.returns()[0]


def test_the_focal_point_is_the_first_option_listed() -> None:
    game = Coordination.new({"options": ("tails", "heads")})
    assert FocalPoint("coordination", 0).act(Turn.of(game, 1)) == "tails"


def test_focal_point_bots_match_every_round_at_any_table() -> None:
    assert play(FocalPoint, 8, 3, 0) == 3.0
    assert play(FocalPoint, 2, 5, 1) == 5.0


def test_follow_majority_picks_at_random_first() -> None:
    game = Coordination.new({"options": COLOURS})
    assert {FollowMajority("coordination", seed).act(Turn.of(game, 0)) for seed in range(30)} == set(COLOURS)


def test_follow_majority_then_picks_last_round_most_common_choice() -> None:
    game = Coordination.new({"players": 5, "rounds": 2, "options": COLOURS})
    game.step({0: "blue", 1: "green", 2: "green", 3: "blue", 4: "green"})
    assert {FollowMajority("coordination", seed).act(Turn.of(game, 0)) for seed in range(10)} == {"green"}


def test_follow_majority_breaks_ties_towards_the_first_listed_option() -> None:
    game = Coordination.new({"players": 4, "rounds": 2, "options": COLOURS})
    game.step({0: "yellow", 1: "green", 2: "green", 3: "yellow"})
    assert FollowMajority("coordination", 0).act(Turn.of(game, 3)) == "green"


def test_followers_agree_from_the_second_round_on() -> None:
    for seed in range(10):
        assert play(FollowMajority, 4, 5, seed) >= 4.0


def test_both_bots_beat_random_choices() -> None:
    chance = statistics.mean(play(RandomBot, 3, 5, seed) for seed in range(40))
    assert chance < 1.0  # all three match one round in sixteen
    assert statistics.mean(play(FollowMajority, 3, 5, seed) for seed in range(40)) >= 4.0
