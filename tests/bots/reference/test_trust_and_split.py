"""Splitters in Trust-and-Split, with returns worked out by hand from the hands dealt."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from arena.seats import Turn
from bots.reference.trust_and_split import claimed_hand
from bots.registry import make_bot
from games.trust_and_split import TrustAndSplit

GAME = TrustAndSplit.spec.name
Policy = Callable[[Turn], str]
SEED0_HANDS = [("scissors", "paper"), ("rock", "paper"), ("rock", "paper"), ("paper", "scissors"), ("paper", "rock")]
"""The hands seed 0 deals (seat 0's, seat 1's), read off the observations below."""


def bot(name: str) -> Policy:
    return make_bot(name, GAME).act


def play(policies: Sequence[Policy], seed: int = 0) -> tuple[TrustAndSplit, list[Sequence[float]], list[tuple[str, str]]]:
    """The finished match, each round's rewards, and the hands each seat saw it held."""
    state = TrustAndSplit.new(None, seed)
    rewards: list[Sequence[float]] = []
    hands: list[tuple[str, str]] = []
    while not state.is_over:
        if state.observe(0).data["phase"] == "move":
            hands.append((state.observe(0).data["hand"], state.observe(1).data["hand"]))
        paid = state.step({seat: policies[seat](Turn.of(state, seat)) for seat in state.to_move()})
        if paid is not None:
            rewards.append(paid)
    return state, rewards, hands


def test_two_split_evenly_bots_get_the_returns_computed_by_hand() -> None:
    state, rewards, hands = play([bot("split-evenly"), bot("split-evenly")])
    assert hands == SEED0_HANDS
    # Each takes 5 of 10 coins every round. Scissors beats paper: seat 0 values coins at 10 (50), seat 1 at 1 (5).
    # Rock loses to paper (twice) and paper to scissors: seat 1 gets 50, seat 0 5. Paper beats rock: 50 / 5 again.
    assert [tuple(r) for r in rewards] == [(50.0, 5.0), (5.0, 50.0), (5.0, 50.0), (5.0, 50.0), (50.0, 5.0)]
    assert state.returns() == (115.0, 160.0)
    assert state.observe(0).data["my_moves"] == [5] * 5


def test_two_hand_aware_bots_give_every_round_to_its_winner() -> None:
    state, rewards, _ = play([bot("hand-aware"), bot("hand-aware")])
    # Both tell their hands truthfully, so the winner takes all 10 coins (100) and the loser nothing.
    assert [tuple(r) for r in rewards] == [(100.0, 0.0), (0.0, 100.0), (0.0, 100.0), (0.0, 100.0), (100.0, 0.0)]
    assert state.returns() == (200.0, 300.0)
    assert state.observe(0).data["messages"][0]["text"] == "My hand is scissors. Whoever's hand wins takes all the coins."


def test_hand_aware_splits_evenly_once_caught_lying() -> None:
    def liar(turn: Turn) -> str:
        return "My hand is rock." if turn.observation.data["phase"] == "talk" else "take 10"

    state, rewards, _ = play([bot("hand-aware"), liar])
    # Round 1: seat 0 holds scissors and believes rock, so it yields everything; the liar held paper (worth 1 a coin).
    assert tuple(rewards[0]) == (0.0, 10.0)
    # From round 2 on the liar's paper is known: 5 against 10 is scaled to 10/3 and 20/3 coins.
    assert state.observe(0).data["my_moves"] == [0, 5, 5, 5, 5]
    # Round 2: rock loses to paper: seat 0 values at 1, seat 1 at 10.
    assert tuple(rewards[1]) == pytest.approx((10 / 3, 200 / 3))


def test_greedy_splitter_gets_two_thirds_against_an_even_splitter() -> None:
    state, rewards, _ = play([bot("greedy-splitter"), bot("split-evenly")])
    # 10 against 5 is scaled to 20/3 and 10/3 coins; round 1 seat 0 wins (10 a coin), seat 1 values at 1.
    assert tuple(rewards[0]) == pytest.approx((200 / 3, 10 / 3))
    assert state.observe(1).data["their_moves"] == [10] * 5


def test_a_claimed_hand_is_the_one_hand_a_message_names() -> None:
    assert claimed_hand("My hand is Rock!") == "rock"
    assert claimed_hand("rock or paper?") is None
    assert claimed_hand("rocky road") is None
    assert claimed_hand("scissors, definitely scissors") == "scissors"


def test_split_evenly_is_the_showcase() -> None:
    assert make_bot("split-evenly", GAME).showcase
    assert not make_bot("greedy-splitter", GAME).showcase and not make_bot("hand-aware", GAME).showcase
