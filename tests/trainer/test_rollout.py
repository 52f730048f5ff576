"""Rollout helpers that need no model: the metrics taken over a batch of samples."""

from __future__ import annotations

import math

import pytest

from trainer.advantages import TurnBatch, advantage_alignment
from trainer.rollout import Sample, mean_entropy, turn_times


def sample(entropy: float | None) -> Sample:
    return Sample(0, 0, "nim", 0, 0, (1,), (2,), (-0.5,), entropy, 0.0, 0.0, "self")


def test_mean_entropy_leaves_out_turns_without_a_distribution() -> None:
    # Three scored turns (ln 2, ln 2, 0.3) and two stored ones: (2 ln 2 + 0.3) / 3, not / 5.
    turns = [sample(math.log(2)), sample(None), sample(math.log(2)), sample(0.3), sample(None)]
    assert mean_entropy(turns) == pytest.approx((2 * math.log(2) + 0.3) / 3)
    assert mean_entropy([sample(None)]) is None
    assert mean_entropy([]) is None


def test_a_staged_round_is_one_time_for_every_seat_so_alignment_pairs_the_proposer_with_the_voters() -> None:
    """coalition-bargaining: seat 0 proposes at step 0 and votes at step 3, seat 1 votes at step 1
    and proposes at step 2. By match steps the round-2 proposer found no co-player turn and
    a seat's next round was three steps later, discounted three times (found by QA)."""
    steps = {0: [0, 3], 1: [1, 2], 2: [1, 3]}
    times = {seat: turn_times("coalition-bargaining", moved) for seat, moved in steps.items()}
    assert times == {0: [0, 1], 1: [0, 1], 2: [0, 1]}
    assert turn_times("iterated-prisoners-dilemma", [0, 1, 2]) == [0, 1, 2]  # simultaneous: steps are rounds
    assert turn_times("ascending-cards", [0, 2]) == [0, 2]  # a seat with no card left sits ticks out
    assert turn_times("tic-tac-toe", [1, 3, 5]) == [0, 1, 2]
    seats = [seat for seat in times for _ in times[seat]]
    batch = TurnBatch(rewards=[0.0] * 6, player=seats, match=0, step=[t for seat in times for t in times[seat]], game="g", seed=0)
    # round 2: beta * (gamma * A1 of round 1) * (A2 of the two co-players) = 2 * 0.96 * 2
    aligned = advantage_alignment(batch, [1.0] * 6, beta=2.0, gamma=0.96)
    assert aligned.tolist() == pytest.approx([1.0, 1.0 + 3.84] * 3)
