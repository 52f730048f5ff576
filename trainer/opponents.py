"""The opponent pool of docs/TRAINING.md ("Opponents"): who the learner plays next, and how it fares.

Entries are frozen snapshots of the learner, scripted bots from the registry, other
models, and optionally the live learner itself (self-play). The pool keeps the learner's
record against each entry and samples opponents by one of three rules (``SAMPLING``):

- ``uniform``: every entry alike.
- ``pfsp`` (prioritised fictitious self-play, AlphaStar's "hard" variant): weight
  ``(1 - w)^p`` with w the learner's win rate against the entry (draws count half) and
  p = 2 by default. Opponents the learner already beats fade out; the ones that beat it
  dominate. An entry not yet played counts as w = 0.5, so a new snapshot is tried at once
  rather than starved. If the learner beats every entry outright (all weights 0), the
  pool falls back to uniform: there is nothing left to prioritise.
- ``nash``: the Nash-averaging mixture (PSRO-style) from ``arena.ratings.nash``. The meta
  game is {learner} ∪ pool with antisymmetric payoff ``A[i, j] = w(i vs j) - 0.5``. Only
  the learner's row is measured; opponent-versus-opponent entries are set to 0 (even):
  the pool never plays itself, and inventing those results would decide the answer. With
  that table the maximum-entropy equilibrium has a plain reading: it is the most spread
  mixture over the pool against which the learner does not win on average. While the
  learner's mean win rate over a uniform pool is at most 0.5 that is the uniform mixture;
  once the learner wins on average, mass tilts towards the entries that still beat it
  (failing those, the ones it only draws with), just enough to bring its expected win
  rate back to 0.5. The learner's own share is
  dropped and the rest renormalised; a floor (``nash_floor`` of the mass, spread evenly)
  keeps every entry sampled so its statistics stay fresh. If the learner beats every
  entry the equilibrium is the learner alone and the pool part is uniform.

Win rates are the raw fraction over the matches recorded (no prior beyond "unseen is
0.5"); the trainer decides how many matches an update plays, hence how noisy they are.
Sampling is deterministic: draw k of a pool seeded with s comes from a generator keyed by
(s, k), so a run restarted at draw k with the same statistics samples the same opponents.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from arena.ratings.nash import maxent_nash
from arena.ratings.trueskill import ranks_from_returns
from bots.registry import parse_spec
from games.api import did_you_mean

__all__ = ["KINDS", "OUTCOME_SCORES", "SAMPLING", "Opponent", "OpponentPool", "learner_score", "model_names"]

KINDS = ("self", "snapshot", "bot", "model")
"""``self``: the live learner (self-play; ``spec`` is empty); ``snapshot``: a frozen checkpoint
of the learner (``spec`` is its directory); ``bot``: a registry bot (``spec`` is a bot spec
such as ``tit-for-tat`` or ``alphabeta:depth=6``); ``model``: another model's directory."""

SAMPLING = ("uniform", "pfsp", "nash")

OUTCOME_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0, "forfeit": 0.0}
"""The learner's score per outcome word of ``arena.match.outcomes_of``; ``ranked`` (games that
are not two-seat zero-sum) is scored by comparing the two returns instead."""


def learner_score(learner_return: float, opponent_return: float, outcome: str) -> float:
    """The learner's score in one match, 1 for a win, 0.5 for a draw (see ``OUTCOME_SCORES``).

    ``ranked`` returns are compared as TrueSkill ranks them (``ranks_from_returns``), so that
    float noise (public-goods pays 6.6 and 6.6000000000000005 for one payoff) is a draw here too.
    """
    if outcome == "ranked":
        mine, theirs = ranks_from_returns([learner_return, opponent_return])
        return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
    if outcome in OUTCOME_SCORES:
        return OUTCOME_SCORES[outcome]
    words = [*OUTCOME_SCORES, "ranked"]
    raise ValueError(f"unknown match outcome {outcome!r}{did_you_mean(outcome, words)} (known: {', '.join(words)})")


def model_names(folders: Sequence[str], taken: Collection[str] = ()) -> list[str]:
    """Pool names for model folders: each folder's shortest trailing path that no other
    folder shares and that is not in ``taken`` (the other entries' names). Checkpoints of two
    runs are both called ``final``; they become ``a/checkpoints/final`` and
    ``b/checkpoints/final``, while a lone folder keeps its plain name."""
    parts = [Path(folder).resolve().parts for folder in folders]
    for i, path in enumerate(parts):
        if path in parts[:i]:
            raise ValueError(f"{folders[i]!r} is listed twice")
    lengths = [1] * len(parts)
    while True:
        names = [Path(*path[-k:]).as_posix() for path, k in zip(parts, lengths, strict=True)]
        clashing = [i for i, name in enumerate(names) if name in taken or names.count(name) > 1]
        if not clashing:
            return names
        for i in clashing:
            if lengths[i] == len(parts[i]):
                raise ValueError(f"no name tells {folders[i]!r} apart from {names[i]!r}")
            lengths[i] += 1


@dataclass(frozen=True)
class Opponent:
    """One pool entry; ``name`` is how statistics, logs and plots refer to it."""

    name: str
    kind: str
    spec: str = ""

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("an opponent needs a non-empty name")
        if self.kind not in KINDS:
            raise ValueError(
                f"opponent {self.name!r}: unknown kind {self.kind!r}{did_you_mean(self.kind, KINDS)} (kinds: {', '.join(KINDS)})"
            )
        if self.kind == "self" and self.spec:
            raise ValueError(f"opponent {self.name!r} of kind 'self' is the live learner and takes no spec, got {self.spec!r}")
        if self.kind != "self" and not self.spec.strip():
            what = "a bot spec" if self.kind == "bot" else "a model directory"
            raise ValueError(f"opponent {self.name!r} of kind {self.kind!r} needs {what} as its spec")
        if self.kind == "bot":
            parse_spec(self.spec)  # a malformed spec fails at configuration, not at the first match


@dataclass
class _Record:
    matches: int = 0
    score: float = 0.0
    learner_return: float = 0.0
    opponent_return: float = 0.0


class OpponentPool:
    """Entries in insertion order, the learner's record against each, and a sampling rule.

    ``max_snapshots`` caps the snapshots kept (``add_snapshot`` drops the oldest one and its
    statistics); bots, models and ``self`` are never dropped. ``pfsp_power`` is PFSP's p;
    ``nash_floor`` the share of the Nash mixture spread evenly over all entries.
    """

    def __init__(
        self,
        entries: Iterable[Opponent] = (),
        *,
        sampling: str = "uniform",
        seed: int = 0,
        max_snapshots: int = 8,
        pfsp_power: float = 2.0,
        nash_floor: float = 0.1,
    ) -> None:
        if sampling not in SAMPLING:
            raise ValueError(
                f"unknown opponent sampling {sampling!r}{did_you_mean(sampling, SAMPLING)} (choices: {', '.join(SAMPLING)})"
            )
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        if max_snapshots < 1:
            raise ValueError(f"max_snapshots must be at least 1, got {max_snapshots}")
        if not (math.isfinite(pfsp_power) and pfsp_power > 0.0):
            raise ValueError(f"pfsp_power must be positive, got {pfsp_power}")
        if not 0.0 <= nash_floor <= 1.0:
            raise ValueError(f"nash_floor must be in [0, 1], got {nash_floor}")
        self.sampling = sampling
        self.seed = seed
        self.max_snapshots = max_snapshots
        self.pfsp_power = pfsp_power
        self.nash_floor = nash_floor
        self.draws = 0
        """How many times ``sample`` has run: the second half of the key of its next generator."""
        self._entries: dict[str, Opponent] = {}
        self._records: dict[str, _Record] = {}
        for entry in entries:
            self._add(entry)
        snapshots = sum(entry.kind == "snapshot" for entry in self._entries.values())
        if snapshots > max_snapshots:
            raise ValueError(f"{snapshots} snapshots given but max_snapshots is {max_snapshots}")

    @property
    def entries(self) -> tuple[Opponent, ...]:
        return tuple(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def _add(self, entry: Opponent) -> None:
        if entry.name in self._entries:
            raise ValueError(f"the opponent pool already has an entry named {entry.name!r}")
        self._entries[entry.name] = entry
        self._records[entry.name] = _Record()

    def add_snapshot(self, name: str, path: str) -> Opponent | None:
        """Add a frozen checkpoint of the learner; returns the snapshot dropped to respect the cap, if any.

        The caller owns the files: it may delete the dropped snapshot's directory, or keep it
        for evaluation.
        """
        self._add(Opponent(name, "snapshot", path))
        snapshots = [entry for entry in self._entries.values() if entry.kind == "snapshot"]
        if len(snapshots) <= self.max_snapshots:
            return None
        oldest = snapshots[0]
        del self._entries[oldest.name], self._records[oldest.name]
        return oldest

    def record(self, name: str, learner_return: float, opponent_return: float, outcome: str) -> None:
        """Count one finished match of the learner against ``name``; ``outcome`` is the learner's word.

        ``win``/``draw``/``loss``/``forfeit`` score 1, 0.5, 0, 0 (a learner forfeit is a loss);
        ``ranked`` is scored by the returns: 1 if the learner's is higher, 0.5 if equal.
        """
        if name not in self._entries:
            raise ValueError(f"no opponent named {name!r} in the pool{did_you_mean(name, list(self._entries))}")
        if not (math.isfinite(learner_return) and math.isfinite(opponent_return)):
            raise ValueError(f"match against {name!r}: returns must be finite, got {learner_return} and {opponent_return}")
        score = learner_score(learner_return, opponent_return, outcome)
        rec = self._records[name]
        rec.matches += 1
        rec.score += score
        rec.learner_return += learner_return
        rec.opponent_return += opponent_return

    def win_rate(self, name: str) -> float | None:
        """The learner's win rate against ``name`` (draws count half); None before the first match."""
        rec = self._records[name]
        return rec.score / rec.matches if rec.matches else None

    def _known_win_rates(self) -> np.ndarray:
        rates = (self.win_rate(name) for name in self._entries)
        return np.array([0.5 if rate is None else rate for rate in rates])

    def weights(self) -> dict[str, float]:
        """The probability of each entry under the pool's sampling rule (see the module docstring)."""
        n = len(self._entries)
        if n == 0:
            return {}
        uniform = np.full(n, 1.0 / n)
        if self.sampling == "uniform":
            probs = uniform
        elif self.sampling == "pfsp":
            raw = (1.0 - self._known_win_rates()) ** self.pfsp_power
            probs = raw / raw.sum() if raw.sum() > 0.0 else uniform
        else:
            probs = (1.0 - self.nash_floor) * self._nash_mixture() + self.nash_floor * uniform
        return dict(zip(self._entries, (float(p) for p in probs), strict=True))

    def _nash_mixture(self) -> np.ndarray:
        """The max-entropy Nash mixture over {learner} ∪ pool, restricted to the pool and renormalised."""
        learner_row = self._known_win_rates() - 0.5
        n = len(learner_row)
        payoff = np.zeros((n + 1, n + 1))
        payoff[0, 1:] = learner_row
        payoff[1:, 0] = -learner_row
        pool_share = maxent_nash(payoff)[1:]
        total = pool_share.sum()
        if total <= 1e-9:  # the learner alone is the equilibrium: it beats every entry
            return np.full(n, 1.0 / n)
        return pool_share / total

    def sample(self, n: int) -> list[Opponent]:
        """``n`` opponents drawn with replacement by the current weights, deterministic in (seed, draw count)."""
        if n < 0:
            raise ValueError(f"cannot sample a negative number of opponents ({n})")
        if not self._entries:
            raise ValueError("the opponent pool is empty: add a bot, a model or a snapshot first")
        probs = np.array(list(self.weights().values()))
        rng = np.random.default_rng([self.seed, self.draws])
        self.draws += 1
        entries = self.entries
        return [entries[i] for i in rng.choice(len(entries), size=n, p=probs / probs.sum())]

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per entry, for logs and plots: kind, matches, the learner's win rate and mean returns, weight.

        Rates and means are None before the first match (JSON has no NaN).
        """
        weights = self.weights()
        out: dict[str, dict[str, Any]] = {}
        for name, entry in self._entries.items():
            rec = self._records[name]
            played = rec.matches > 0
            out[name] = {
                "kind": entry.kind,
                "matches": rec.matches,
                "win_rate": self.win_rate(name),
                "mean_return": rec.learner_return / rec.matches if played else None,
                "mean_opponent_return": rec.opponent_return / rec.matches if played else None,
                "weight": weights[name],
            }
        return out
