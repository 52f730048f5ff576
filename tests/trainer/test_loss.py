"""The policy loss (docs/TRAINING.md, "The update") on numbers worked out by hand in the comments."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from trainer.loss import entropy_of_choices, k3_kl, policy_loss, token_ppo_loss


def one_token(ratio: float, advantage: float, **kwargs: float) -> tuple[float, float, dict[str, float]]:
    """(loss, d loss / d new_logp, stats) for a batch of one turn with one action token."""
    old = torch.tensor([[-1.0]], dtype=torch.float64)
    new = (old + math.log(ratio)).requires_grad_(True)
    loss, stats = token_ppo_loss(new, old, torch.tensor([advantage], dtype=torch.float64), torch.ones(1, 1), **kwargs)
    loss.backward()
    assert new.grad is not None
    return float(loss.detach()), float(new.grad[0, 0]), stats


def test_ratio_above_one_plus_eps_with_positive_advantage_is_clipped() -> None:
    loss, grad, stats = one_token(1.5, 2.0, clip_eps=0.2)
    # min(1.5 * 2, clip(1.5, 0.8, 1.2) * 2) = min(3.0, 2.4) = 2.4; the clipped branch is constant in new_logp
    assert loss == pytest.approx(-2.4)
    assert grad == 0.0
    assert stats["clip_fraction"] == 1.0


def test_ratio_above_one_plus_eps_with_negative_advantage_is_not_clipped() -> None:
    loss, grad, stats = one_token(1.5, -2.0, clip_eps=0.2)
    # min(1.5 * -2, 1.2 * -2) = min(-3.0, -2.4) = -3.0; d(-r A)/d new = -A r = 2 * 1.5 = 3.0
    assert loss == pytest.approx(3.0)
    assert grad == pytest.approx(3.0)
    assert stats["clip_fraction"] == 0.0


def test_ratio_below_one_minus_eps_with_negative_advantage_is_clipped() -> None:
    loss, grad, stats = one_token(0.5, -1.0, clip_eps=0.2)
    # min(0.5 * -1, 0.8 * -1) = -0.8, the clipped branch: no gradient pushes r further down
    assert loss == pytest.approx(0.8)
    assert grad == 0.0
    assert stats["clip_fraction"] == 1.0


def test_dual_clip_caps_the_loss_of_a_huge_ratio_with_negative_advantage() -> None:
    ratio = math.exp(2.0)  # 7.389
    plain, plain_grad, _ = one_token(ratio, -1.0)
    capped, capped_grad, stats = one_token(ratio, -1.0, dual_clip=3.0)
    # plain: -min(-7.389, -1.2) = 7.389 with gradient -A r = 7.389; dual: -max(-7.389, 3 * -1) = 3, flat
    assert plain == pytest.approx(ratio)
    assert plain_grad == pytest.approx(ratio)
    assert capped == pytest.approx(3.0)
    assert capped_grad == 0.0
    assert stats["dual_clip_fraction"] == 1.0


def test_dual_clip_leaves_ratios_below_c_and_positive_advantages_alone() -> None:
    loss, grad, stats = one_token(2.0, -1.0, dual_clip=3.0)
    # r = 2 < c = 3: -min(-2, -1.2) = 2, gradient -A r = 2
    assert (loss, grad, stats["dual_clip_fraction"]) == pytest.approx((2.0, 2.0, 0.0))
    loss, grad, _ = one_token(5.0, 1.0, dual_clip=3.0)
    # A > 0: the ordinary clip, min(5, 1.2) = 1.2
    assert (loss, grad) == pytest.approx((-1.2, 0.0))


def batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Turn 0: two tokens, A = 1, ratios 1 and 1.5. Turn 1: one token, A = -1, ratio 0.5. Padding holds garbage."""
    old = torch.tensor([[-1.0, -2.0, math.nan], [-0.5, math.inf, -math.inf]], dtype=torch.float64)
    new = torch.tensor([[-1.0, -2.0 + math.log(1.5), math.inf], [-0.5 + math.log(0.5), math.nan, 7.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    return new.requires_grad_(True), old, torch.tensor([1.0, -1.0], dtype=torch.float64), mask


def test_loss_is_the_mean_over_real_tokens_and_padding_contributes_nothing() -> None:
    new, old, advantages, mask = batch()
    loss, stats = token_ppo_loss(new, old, advantages, mask, clip_eps=0.2)
    # objectives: min(1, 1) = 1; min(1.5, 1.2) = 1.2; min(-0.5, -0.8) = -0.8
    # token mean: (1 + 1.2 - 0.8) / 3 = 0.466667 (a per-turn mean would give (1.1 - 0.8) / 2 = 0.15)
    assert float(loss.detach()) == pytest.approx(-1.4 / 3)
    # clipped: token (0, 1) (r = 1.5 > 1.2, A > 0) and token (1, 0) (r = 0.5 < 0.8, A < 0)
    assert stats["clip_fraction"] == pytest.approx(2 / 3)
    # approx KL = mean((r - 1) - ln r) = (0 + (0.5 - 0.405465) + (-0.5 + 0.693147)) / 3
    assert stats["approx_kl"] == pytest.approx(0.2876821 / 3, abs=1e-7)
    assert stats["ratio_mean"] == pytest.approx((1.0 + 1.5 + 0.5) / 3)
    loss.backward()
    assert new.grad is not None
    # only token (0, 0) is unclipped: d(-r A / 3)/d new = -1 * 1 / 3; padding gets exactly 0, not NaN
    expected = torch.tensor([[-1 / 3, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(new.grad, expected)


def test_approx_kl_is_k3_never_negative_where_k1_would_be() -> None:
    # One token whose probability doubled: r = 2. k1 = -ln 2 = -0.693147 (a negative "KL");
    # k3 = (2 - 1) - ln 2 = 0.306853.
    new = torch.tensor([[math.log(2.0)]], dtype=torch.float64)
    old = torch.tensor([[0.0]], dtype=torch.float64)
    _, stats = token_ppo_loss(new, old, torch.tensor([1.0], dtype=torch.float64), torch.ones(1, 1))
    assert stats["approx_kl"] == pytest.approx(1.0 - math.log(2.0))


def test_token_count_makes_accumulated_micro_batches_equal_the_full_batch() -> None:
    new, old, advantages, mask = batch()
    full, _ = token_ppo_loss(new, old, advantages, mask)
    full.backward()
    assert new.grad is not None
    full_grad = new.grad.clone()
    new.grad = None
    parts = [
        token_ppo_loss(new[i : i + 1], old[i : i + 1], advantages[i : i + 1], mask[i : i + 1], token_count=3)[0] for i in (0, 1)
    ]
    for part in parts:
        part.backward()  # accumulates into new.grad, as micro-batches do
    # (1 + 1.2) / 3 and -0.8 / 3 sum to the full batch's token mean, and so do the gradients
    assert float(parts[0].detach()) == pytest.approx(-2.2 / 3)
    assert float(parts[0].detach() + parts[1].detach()) == pytest.approx(float(full.detach()))
    torch.testing.assert_close(new.grad, full_grad)


def test_k3_on_hand_computed_numbers() -> None:
    new = torch.tensor([[-1.5, -1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    ref = torch.tensor([[-1.0, -2.0, 123.0]], dtype=torch.float64)
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    kl = k3_kl(new, ref, mask)
    # d = ref - new: 0.5 -> e^0.5 - 0.5 - 1 = 0.1487213; -1 -> e^-1 + 1 - 1 = 0.3678794; mean over 2 tokens
    assert float(kl.detach()) == pytest.approx((0.1487212707 + 0.3678794412) / 2)
    kl.backward()
    assert new.grad is not None
    # d/d new (e^d - d - 1) = 1 - e^d: 1 - 1.6487213 = -0.6487213 and 1 - 0.3678794 = 0.6321206, halved
    torch.testing.assert_close(new.grad, torch.tensor([[-0.32436064, 0.31606028, 0.0]], dtype=torch.float64))


def test_k3_is_zero_at_equality_and_never_negative() -> None:
    generator = torch.Generator().manual_seed(0)
    new = torch.randn(4, 5, generator=generator, dtype=torch.float64)
    ref = torch.randn(4, 5, generator=generator, dtype=torch.float64)
    mask = torch.ones(4, 5)
    assert float(k3_kl(new, new.clone(), mask)) == 0.0
    # one token at a time, so a negative token could not hide behind a positive one in the mean
    per_token = [float(k3_kl(new[i, j].view(1, 1), ref[i, j].view(1, 1), mask[:1, :1])) for i in range(4) for j in range(5)]
    assert min(per_token) >= 0.0
    assert max(per_token) > 0.0


def test_policy_loss_adds_the_weighted_reference_kl() -> None:
    new, old, advantages, mask = batch()
    ref = old.clone()
    loss, stats = policy_loss(new, old, advantages, mask, ref_logp=ref, kl_coef=0.5)
    # KL part: d = ref - new on real tokens: 0, ln(1/1.5) = -0.405465, ln 2 = 0.693147
    # k3: 0; 1/1.5 + 0.405465 - 1 = 0.072132; 2 - 0.693147 - 1 = 0.306853; mean = 0.126328
    assert stats["kl_ref"] == pytest.approx((0.0721318 + 0.3068528) / 3, abs=1e-6)
    assert stats["surrogate"] == pytest.approx(-1.4 / 3)
    assert float(loss.detach()) == pytest.approx(-1.4 / 3 + 0.5 * (0.0721318 + 0.3068528) / 3, abs=1e-6)
    without, stats = policy_loss(new, old, advantages, mask)
    assert float(without.detach()) == pytest.approx(-1.4 / 3)
    assert "kl_ref" not in stats


def test_entropy_of_choices_over_padded_legal_sets() -> None:
    scores = torch.tensor(
        [
            [0.0, 0.0, 0.0, 0.0],  # uniform over 4: ln 4
            [math.log(0.2), math.log(0.2), 9.0, 9.0],  # two real actions of equal score, renormalised: ln 2
            [math.log(0.5), math.log(0.25), math.log(0.25), 0.0],  # 0.5 ln 2 + 2 * 0.25 ln 4 = 1.5 ln 2
        ],
        dtype=torch.float64,
    )
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]])
    torch.testing.assert_close(
        entropy_of_choices(scores, mask), torch.tensor([math.log(4), math.log(2), 1.5 * math.log(2)], dtype=torch.float64)
    )
    assert float(entropy_of_choices(torch.tensor([5.0]))) == 0.0  # one legal action: no choice


def ppo(shape: tuple[int, int], **overrides: Any) -> None:
    """token_ppo_loss on zero log-probs of ``shape`` with an all-real mask, some argument replaced."""
    args: dict[str, Any] = {
        "new_logp": torch.zeros(shape),
        "old_logp": torch.zeros(shape),
        "advantages": torch.zeros(shape[0]),
        "mask": torch.ones(shape),
    }
    args.update(overrides)
    token_ppo_loss(**args)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"old_logp": torch.zeros(2, 4)}, "one shape"),
        ({"advantages": torch.zeros(3)}, "one per turn"),
        ({"mask": torch.zeros(2, 3)}, "no real action tokens"),
        ({"mask": torch.tensor([[1.0, 0.5, 1.0], [1.0, 1.0, 1.0]])}, "only 0"),
        ({"dual_clip": 1.0}, "greater than 1"),
        ({"clip_eps": 0.0}, "clip_eps"),
    ],
)
def test_bad_ppo_input_gives_a_clear_error(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ppo((2, 3), **overrides)


def test_bad_kl_and_entropy_input_gives_a_clear_error() -> None:
    with pytest.raises(ValueError, match="mask has shape"):
        k3_kl(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 3))
    with pytest.raises(ValueError, match="no ref_logp"):
        policy_loss(torch.zeros(1, 1), torch.zeros(1, 1), torch.zeros(1), torch.ones(1, 1), kl_coef=0.1)
    with pytest.raises(ValueError, match="no legal action"):
        entropy_of_choices(torch.zeros(2, 2), torch.tensor([[1, 0], [0, 0]]))
