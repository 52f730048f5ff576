"""The policy loss of docs/TRAINING.md ("The update") as pure torch functions over per-token log-probs.

Inputs are ``[B, T]`` tensors, one row per turn and one column per token of the action the
seat chose (padded to the longest action; ``mask`` is 1 on real tokens, 0 on padding), and
``advantages`` of shape ``[B]``, one per turn: a turn's advantage is the credit of every
token of its action. No model code lives here, so the formulas are tested on numbers
written by hand.

Aggregation: every loss is the mean over the real tokens of the whole batch (not a mean
per turn, then over turns). A per-turn mean gives each token of a one-token action the
weight of a whole ten-token action, so the update would favour whatever is short to say;
the token mean weighs every sampled token alike (the DAPO / Dr. GRPO argument). With
gradient accumulation, pass ``token_count`` (the real tokens of the *whole* batch) so that
the summed micro-batch gradients equal the full-batch gradient exactly.
"""

from __future__ import annotations

import torch

__all__ = ["check_clip", "check_kl_coef", "entropy_of_choices", "k3_kl", "policy_loss", "token_ppo_loss"]


def check_clip(clip_eps: float, dual_clip: float | None) -> None:
    """The clip settings' rules, shared with the training config so a bad one fails at parse time."""
    if not 0.0 < clip_eps < 1.0:  # the ratio is clipped to [1 - clip_eps, 1 + clip_eps]: at 1 or more, no lower clip
        raise ValueError(f"clip_eps must be between 0 and 1, got {clip_eps}")
    if dual_clip is not None and dual_clip <= 1.0:
        raise ValueError(f"dual_clip must be greater than 1 (it caps the loss at dual_clip * |A|), got {dual_clip}")


def check_kl_coef(kl_coef: float) -> None:
    if kl_coef < 0.0:
        raise ValueError(f"kl_coef must be >= 0, got {kl_coef}")


def _real_tokens(reference: torch.Tensor, mask: torch.Tensor, token_count: float | None) -> tuple[torch.Tensor, float]:
    """The mask as booleans and the divisor of the token mean, both checked."""
    if mask.shape != reference.shape:
        raise ValueError(f"mask has shape {tuple(mask.shape)}; expected {tuple(reference.shape)} like the log-probs")
    if mask.dtype != torch.bool and not bool(torch.all((mask == 0) | (mask == 1))):
        raise ValueError("mask must hold only 0 (padding) and 1 (real action token)")
    real = mask.bool()
    count = float(real.sum()) if token_count is None else float(token_count)
    if count <= 0:
        raise ValueError("the batch has no real action tokens (mask is all padding, or token_count <= 0)")
    return real, count


def _masked_mean(values: torch.Tensor, real: torch.Tensor, count: float) -> torch.Tensor:
    return torch.where(real, values, torch.zeros_like(values)).sum() / count


def _logp_pair(first: torch.Tensor, second: torch.Tensor, names: str) -> None:
    if first.ndim != 2 or first.shape != second.shape:
        raise ValueError(f"{names} must be [B, T] tensors of one shape, got {tuple(first.shape)} and {tuple(second.shape)}")


def token_ppo_loss(
    new_logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_eps: float = 0.2,
    dual_clip: float | None = None,
    token_count: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO-clip surrogate over action tokens, optionally dual-clipped; returns (loss, stats).

    Per real token, with r = exp(new - old) (the ratio against the policy that acted) and
    the turn's advantage A, the objective to *maximise* is::

        o = min(r * A, clip(r, 1 - eps, 1 + eps) * A)
        o = max(o, c * A)          if dual_clip = c and A < 0

    and the loss is ``-mean(o)`` over real tokens (see the module docstring for why the
    token mean). The dual clip (Ye et al. 2020, c > 1) matters for A < 0 only: there the
    clipped objective is unbounded below as r grows, so one token the old policy found
    unlikely can dominate the batch; flooring the objective at ``c * A`` (capping the loss
    at ``-c * A = c * |A|``) bounds it, and its gradient there is zero.

    ``stats`` (floats, for logging): ``clip_fraction``, the share of real tokens whose
    gradient the clip removed (r > 1 + eps with A > 0, or r < 1 - eps with A < 0);
    ``dual_clip_fraction`` (with ``dual_clip``); ``approx_kl``, the mean of (r - 1) - log r,
    Schulman's k3 estimate of KL(old || new): unbiased on units sampled from the old policy
    like k1 (= -log r) but never negative and of far lower variance, so one batch's value
    reads as a distance; ``ratio_mean``. Padding may hold any value, even inf
    or NaN: it is replaced before any arithmetic, so it reaches neither loss nor gradient.
    """
    _logp_pair(new_logp, old_logp, "new_logp and old_logp")
    if advantages.shape != new_logp.shape[:1]:
        raise ValueError(f"advantages has shape {tuple(advantages.shape)}; expected ({new_logp.shape[0]},), one per turn")
    check_clip(clip_eps, dual_clip)
    real, count = _real_tokens(new_logp, mask, token_count)
    new = new_logp.masked_fill(~real, 0.0)
    old = old_logp.detach().masked_fill(~real, 0.0)
    adv = advantages.detach().to(new.dtype)[:, None].expand_as(new)

    log_ratio = new - old
    ratio = torch.exp(log_ratio)
    objective = torch.minimum(ratio * adv, torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * adv)
    dual_active = torch.zeros_like(real)
    if dual_clip is not None:
        dual_active = (adv < 0) & (objective < dual_clip * adv) & real
        objective = torch.where(dual_active, dual_clip * adv, objective)
    loss = -_masked_mean(objective, real, count)

    with torch.no_grad():
        clipped = ((ratio > 1.0 + clip_eps) & (adv > 0)) | ((ratio < 1.0 - clip_eps) & (adv < 0))
        n_real = float(real.sum())
        stats = {
            "clip_fraction": float((clipped & real).sum()) / max(n_real, 1.0),
            "approx_kl": float(_masked_mean((ratio - 1.0) - log_ratio, real, max(n_real, 1.0))),
            "ratio_mean": float(_masked_mean(ratio, real, max(n_real, 1.0))),
        }
        if dual_clip is not None:
            stats["dual_clip_fraction"] = float(dual_active.sum()) / max(n_real, 1.0)
    return loss, stats


def k3_kl(
    new_logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor, *, token_count: float | None = None
) -> torch.Tensor:
    """The k3 estimate of KL(new || ref) per token, exp(d) - d - 1 with d = ref - new, token mean.

    Why k3 (Schulman's "Approximating KL divergence"): on tokens sampled from the policy it
    is unbiased like k1 (= -d) but never negative, since e^d >= 1 + d, so a per-token
    penalty cannot reward drifting away on some tokens to pay for others, and its variance
    is far lower than k1's. The reference is frozen: no gradient flows into ``ref_logp``.
    """
    _logp_pair(new_logp, ref_logp, "new_logp and ref_logp")
    real, count = _real_tokens(new_logp, mask, token_count)
    delta = ref_logp.detach().masked_fill(~real, 0.0) - new_logp.masked_fill(~real, 0.0)
    return _masked_mean(torch.exp(delta) - delta - 1.0, real, count)


def policy_loss(
    new_logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    ref_logp: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    clip_eps: float = 0.2,
    dual_clip: float | None = None,
    token_count: float | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The update's loss: the PPO surrogate plus ``kl_coef`` times k3 KL to a frozen reference.

    The KL is computed (and logged as ``kl_ref``) whenever ``ref_logp`` is given, even with
    ``kl_coef = 0``, so a run can watch its drift before deciding to penalise it; asking for
    a penalty without a reference is an error rather than a silent no-op.
    """
    check_kl_coef(kl_coef)
    if kl_coef > 0.0 and ref_logp is None:
        raise ValueError(f"kl_coef is {kl_coef} but no ref_logp was given: the KL penalty needs the reference's log-probs")
    loss, stats = token_ppo_loss(
        new_logp, old_logp, advantages, mask, clip_eps=clip_eps, dual_clip=dual_clip, token_count=token_count
    )
    stats["surrogate"] = float(loss.detach())
    if ref_logp is not None:
        kl = k3_kl(new_logp, ref_logp, mask, token_count=token_count)
        stats["kl_ref"] = float(kl.detach())
        loss = loss + kl_coef * kl
    return loss, stats


def entropy_of_choices(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Entropy (nats) of the policy over each turn's legal actions, for logging collapse.

    ``scores`` is ``[..., K]``: logits or (unnormalised) log-probs of the K legal actions,
    e.g. each action's summed token log-prob; they are renormalised here, because the
    acting policy samples from the softmax over the legal set, not from the raw sequence
    probabilities. ``mask`` (same shape) marks real actions when legal sets of different
    sizes are padded into one tensor. Returns one entropy per row (shape ``[...]``).
    """
    if scores.ndim < 1 or scores.shape[-1] == 0:
        raise ValueError(f"scores must have a last axis of legal actions, got shape {tuple(scores.shape)}")
    if mask is None:
        real = torch.ones_like(scores, dtype=torch.bool)
    elif mask.shape != scores.shape:
        raise ValueError(f"mask has shape {tuple(mask.shape)}; expected {tuple(scores.shape)} like scores")
    else:
        real = mask.bool()
    if not bool(real.any(dim=-1).all()):
        raise ValueError("a row of scores has no legal action (its mask is all padding)")
    logp = torch.log_softmax(scores.masked_fill(~real, float("-inf")), dim=-1)
    return -torch.where(real, logp.exp() * logp, torch.zeros_like(logp)).sum(dim=-1)
