"""The learner's update on the tiny model: what it logs does not depend on how a minibatch is split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trainer.policy import Policy
from trainer.rollout import Sample
from trainer.update import Learner, PPOSettings

Ids = tuple[int, ...]


def sample(step: int, prompt: Ids, action: Ids, options: tuple[Ids, ...], old: float) -> Sample:
    """A turn whose acting log-probs were ``old`` each: far from the model's, so ratios are not 1."""
    return Sample(
        match=0,
        seed=0,
        game="g",
        seat=0,
        step=step,
        prompt_ids=prompt,
        action_ids=action,
        logprobs=(old,) * len(action),
        entropy=None,
        reward=0.0,
        opponent="x",
        options=options,
        choice_logprob=old if options else None,
    )


def test_the_logged_statistics_are_means_over_units_whatever_grad_accum_is(tiny_model_dir: Path) -> None:
    """A scored turn (one unit) and a generated reply (six tokens) in two micro-batches: each
    micro-batch's mean weighed alike gave the one unit as much weight as the six (found by QA)."""
    scored = sample(0, (5, 6, 7), (8,), ((8,), (9, 10)), old=-1.0)
    generated = sample(1, (5, 6, 7, 11), (12, 13, 14, 15, 16, 17), (), old=-12.0)
    logged = []
    for accum in (1, 2):
        policy = Policy.load(tiny_model_dir)
        learner = Learner(policy, PPOSettings(epochs=1, minibatch=8, grad_accum=accum))
        logged.append(learner.update([scored, generated], np.array([1.0, -1.0])))
    whole, split = logged
    for key in ("approx_kl", "ratio_mean", "clip_fraction", "loss", "surrogate"):
        assert split[key] == pytest.approx(whole[key], rel=1e-4, abs=1e-6), key
    assert whole["clip_fraction"] == pytest.approx(1 / 7)  # the scored turn alone: its ratio rose past 1.2


def test_an_update_with_nothing_to_train_on_reports_the_same_fields_null(tiny_model_dir: Path) -> None:
    """It logged ``{"skipped": 1.0}`` alone: readers of ``row["loss"]`` failed on a KeyError, and
    the run said "trained 2 updates" of a model that never changed (found by a QA helper)."""
    turn = sample(0, (5, 6, 7), (8,), ((8,), (9, 10)), old=-1.0)
    learner = Learner(Policy.load(tiny_model_dir), PPOSettings(epochs=1, minibatch=8))
    idle = learner.update([turn], np.array([0.0]))
    trained = learner.update([turn], np.array([1.0]))
    fields = ["loss", "surrogate", "approx_kl", "clip_fraction", "ratio_mean", "grad_norm"]
    assert idle == {"skipped": True, **dict.fromkeys(fields)}
    assert trained.keys() == idle.keys() and trained["skipped"] is False
    assert all(isinstance(trained[key], float) for key in fields)
    clipped = Learner(Policy.load(tiny_model_dir), PPOSettings(epochs=1, minibatch=8, dual_clip=3.0))
    assert clipped.update([turn], np.array([0.0])).keys() == clipped.update([turn], np.array([1.0])).keys()
    settings = PPOSettings(epochs=1, minibatch=8, kl_coef=0.1)
    held = Learner(Policy.load(tiny_model_dir), settings, reference=Policy.load(tiny_model_dir))
    idle, trained = held.update([turn], np.array([0.0])), held.update([turn], np.array([1.0]))
    assert idle.keys() == trained.keys() and "kl_ref" in idle and idle["kl_ref"] is None
