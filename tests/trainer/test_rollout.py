"""Rollout helpers that need no model: the metrics taken over a batch of samples."""

from __future__ import annotations

import math

import pytest

from trainer.rollout import Sample, mean_entropy


def sample(entropy: float | None) -> Sample:
    return Sample(0, 0, "nim", 0, 0, (1,), (2,), (-0.5,), entropy, 0.0, 0.0, "self")


def test_mean_entropy_leaves_out_turns_without_a_distribution() -> None:
    # Three scored turns (ln 2, ln 2, 0.3) and two stored ones: (2 ln 2 + 0.3) / 3, not / 5.
    turns = [sample(math.log(2)), sample(None), sample(math.log(2)), sample(0.3), sample(None)]
    assert mean_entropy(turns) == pytest.approx((2 * math.log(2) + 0.3) / 3)
    assert mean_entropy([sample(None)]) is None
    assert mean_entropy([]) is None
