"""The alpha-beta Connect Four bot: it wins when it can, blocks when it must, searches
exactly (mirror positions score alike), answers fast and crushes a random player."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.connect_four import WIN, AlphaBetaConnectFour, read_board, tables, winning_cells
from bots.reference.random_bot import RandomBot
from bots.registry import make_bot
from games.api import ConfigError
from games.connect_four import ConnectFour


def play(columns: str, config: dict[str, int] | None = None) -> ConnectFour:
    game = ConnectFour.new(config)
    for column in columns:
        game.step({game.to_move()[0]: column})
    return game


def turn_for(game: ConnectFour) -> Turn:
    return Turn.of(game, game.to_move()[0])


def play_match(first: Bot, second: Bot, seed: int) -> tuple[float, ...]:
    game = ConnectFour.new(None, seed)
    bots = (first, second)
    while not game.is_over:
        turn = turn_for(game)
        game.step({turn.seat: bots[turn.seat].act(turn)})
    return game.returns()


def bot(seed: int = 0, depth: int = 6) -> AlphaBetaConnectFour:
    return AlphaBetaConnectFour("connect-four", seed=seed, depth=depth)


@pytest.mark.parametrize(
    ("moves", "win"),
    [("112233", "4"), ("121213", "1"), ("1212325", "2"), ("1223343446", "4")],
)
def test_it_takes_an_immediate_win(moves: str, win: str) -> None:
    turn = turn_for(play(moves))
    for seed in range(5):
        assert bot(seed).act(turn) == win
    assert bot().best_moves(turn) == [win]


@pytest.mark.parametrize(("moves", "block"), [("11223", "4"), ("41414", "4"), ("151627", "4")])
def test_it_blocks_an_immediate_loss(moves: str, block: str) -> None:
    turn = turn_for(play(moves))
    for seed in range(5):
        assert bot(seed).act(turn) == block


def test_a_shallow_search_still_wins_and_blocks() -> None:
    assert bot(depth=1).act(turn_for(play("112233"))) == "4"
    assert bot(depth=1).act(turn_for(play("11223"))) == "4"


def test_it_does_not_play_under_a_cell_the_opponent_needs() -> None:
    # O has three in the second row (columns 2 to 4) with both ends open above empty
    # cells: X dropping into column 1 or 5 would let O complete the four on top.
    scores = bot().move_scores(turn_for(play("23437274")))
    assert scores["1"] == scores["5"] == -(WIN - 1)
    assert max(scores.values()) > -(WIN - 1)
    assert bot().act(turn_for(play("23437274"))) not in {"1", "5"}


def test_mirror_positions_have_mirrored_best_moves() -> None:
    # The best moves' scores are exact, so the centre-first, left-first move order must
    # not make one of two mirrored moves of a mirror-symmetric position look better.
    for moves in ("", "4", "4444", "444444", "147", "3454", "2464", "14744"):
        turn = turn_for(play(moves))
        best = bot().best_moves(turn)
        assert sorted(best) == sorted(str(8 - int(column)) for column in best), moves
        scores = bot().move_scores(turn)
        assert all(score < scores[best[0]] for column, score in scores.items() if column not in best)


def test_it_breaks_ties_at_random() -> None:
    turn = turn_for(play("444444"))
    best = bot().best_moves(turn)
    assert len(best) >= 2
    assert {bot(seed).act(turn) for seed in range(30)} == set(best)
    assert bot().action_probabilities(turn) == {name: 1.0 / len(best) for name in best}


def test_winning_cells_are_the_empty_cells_that_complete_a_four() -> None:
    geo = tables(7, 6).geo

    def threats(moves: str, mark: str) -> int:
        mine, occupied = read_board(play(moves).observe(0).data["board"], mark, geo)
        return winning_cells(mine, occupied, geo)

    def cell(column: int, height: int) -> int:
        return 1 << ((column - 1) * geo.stride + height)

    assert threats("112233", "X") == cell(4, 0)
    assert threats("112233", "O") == cell(4, 1)
    assert threats("121213", "X") == cell(1, 3)
    assert threats("1223343446", "X") & cell(4, 3)
    assert threats("7665545442", "X") & cell(4, 3)
    assert threats("", "X") == threats("", "O") == 0


def test_it_beats_random_from_either_seat() -> None:
    wins = 0
    for seed in range(10):
        wins += play_match(bot(seed), RandomBot("connect-four", seed=100 + seed), seed)[0] > 0
        wins += play_match(RandomBot("connect-four", seed=200 + seed), bot(seed), seed)[1] > 0
    assert wins == 20


def test_it_plays_other_board_sizes() -> None:
    game = play("989898", {"columns": 9, "rows": 5})
    assert bot().act(turn_for(game)) == "9"
    game = play("1111", {"columns": 4, "rows": 4})
    assert bot().act(turn_for(game)) in {"2", "3", "4"}


def test_it_answers_within_a_second_at_depth_6() -> None:
    rng = random.Random(3)
    slowest = 0.0
    for trial in range(12):
        game = ConnectFour.new()
        for _ in range(rng.randrange(0, 16) if trial else 0):
            if not game.is_over:
                game.step({game.to_move()[0]: rng.choice(game.legal_actions(game.to_move()[0]))})
        if game.is_over:
            continue
        start = time.perf_counter()
        bot().act(turn_for(game))
        slowest = max(slowest, time.perf_counter() - start)
    assert slowest < 1.0


def test_on_a_clock_it_keeps_the_deepest_search_that_finished_in_a_third_of_the_time() -> None:
    """Depth 10 on a 12x12 board took 30 s for a first move, past the default 10 s clock (found by QA)."""
    game = play("", {"columns": 12, "rows": 12})
    turn = replace(turn_for(game), deadline_ms=600)
    start = time.perf_counter()
    assert bot(depth=12).act(turn) in game.legal_actions(0)
    assert time.perf_counter() - start < 5  # 0.2 s and a last check of the clock; unbounded, minutes
    game = play("1213")
    clocked = replace(turn_for(game), deadline_ms=3_600_000)
    assert bot(depth=5).move_scores(clocked) == bot(depth=5).move_scores(turn_for(game))  # the time fits: as without a clock


def test_on_a_clock_too_short_for_two_plies_it_still_takes_a_win() -> None:
    game = play("112233")
    assert bot(depth=12).act(replace(turn_for(game), deadline_ms=0)) == "4"


def test_make_bot_parses_depth_and_rejects_bad_options() -> None:
    made = make_bot("alphabeta:depth=4", "connect-four")
    assert isinstance(made, AlphaBetaConnectFour)
    assert made.depth == 4
    assert make_bot("alphabeta", "connect-four").depth == 6  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="bot 'alphabeta': option 'depth' must be an integer"):
        make_bot("alphabeta:depth=x", "connect-four")
    for depth in ("0", "-2", "13"):
        with pytest.raises(ConfigError, match="'depth' must be between 1 and 12"):
            make_bot(f"alphabeta:depth={depth}", "connect-four")
    with pytest.raises(ConfigError, match="no option 'dept'"):
        make_bot("alphabeta:dept=4", "connect-four")
    with pytest.raises(ConfigError, match="connect-four"):
        make_bot("alphabeta", "tic-tac-toe")
