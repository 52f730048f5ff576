"""The Goofspiel matching bot: it bids the prize's own card every turn, falls back to the
nearest card when that one is gone, and beats a random bidder by a wide margin."""

from __future__ import annotations

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.goofspiel import GoofspielMatching
from bots.reference.random_bot import RandomBot
from bots.registry import make_bot
from games.api import ConfigError
from games.goofspiel import Goofspiel

GAME = Goofspiel.spec.name


def play(bots: list[Bot], seed: int, config: dict[str, object] | None = None) -> Goofspiel:
    game = Goofspiel.new(config, seed)
    while not game.is_over:
        game.step({seat: bots[seat].act(Turn.of(game, seat)) for seat in game.to_move()})
    return game


def test_it_bids_the_prize_every_turn() -> None:
    for seed in range(5):
        game = play([GoofspielMatching(GAME, seed), RandomBot(GAME, seed)], seed)
        history = game.observe(0).data["history"]
        assert [turn["bids"][0] for turn in history] == [turn["prize"] for turn in history]
        assert len(history) == 13


def test_it_bids_the_nearest_card_lower_first_when_the_prizes_card_is_spent() -> None:
    game = Goofspiel.new({"cards": 4, "prize_order": "descending"})
    game.step({0: "bid 3", 1: "bid 1"})
    # Prize 3 now, but seat 0's 3 is gone: 2 and 4 are equally near.
    assert GoofspielMatching(GAME).act(Turn.of(game, 0)) == "bid 2"
    game.step({0: "bid 2", 1: "bid 2"})
    # Prize 2, seat 0 holds 1 and 4.
    assert GoofspielMatching(GAME).act(Turn.of(game, 0)) == "bid 1"


def test_two_matching_bots_tie_every_prize() -> None:
    game = play([GoofspielMatching(GAME), GoofspielMatching(GAME)], 3)
    assert game.points == [0, 0]
    assert game.returns() == (0.0, 0.0)


@pytest.mark.parametrize("seat", [0, 1])
def test_it_beats_random_from_either_seat(seat: int) -> None:
    games = 100
    total = 0.0
    for seed in range(games):
        bots: list[Bot] = [RandomBot(GAME, 10_000 + seed), RandomBot(GAME, 20_000 + seed)]
        bots[seat] = GoofspielMatching(GAME, seed)
        total += play(bots, seed).returns()[seat]
    # Measured: about +0.9 a game (it wins about 19 games in 20).
    assert total / games > 0.7


def test_it_beats_random_at_a_four_player_table() -> None:
    games = 60
    total = 0.0
    for seed in range(games):
        bots: list[Bot] = [GoofspielMatching(GAME, seed)] + [RandomBot(GAME, 100 * seed + i) for i in range(3)]
        total += play(bots, seed, {"players": 4}).returns()[0]
    # A random player's expectation is 0 and the most is +1; measured: about +0.7.
    assert total / games > 0.4


def test_make_bot_knows_it_and_its_game() -> None:
    assert isinstance(make_bot("goofspiel-matching", GAME), GoofspielMatching)
    assert GoofspielMatching.showcase
    with pytest.raises(ConfigError, match="goofspiel"):
        make_bot("goofspiel-matching", "leduc-holdem")
