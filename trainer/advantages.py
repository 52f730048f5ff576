"""Credit assignment: the advantage estimators of docs/TRAINING.md as pure numpy functions.

A trainer turns match records into one ``TurnBatch`` (one row per turn a seat took) and
asks an estimator, by name, for one advantage per row; the policy loss then applies a
turn's advantage to every token of that turn's action (docs/TRAINING.md, "The update"). Keeping this
module free of torch lets the math be tested on hand-computed numbers anywhere.

Estimators (``ESTIMATORS``, chosen by name in the training config):

- ``spiral``: role-conditioned baseline, one moving average per (game, role) (§1);
- ``mars``: turn-level reward-to-go with agent-specific normalisation (§2);
- ``dr_mas``: agent-wise normalisation of returns (§3);
- ``leave_one_out``: group-relative baseline over rollouts sharing a seed (§4).

Any of them can be followed by the Advantage Alignment term for general-sum games (§5).
"Player" and "agent" below both mean a (game, seat) pair: seats of one game can have
different reward scales (first mover, dealer), so their statistics are never mixed (§7).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import typing
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

RoleKey = tuple[str, int]
"""(game, seat): the key of a role baseline and of every per-agent statistic."""

Normalization = Literal["distinct", "whiten"]


@dataclass(frozen=True)
class TurnBatch:
    """The turns of one update, one row per turn a seat took, as parallel 1-D arrays.

    ``rewards``: the reward of that turn (0 until the end in win/lose games; every round
    in iterated games). ``player``: the seat that acted. ``match``: the rollout the turn
    belongs to. ``step``: the turn's place in time, the seat's own turn index k = 0..K-1
    in turn-based games or the round in iterated and simultaneous games; only its order
    and equality matter, and two seats' turns at the same step are "the same round" for
    Advantage Alignment. ``game`` and ``seed``: what was played, and the seed that fixed
    its chance events (rollouts sharing a seed form a leave-one-out group). A scalar
    ``game`` or ``seed`` is broadcast to every row.

    Arrays are copied and made read-only, so estimators stay pure and a batch can be
    reused across estimators.
    """

    rewards: np.ndarray
    player: np.ndarray
    match: np.ndarray
    step: np.ndarray
    game: np.ndarray
    seed: np.ndarray

    def __post_init__(self) -> None:
        rewards = np.array(self.rewards, dtype=float)
        if rewards.ndim != 1:
            raise ValueError(f"TurnBatch.rewards must be one-dimensional, got shape {rewards.shape}")
        n = rewards.shape[0]
        columns: dict[str, np.ndarray] = {"rewards": rewards}
        for name, dtype in (("player", np.int64), ("match", np.int64), ("step", np.int64), ("seed", np.int64), ("game", object)):
            value = np.array(getattr(self, name), dtype=dtype)
            if value.ndim == 0:
                value = np.full(n, value.item(), dtype=dtype)
            if value.shape != (n,):
                raise ValueError(f"TurnBatch.{name} has shape {value.shape}; expected ({n},) like rewards")
            columns[name] = value
        for name, value in columns.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        if not np.all(np.isfinite(rewards)):
            raise ValueError("TurnBatch.rewards contains a NaN or infinite reward")
        seen: set[tuple[int, int, int]] = set()
        identity: dict[int, tuple[str, int]] = {}
        for m, p, s, g, sd in zip(self.match, self.player, self.step, self.game, self.seed, strict=True):
            key = (int(m), int(p), int(s))
            if key in seen:
                raise ValueError(f"match {key[0]} has two turns of player {key[1]} at step {key[2]}")
            seen.add(key)
            if identity.setdefault(key[0], (g, int(sd))) != (g, int(sd)):
                raise ValueError(f"match {key[0]} mixes games or seeds: {identity[key[0]]} and {(g, int(sd))}")

    def __len__(self) -> int:
        return int(self.rewards.shape[0])


# --- shared pieces -------------------------------------------------------------------


def _group(*columns: np.ndarray) -> dict[tuple[Hashable, ...], np.ndarray]:
    """Row indices per distinct tuple of column values, in first-seen order."""
    groups: dict[tuple[Hashable, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(*(column.tolist() for column in columns), strict=True)):
        groups[key].append(i)
    return {key: np.array(rows, dtype=np.int64) for key, rows in groups.items()}


def _trajectories(batch: TurnBatch) -> dict[tuple[Hashable, ...], np.ndarray]:
    """Row indices of each (match, player) trajectory, sorted by step."""
    return {key: rows[np.argsort(batch.step[rows], kind="stable")] for key, rows in _group(batch.match, batch.player).items()}


def _agents(batch: TurnBatch) -> dict[tuple[Hashable, ...], np.ndarray]:
    """Row indices of each agent, a (game, player) pair (§7)."""
    return _group(batch.game, batch.player)


def _to_go(values: np.ndarray, steps: np.ndarray, gamma: float) -> np.ndarray:
    """sum_{k' >= k} gamma^(k'-k) * values_{k'} for values already sorted by step.

    The exponent is the step difference, so a seat that skips rounds is discounted by the
    rounds that passed, not by how many turns it took.
    """
    out = np.empty_like(values, dtype=float)
    running = 0.0
    for j in range(len(values) - 1, -1, -1):
        if j < len(values) - 1:
            running *= gamma ** float(steps[j + 1] - steps[j])
        running += float(values[j])
        out[j] = running
    return out


_ROUNDING = 1e-9
"""Values this close, relative to their size, are one value: a game can pay one payoff
computed along two paths (public-goods pays 6.6 and 6.6000000000000005)."""


def _standardise(values: np.ndarray, centre: float, eps: float) -> np.ndarray:
    """(values - centre) / (std + eps), and exactly 0 for a group of equal values, equal up
    to rounding included: their mean can miss them in the last bit, and whitened again
    downstream (MARS normalises twice) that rounding error would become credit of order one."""
    if np.ptp(values) <= _ROUNDING * float(np.abs(values).max()):
        return np.zeros_like(values, dtype=float)
    return (values - centre) / (values.std() + eps)


def _distinct(values: np.ndarray) -> np.ndarray:
    """One of each group of values equal up to rounding (``_ROUNDING``, and at least that
    much in absolute terms, for values around 0): a return-to-go summed along two paths
    (u + u against u + u + u - u) differs in the last bits, and counted twice it would move
    MARS's centre by a tenth of a standard deviation."""
    ordered = np.sort(values)
    scale = max(1.0, float(np.abs(ordered).max()))
    return ordered[np.r_[True, np.diff(ordered) > _ROUNDING * scale]]


def _check_gamma(gamma: float) -> None:
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")


def _check_eps(eps: float) -> None:
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"eps must be positive (it keeps a constant group from dividing by zero), got {eps}")


# --- §1 SPIRAL: role-conditioned advantage -------------------------------------------


def spiral_role_advantages(
    batch: TurnBatch, baselines: Mapping[RoleKey, float] | None = None, *, alpha: float = 0.95
) -> tuple[np.ndarray, dict[RoleKey, float]]:
    """SPIRAL's role-conditioned advantage: A_p = R_p - b_{game,p}.

    R_p is the seat's return in its match (the sum of its turn rewards) and every turn of
    that seat gets A_p. The baseline of a (game, role) is read BEFORE it is updated with
    R_p, b <- alpha * b + (1 - alpha) * R_p, otherwise a match would partly baseline
    itself. Matches are taken in increasing match id, so two matches of one role in the
    same batch see the baseline as the earlier one left it. Missing keys start at 0.

    Returns the advantages and the new baselines; the given mapping is not modified,
    so the caller decides when the new state is committed.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    state: dict[RoleKey, float] = dict(baselines or {})
    advantages = np.zeros(len(batch))
    trajectories = _trajectories(batch)
    for m, p in sorted(trajectories):
        rows = trajectories[(m, p)]
        key: RoleKey = (str(batch.game[rows[0]]), int(p))
        ret = float(batch.rewards[rows].sum())
        before = state.get(key, 0.0)
        advantages[rows] = ret - before
        state[key] = alpha * before + (1.0 - alpha) * ret
    return advantages, state


# --- §2 MARS: turn-level advantage, agent-specific normalisation ---------------------


def mars_advantages(
    batch: TurnBatch, *, gamma: float = 1.0, normalization: Normalization = "distinct", eps: float = 1e-8
) -> np.ndarray:
    """MARS's turn-level advantage, in three steps.

    1. Rewards are whitened per agent, r~ = (r - mean) / (std + eps) over that (game,
       player)'s turn rewards in the batch, so seats with different scales are comparable.
    2. Turn-level reward-to-go, summed before normalising:
       A_{p,k} = sum_{k' >= k} gamma^(k'-k) * r~_{p,k'} within each trajectory.
    3. Agent-specific normalisation of the A of each (game, player):
       ``"distinct"`` (MARS) centres on the mean of the agent's DISTINCT values, so a
       value repeated by many turns (long games with gamma = 1) does not weigh more;
       ``"whiten"`` centres on the mean of all its values. Both then divide by the std
       of all the agent's values (+ eps); the variants differ only in the centre.

    Standard deviations are population ones (ddof = 0).
    """
    _check_gamma(gamma)
    _check_eps(eps)
    if normalization not in ("distinct", "whiten"):
        raise ValueError(f"unknown MARS normalization {normalization!r}; choose 'distinct' or 'whiten'")
    agents = _agents(batch)
    shaped = np.array(batch.rewards, dtype=float)
    for rows in agents.values():
        shaped[rows] = _standardise(shaped[rows], shaped[rows].mean(), eps)
    to_go = np.zeros(len(batch))
    for rows in _trajectories(batch).values():
        to_go[rows] = _to_go(shaped[rows], batch.step[rows], gamma)
    advantages = np.zeros(len(batch))
    for rows in agents.values():
        values = to_go[rows]
        centre = _distinct(values).mean() if normalization == "distinct" else values.mean()
        advantages[rows] = _standardise(values, centre, eps)
    return advantages


# --- §3 Dr. MAS: agent-wise normalisation --------------------------------------------


def dr_mas_advantages(batch: TurnBatch, *, eps: float = 1e-6) -> np.ndarray:
    """Dr. MAS's agent-wise normalisation.

    A_i = (R_i - mean_{agent(i)}) / (std_{agent(i)} + eps), where R_i is the return of
    trajectory i and the mean and std run over the returns of the same (game, player) in
    the batch. One GRPO-style mean over all agents is the wrong baseline for each when
    their reward distributions differ. Every turn of a trajectory gets its A_i.
    """
    _check_eps(eps)
    trajectories = _trajectories(batch)
    by_agent: dict[RoleKey, list[tuple[np.ndarray, float]]] = defaultdict(list)
    for (_, p), rows in trajectories.items():
        by_agent[(str(batch.game[rows[0]]), int(p))].append((rows, float(batch.rewards[rows].sum())))
    advantages = np.zeros(len(batch))
    for members in by_agent.values():
        returns = np.array([ret for _, ret in members])
        normalised = _standardise(returns, returns.mean(), eps)
        for (rows, _), value in zip(members, normalised, strict=True):
            advantages[rows] = value
    return advantages


# --- §4 group-relative leave-one-out baseline ----------------------------------------


def leave_one_out_advantages(batch: TurnBatch, *, gamma: float = 0.96, reward_scale: float = 1.0) -> np.ndarray:
    """Leave-one-out baseline over rollouts that share a seed.

    G_{i,t} = sum_{t' >= t} gamma^(t'-t) * reward_scale * r_{i,t'} is seat p's discounted
    return-to-go in rollout i, and A_{i,t} = G_{i,t} - mean_{j != i} G_{j,t} over the
    other rollouts of the same (game, seed), same seat, same step. Sharing the seed (common
    random numbers) removes the luck of the deal from the comparison; excluding i keeps a
    rollout from being its own baseline, and no critic is needed. A rollout with no turn
    at step t still collects what its later turns pay, gamma^(t'-t) * G_{j,t'} from its
    next turn t' (a seat can sit out rounds of a simultaneous game); after its last turn
    G_{j,t} is 0. The paper scales rewards by 1/100 (``reward_scale``). A rollout left alone
    with its seed (the others void, or forfeited before their first turn, so without turns)
    has no baseline: its turns get 0 and teach nothing. Refused, one such group stopped the run.
    """
    _check_gamma(gamma)
    if not (math.isfinite(reward_scale) and reward_scale > 0.0):
        raise ValueError(f"reward_scale must be positive (a negative one trains the learner to lose), got {reward_scale}")
    to_go: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    advantages = np.zeros(len(batch))
    for (m, p), rows in _trajectories(batch).items():
        values = _to_go(batch.rewards[rows] * reward_scale, batch.step[rows], gamma)
        to_go[(int(m), int(p))] = (batch.step[rows], values)
        advantages[rows] = values

    def collected(j: int, p: int, t: int) -> float:
        steps, values = to_go.get((j, p), (np.zeros(0, dtype=np.int64), np.zeros(0)))
        k = int(np.searchsorted(steps, t))
        return float(gamma ** float(steps[k] - t) * values[k]) if k < len(steps) else 0.0

    # per seat: in self-play a group-mate can have turns at one seat and none at another
    rollouts: dict[tuple[str, int, int], set[int]] = defaultdict(set)
    for m, g, sd, p in zip(batch.match.tolist(), batch.game.tolist(), batch.seed.tolist(), batch.player.tolist(), strict=True):
        rollouts[(g, sd, p)].add(m)
    for i in range(len(batch)):
        m, p, t = int(batch.match[i]), int(batch.player[i]), int(batch.step[i])
        others = rollouts[(batch.game[i], int(batch.seed[i]), p)] - {m}
        advantages[i] = advantages[i] - sum(collected(j, p, t) for j in others) / len(others) if others else 0.0
    return advantages


# --- §5 Advantage Alignment ----------------------------------------------------------


@dataclass(frozen=True)
class Alignment:
    """The Advantage Alignment term's settings."""

    beta: float = 2.0
    gamma: float = 0.96
    divide_by_t: bool = False

    def __post_init__(self) -> None:
        _check_gamma(self.gamma)
        if not (math.isfinite(self.beta) and self.beta >= 0.0):
            raise ValueError(f"beta must be a finite number >= 0 (a negative one rewards hurting the co-player), got {self.beta}")


def advantage_alignment(
    batch: TurnBatch, advantages: np.ndarray, *, beta: float = 2.0, gamma: float = 0.96, divide_by_t: bool = False
) -> np.ndarray:
    """Add the Advantage Alignment term to any estimator's advantages.

    A*_t = A1_t + beta * (sum_{k < t} gamma^(t-k) * A1_k) * A2_t, where A1 is the
    learner's advantage at its own steps and A2_t the co-players' advantage at the same
    step of the same match (their sum when there are several; a co-player without a turn
    at t adds 0). It reinforces actions good for the co-player when the past has been
    good for the learner: reciprocity, which plain RL loses in social dilemmas. The term
    is 0 at the learner's first step (an empty past). ``divide_by_t`` divides the weight
    by t, as the original paper does.
    """
    _check_gamma(gamma)
    base = np.asarray(advantages, dtype=float)
    if base.shape != (len(batch),):
        raise ValueError(f"advantages have shape {base.shape}; expected ({len(batch)},), one per turn of the batch")
    at: dict[tuple[int, int, int], float] = {
        (int(m), int(p), int(s)): float(a) for m, p, s, a in zip(batch.match, batch.player, batch.step, base, strict=True)
    }
    players: dict[int, set[int]] = defaultdict(set)
    for m, p in zip(batch.match.tolist(), batch.player.tolist(), strict=True):
        players[m].add(p)
    out = base.copy()
    for (m, p), rows in _trajectories(batch).items():
        steps = batch.step[rows]
        for j, row in enumerate(rows):
            t = int(steps[j])
            past = sum(gamma ** float(t - int(steps[k])) * base[rows[k]] for k in range(j))
            co = sum(at.get((int(m), q, t), 0.0) for q in players[int(m)] - {int(p)})
            weight = past / t if divide_by_t and t > 0 else past
            out[row] = base[row] + beta * weight * co
    return out


# --- the registry --------------------------------------------------------------------

Estimator = Callable[..., tuple[np.ndarray, dict[RoleKey, float]]]
"""(batch, baselines, **params) -> (advantages, new baselines); only ``spiral`` keeps state."""


def _stateless(fn: Callable[..., np.ndarray]) -> Estimator:
    @functools.wraps(fn)
    def run(
        batch: TurnBatch, baselines: Mapping[RoleKey, float] | None = None, **params: Any
    ) -> tuple[np.ndarray, dict[RoleKey, float]]:
        return fn(batch, **params), dict(baselines or {})

    return run


ESTIMATORS: dict[str, Estimator] = {
    "spiral": spiral_role_advantages,
    "mars": _stateless(mars_advantages),
    "dr_mas": _stateless(dr_mas_advantages),
    "leave_one_out": _stateless(leave_one_out_advantages),
}


def estimator_parameters(name: str) -> dict[str, Any]:
    """The parameters estimator ``name`` takes and their types, read from its signature so
    that a config can check its keys without a second list to keep in step."""
    fn = inspect.unwrap(ESTIMATORS[name])
    hints = typing.get_type_hints(fn)
    return {p.name: hints[p.name] for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}


def check_estimator(name: str, params: Mapping[str, Any]) -> None:
    """Raise ValueError for a parameter out of range before a run starts rather than at its
    first update: the estimator runs on an empty batch, so its own checks are the only rules."""
    ESTIMATORS[name](_NO_TURNS, None, **params)


_NO_TURNS = TurnBatch(rewards=[], player=[], match=[], step=[], game=[], seed=[])


def estimate_advantages(
    name: str,
    batch: TurnBatch,
    *,
    baselines: Mapping[RoleKey, float] | None = None,
    alignment: Alignment | None = None,
    **params: Any,
) -> tuple[np.ndarray, dict[RoleKey, float]]:
    """Run the estimator ``name`` on ``batch``, then Advantage Alignment if asked.

    ``params`` go to the estimator (``alpha``, ``gamma``, ``normalization``, ``eps``,
    ``reward_scale``); ``baselines`` is the role-baseline state, used by ``spiral`` and
    passed through unchanged by the others. Returns (advantages, new baselines).
    """
    if name not in ESTIMATORS:
        close = difflib.get_close_matches(name, ESTIMATORS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown advantage estimator {name!r}{hint} (known: {', '.join(sorted(ESTIMATORS))})")
    advantages, state = ESTIMATORS[name](batch, baselines, **params)
    if alignment is not None:
        advantages = advantage_alignment(
            batch, advantages, beta=alignment.beta, gamma=alignment.gamma, divide_by_t=alignment.divide_by_t
        )
    return advantages, state
