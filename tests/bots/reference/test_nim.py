"""The optimal Nim bot, checked exhaustively: from every position up to heaps (3, 4, 5)
that is a win for the side to move, it wins against every sequence of replies."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.seats import Turn
from bots.reference.nim import NimOptimal
from bots.reference.random_bot import RandomBot
from bots.registry import BotSpecError, make_bot
from games.nim import Nim

START = (3, 4, 5)


def position(heaps: tuple[int, ...]) -> Nim:
    """A game reached from START by taking, heap by heap, down to ``heaps``."""
    game = Nim.new({"heaps": START})
    for heap, (start, size) in enumerate(zip(START, heaps, strict=True), start=1):
        if size < start:
            game.step({game.to_move()[0]: f"take {start - size} from {heap}"})
    assert game.heaps == heaps
    return game


def bot_wins_whatever_the_replies(game: Nim, bot: NimOptimal, known: dict[tuple[int, ...], bool]) -> bool:
    """Whether every move the bot may choose here (bot to move) wins against every reply
    sequence: a game-tree walk over all opponent moves, memoised on the heaps."""
    if game.heaps in known:
        return known[game.heaps]
    seat = game.to_move()[0]
    result = True
    for move in bot.action_probabilities(Turn.of(game, seat)):
        after = game.clone()
        after.step({seat: move})
        if after.is_over:
            result = result and after.winner == seat
            continue
        for reply in after.legal_actions(1 - seat):
            answered = after.clone()
            answered.step({1 - seat: reply})
            if answered.is_over or not bot_wins_whatever_the_replies(answered, bot, known):
                result = False
    known[game.heaps] = result
    return result


def test_it_wins_every_winnable_position_against_every_reply_sequence() -> None:
    bot = NimOptimal("nim", 0)
    known: dict[tuple[int, ...], bool] = {}
    winnable = 0
    for heaps in itertools.product(*(range(size + 1) for size in START)):
        if not any(heaps):
            continue
        game = position(heaps)
        if heaps[0] ^ heaps[1] ^ heaps[2]:
            winnable += 1
            assert bot_wins_whatever_the_replies(game, bot, known), heaps
    assert winnable == 102  # of the 119 non-empty positions, 17 have a zero nim-sum
    assert len(known) >= winnable


def test_every_move_it_considers_leaves_a_zero_nim_sum() -> None:
    bot = NimOptimal("nim", 0)
    moves = bot.action_probabilities(Turn.of(Nim.new(), 0))
    # (3,4,5) has nim-sum 2: only 3 -> 1 in heap 1 clears it.
    assert moves == {"take 2 from 1": 1.0}
    moves = bot.action_probabilities(Turn.of(Nim.new({"heaps": (1, 2, 4)}), 0))
    # nim-sum 7: 4 -> 3 is the only fix (1^7=6 and 2^7=5 are both larger than the heap).
    assert moves == {"take 1 from 3": 1.0}
    moves = bot.action_probabilities(Turn.of(Nim.new({"heaps": (3, 3, 7)}), 0))
    assert moves == {"take 7 from 3": 1.0}


def test_in_a_lost_position_it_takes_one_from_a_largest_heap() -> None:
    bot = NimOptimal("nim", 0)
    assert bot.action_probabilities(Turn.of(Nim.new({"heaps": (1, 2, 3)}), 0)) == {"take 1 from 3": 1.0}
    assert bot.action_probabilities(Turn.of(Nim.new({"heaps": (5, 5)}), 0)) == {"take 1 from 1": 0.5, "take 1 from 2": 0.5}
    assert {NimOptimal("nim", s).act(Turn.of(Nim.new({"heaps": (5, 5)}), 0)) for s in range(20)} == {
        "take 1 from 1",
        "take 1 from 2",
    }


def test_it_beats_random_on_bigger_heaps_whenever_it_starts_from_a_win() -> None:
    heaps = (5, 7, 9, 12)  # nim-sum 7: a first-player win
    for seed in range(40):
        game = Nim.new({"heaps": heaps}, seed)
        players = (NimOptimal("nim", seed), RandomBot("nim", seed + 100))
        while not game.is_over:
            seat = game.to_move()[0]
            game.step({seat: players[seat].act(Turn.of(game, seat))})
        assert game.returns() == (1.0, -1.0), seed


def test_it_is_found_by_name_and_plays_only_nim() -> None:
    assert isinstance(make_bot("nim-optimal", "nim"), NimOptimal)
    assert NimOptimal.showcase and NimOptimal.games == ("nim",)
    with pytest.raises(BotSpecError, match="plays nim, not tic-tac-toe"):
        make_bot("nim-optimal", "tic-tac-toe")


def test_its_moves_are_always_legal() -> None:
    rng = random.Random(3)
    bot = NimOptimal("nim", 3)
    for seed in range(30):
        game = Nim.new({"heaps": (rng.randint(1, 9), rng.randint(1, 9), rng.randint(1, 9))}, seed)
        while not game.is_over:
            seat = game.to_move()[0]
            move = bot.act(Turn.of(game, seat))
            assert move in game.legal_actions(seat)
            game.step({seat: move})
