"""One policy update: PPO epochs over the turns of a batch of rollouts.

Every turn's advantage applies to every sampled unit of its action (docs/TRAINING.md, "The update"):
the one choice of a scored legal set, or each token of a generated reply. The ratio is
taken between the current and the acting policy's probabilities of that unit under the
distribution it was drawn from (``Policy.acting_logprobs``); an optional frozen reference
adds the k3 KL penalty, measured on the same units. Minibatches are drawn in
an order fixed by the seed and the update's index, and gradient accumulation divides
by the minibatch's token count, so the result does not depend on how it is split.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from trainer.loss import check_clip, check_kl_coef, policy_loss
from trainer.policy import Policy
from trainer.rollout import Sample


@dataclass(frozen=True)
class PPOSettings:
    lr: float = 1e-3
    epochs: int = 2
    minibatch: int = 64
    grad_accum: int = 1
    clip_eps: float = 0.2
    dual_clip: float | None = None
    kl_coef: float = 0.0
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        for key in ("lr", "max_grad_norm"):
            if not getattr(self, key) > 0:
                raise ValueError(f"{key} must be > 0, got {getattr(self, key)}")
        for key in ("epochs", "minibatch", "grad_accum"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        check_clip(self.clip_eps, self.dual_clip)
        check_kl_coef(self.kl_coef)


STEP_STATS = ("loss", "surrogate", "approx_kl", "clip_fraction", "ratio_mean", "grad_norm")
"""What every trained update reports, besides ``kl_ref`` and ``dual_clip_fraction`` when
configured (``Learner.reported``); null in an update that trained on nothing."""


class Diverged(RuntimeError):
    """The loss or its gradient stopped being a number: stepping would turn every weight to
    NaN and the run would go on to save a model that answers nothing."""


class Learner:
    """The trained policy, its optimizer and (with a KL penalty) its frozen reference."""

    def __init__(self, policy: Policy, settings: PPOSettings, *, seed: int = 0, reference: Policy | None = None) -> None:
        if settings.kl_coef > 0 and reference is None:
            raise ValueError("a KL penalty (kl_coef > 0) needs a reference policy")
        self.policy = policy
        self.settings = settings
        self.seed = seed
        self.reference = reference
        self.optimizer = torch.optim.AdamW(policy.model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
        self.updates = 0

    def reported(self) -> tuple[str, ...]:
        """The statistics an update of these settings reports."""
        extra = ("kl_ref",) * (self.reference is not None) + ("dual_clip_fraction",) * (self.settings.dual_clip is not None)
        return STEP_STATS + extra

    def update(self, samples: Sequence[Sample], advantages: np.ndarray) -> dict[str, float | bool | None]:
        """Train on ``samples`` (one advantage each); return the update's mean statistics.

        Turns whose advantage is exactly zero carry no gradient and are skipped (SPIRAL's
        note: a batch where every outcome matched its baseline teaches nothing).
        """
        if len(samples) != len(advantages):
            raise ValueError(f"{len(samples)} samples but {len(advantages)} advantages")
        rows = [i for i, a in enumerate(advantages) if a != 0.0]
        self.updates += 1
        if not rows:  # the weights stay as they were; the line has a trained update's fields, null
            return {"skipped": True, **dict.fromkeys(self.reported())}
        s = self.settings
        model = self.policy.model
        model.train()
        order_rng = np.random.default_rng([self.seed, self.updates])
        totals: dict[str, list[float]] = {}
        units: list[float] = []
        try:
            for _ in range(s.epochs):
                order = order_rng.permutation(rows)
                for start in range(0, len(order), s.minibatch):
                    chosen = order[start : start + s.minibatch]
                    batch = [samples[i] for i in chosen]
                    stats = self._step(batch, advantages[chosen])
                    units.append(_units(batch))
                    for key, value in stats.items():
                        totals.setdefault(key, []).append(value)
        finally:
            model.eval()
        # a mean over the sampled units, as each step's: minibatches of unequal size weigh as many units
        return {"skipped": False} | {
            key: float(np.mean(values)) if key == "grad_norm" else float(np.average(values, weights=units))
            for key, values in totals.items()
        }

    def _step(self, batch: Sequence[Sample], advantages: np.ndarray) -> dict[str, float]:
        s = self.settings
        token_count = _units(batch)
        micro = max(1, -(-len(batch) // s.grad_accum))
        self.optimizer.zero_grad(set_to_none=True)
        collected: dict[str, list[float]] = {}
        units: list[float] = []
        with self.policy.lock:
            for start in range(0, len(batch), micro):
                part = batch[start : start + micro]
                units.append(_units(part))
                turns = [(sample.prompt_ids, sample.action_ids, sample.options) for sample in part]
                new_logp, mask = self.policy.acting_logprobs(turns, grad=True)
                old_logp = torch.zeros_like(new_logp)
                for i, sample in enumerate(part):
                    old_logp[i, : len(sample.acting_logprobs)] = torch.tensor(sample.acting_logprobs)
                ref_logp = None
                if self.reference is not None:
                    with torch.no_grad():
                        ref_logp, _ = self.reference.acting_logprobs(turns)
                adv = torch.tensor(advantages[start : start + micro], dtype=new_logp.dtype)
                loss, stats = policy_loss(
                    new_logp,
                    old_logp,
                    adv,
                    mask,
                    ref_logp=ref_logp,
                    kl_coef=s.kl_coef,
                    clip_eps=s.clip_eps,
                    dual_clip=s.dual_clip,
                    token_count=token_count,
                )
                loss.backward()
                stats["loss"] = float(loss.detach())
                for key, value in stats.items():
                    collected.setdefault(key, []).append(value)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.policy.model.parameters(), s.max_grad_norm)
            loss = float(np.sum(collected["loss"]))
            if not (math.isfinite(loss) and math.isfinite(float(grad_norm))):
                raise Diverged(
                    f"training diverged at update {self.updates}: the loss is {loss} and its gradient norm {float(grad_norm)};"
                    " the weights are left as they were before this step (lower ppo.lr or ppo.clip_eps)"
                )
            self.optimizer.step()
        # Micro-batch losses are already divided by the whole minibatch's token count: they add up.
        # The other statistics are each micro-batch's mean over its units: weighed by its units,
        # so that grad_accum changes no number (a plain mean doubled one unit's share of four).
        additive = ("loss", "surrogate", "kl_ref")
        out = {key: float(np.sum(v)) if key in additive else float(np.average(v, weights=units)) for key, v in collected.items()}
        out["grad_norm"] = float(grad_norm)
        return out


def _units(samples: Sequence[Sample]) -> float:
    """The units the loss averages over: a scored turn's one choice, a generated reply's tokens."""
    return float(sum(len(sample.acting_logprobs) for sample in samples))
