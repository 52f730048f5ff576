"""``arena train run``: the self-play training loop.

Each update: sample opponents from the pool, plan ``matches_per_update`` matches (games in
turn, the learner's seat alternating, ``group_size`` matches sharing a seed), play them
through ``play_rollouts``, add any stored turns, compute advantages with the configured
estimator (and Advantage Alignment), run the PPO update, record per-opponent results, and
append one JSON line of metrics. Snapshots join the pool every ``snapshot_every`` updates;
the gauntlet against fixed bots runs before the first update, every ``eval.every`` updates
and after the last; checkpoints are
``save_pretrained`` folders, so each one is a bot (``llm:model=DIR``) like any other.

Everything random is keyed by the run's seed, so two runs with one seed write the same
metrics (timings aside).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import trio

import games
from trainer.advantages import TurnBatch, estimate_advantages
from trainer.config import TrainConfig, TrainConfigError, check_out_dir
from trainer.opponents import Opponent, OpponentPool, learner_score, model_names
from trainer.plot import METRICS_FILE
from trainer.policy import Policy
from trainer.rollout import MatchPlan, Rollout, Sample, SeatPlan, mean_entropy, play_rollouts
from trainer.store_samples import store_samples
from trainer.update import Learner

EVAL_KEYS = 1_000_000
"""Gauntlet matches draw their seeds from keys of their own, apart from training updates'."""


@dataclass(frozen=True)
class Progress:
    update: int
    updates: int
    elapsed: float
    metrics: dict[str, Any]


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    final: Path
    metrics: list[dict[str, Any]]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run, after ``update`` of ``updates`` updates had finished; ``kept`` is
    the checkpoint saved of where it stopped (None when no update had finished)."""

    def __init__(self, update: int, updates: int, kept: Path | None) -> None:
        super().__init__(f"interrupted after {update} of {updates} updates")
        self.update = update
        self.updates = updates
        self.kept = kept


def match_seed(seed: int, update: int, group: int) -> int:
    """The seed of a rollout group: distinct per (run seed, update, group), fixed across runs."""
    return int(np.random.default_rng([seed, update, group]).integers(2**31))


def interval95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of a normal 95% interval (0 for fewer than two values)."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return float(data.mean()) if len(data) else 0.0, 0.0
    return float(data.mean()), float(1.96 * data.std(ddof=1) / math.sqrt(len(data)))


def plan_matches(
    config: TrainConfig, opponents: Sequence[Opponent], update: int, *, group_size: int, first_group: int = 0
) -> list[MatchPlan]:
    """One match per sampled opponent. Matches come in groups of ``group_size`` that share
    the seed, the game and the learner's seat (a leave-one-out baseline compares like with
    like); from group to group the games take turns and the learner's seat alternates,
    counted from ``first_group``, the groups planned before: counted within one update, a
    run of one group per update (or of as many groups as games) had the learner in seat 0
    of every match."""
    plans = []
    for i, opponent in enumerate(opponents):
        group = i // group_size
        turn = first_group + group
        entry = config.games[turn % len(config.games)]
        players = games.get(entry.name).config_of(entry.config).players
        if opponent.kind == "self":
            seats = tuple(SeatPlan("learner", "self") for _ in range(players))
        else:
            kind = "bot" if opponent.kind == "bot" else "model"
            other = opponent.spec if kind == "bot" else opponent.name
            learner_seat = (turn // len(config.games)) % players
            seats = tuple(SeatPlan("learner", "learner") if s == learner_seat else SeatPlan(kind, other) for s in range(players))
        plans.append(MatchPlan(i, entry.name, match_seed(config.seed, update, group), seats, entry.config))
    return plans


def turn_batch(samples: Sequence[Sample]) -> TurnBatch:
    return TurnBatch(
        rewards=[s.reward for s in samples],
        player=[s.seat for s in samples],
        match=[s.match for s in samples],
        step=[s.step for s in samples],
        game=np.array([s.game for s in samples], dtype=object),
        seed=[s.seed for s in samples],
    )


def stored_slice(stored: Sequence[Sample], start: int, turns: int) -> tuple[list[Sample], int]:
    """Whole trajectories of ``stored`` from index ``start`` on, cycling, until they hold at
    least ``turns`` turns or every trajectory is taken once; and where the next slice begins.

    A trajectory cut in two would reach the estimators with part of its rewards: the return
    of a game won on its last turn would read as 0 for the turns before the cut.
    """
    keys = [(sample.match, sample.seat) for sample in stored]
    bounds = [i for i in range(len(keys)) if i == 0 or keys[i] != keys[i - 1]] + [len(keys)]
    taken: list[Sample] = []
    first = bounds.index(start)
    count = len(bounds) - 1
    for k in range(count):
        j = (first + k) % count
        taken.extend(stored[bounds[j] : bounds[j + 1]])
        if len(taken) >= turns:
            return taken, bounds[(j + 1) % count]
    return taken, start


def learner_outcome(rollout: Rollout) -> tuple[float, float, str]:
    """The learner's return, the opponents' mean return and the learner's outcome word."""
    seats = rollout.learner_seats()
    result = rollout.result
    mine = float(np.mean([result.returns[s] for s in seats]))
    others = [r for s, r in enumerate(result.returns) if s not in seats]
    theirs = float(np.mean(others)) if others else mine
    return mine, theirs, result.outcomes[seats[0]]


class Trainer:
    """The state of one run: policy, learner, pool, baselines and the metrics file.

    Everything that can refuse the run (the out_dir, the models, the stored turns) is done
    before ``out_dir`` is touched, so a run that cannot start leaves nothing behind and, with
    ``overwrite``, the earlier run's files are kept until this one is sure to start.
    """

    def __init__(self, config: TrainConfig, *, overwrite: bool = False) -> None:
        check_out_dir(config, overwrite=overwrite)
        self.config = config
        self.run_dir = Path(config.out_dir)
        torch.manual_seed(config.seed)
        acting = config.acting
        options = {
            "device": config.device,
            "dtype": config.dtype,
            "temperature": acting.temperature,
            "max_new_tokens": acting.max_new_tokens,
            "score_limit": acting.score_limit,
        }
        try:
            self.policy = Policy.load(config.model, **options)
        except (OSError, ValueError) as error:  # a folder that is there but will not load: said as the key's
            raise TrainConfigError(f"model: {error}") from None
        reference = Policy.load(config.model, **options) if config.ppo.kl_coef > 0 else None
        self.learner = Learner(self.policy, config.ppo, seed=config.seed, reference=reference)
        self.options = options
        entries = [Opponent("self", "self")] if config.opponents.self_play else []
        entries += [Opponent(spec, "bot", spec) for spec in config.opponents.bots]
        names = model_names(config.opponents.models, taken={entry.name for entry in entries})
        entries += [Opponent(name, "model", m) for name, m in zip(names, config.opponents.models, strict=True)]
        self.pool = OpponentPool(
            entries, sampling=config.opponents.sampling, seed=config.seed, max_snapshots=config.opponents.max_snapshots
        )
        self.models: dict[str, Policy] = {}
        self.baselines: dict[tuple[str, int], float] = {}
        self.stored = store_samples(config.store, self.policy) if config.store is not None else []
        self.stored_next = 0
        """Where in ``stored`` the next update's stored turns begin."""
        self.metrics: list[dict[str, Any]] = []
        self.trained = 0
        """The last update whose PPO step finished: what a checkpoint saved on Ctrl-C holds."""
        self.stepping: int | None = None  # the update whose PPO step is changing the weights now
        self.evaluations = 0  # gauntlets played so far
        if overwrite:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=2, default=str))
        self._metrics_file = (self.run_dir / METRICS_FILE).open("w")

    def _model(self, entry: Opponent) -> Policy:
        if entry.name not in self.models:
            self.models[entry.name] = Policy.load(entry.spec, **self.options)
        return self.models[entry.name]

    def _play(self, plans: list[MatchPlan], update: int, opponents: Sequence[Opponent]) -> list[Rollout]:
        wanted = {o.name: o for o in opponents if o.kind in ("snapshot", "model")}
        models = {name: self._model(entry) for name, entry in wanted.items()}
        for name in set(self.models) - set(wanted):  # dropped snapshots free their memory
            del self.models[name]
        acting = self.config.acting
        return trio.run(
            lambda: play_rollouts(
                plans,
                self.policy,
                models=models,
                seed=self.config.seed * 1_000_003 + update,
                concurrency=self.config.concurrency,
                max_retries=acting.max_retries,
            )
        )

    def _log(self, row: dict[str, Any]) -> None:
        self.metrics.append(row)
        self._metrics_file.write(json.dumps(row) + "\n")
        self._metrics_file.flush()

    def _stored_slice(self) -> list[Sample]:
        if not self.stored or self.config.store is None:
            return []
        samples, self.stored_next = stored_slice(self.stored, self.stored_next, self.config.store.per_update)
        return samples

    def step(self, update: int) -> dict[str, Any]:
        started = time.monotonic()
        config = self.config
        # one opponent per group of rollouts sharing a seed: the group differs only by the learner's own sampling
        groups = config.matches_per_update // config.group_size
        opponents = [o for o in self.pool.sample(groups) for _ in range(config.group_size)]
        plans = plan_matches(config, opponents, update, group_size=config.group_size, first_group=(update - 1) * groups)
        rollouts = self._play(plans, update, opponents)
        per_opponent: dict[str, list[tuple[float, float | None]]] = {}
        returns = []
        # A void match (both seats of a simultaneous step failing at once, as a young model's
        # self-play does; max_steps) scores nobody: it returns 0 and trains on nothing.
        ended = [(r, o) for r, o in zip(rollouts, opponents, strict=True) if r.result.status != "void"]
        for rollout, opponent in ended:
            mine, theirs, outcome = learner_outcome(rollout)
            returns.append(mine)
            # against itself the learner has no winner: its seat 0's outcome scored its first mover
            score = None if opponent.kind == "self" else learner_score(mine, theirs, outcome)
            if score is not None:
                self.pool.record(opponent.name, mine, theirs, outcome)
            per_opponent.setdefault(opponent.name, []).append((mine, score))
        returns += [0.0] * (len(rollouts) - len(ended))
        stored = self._stored_slice()
        samples = [s for r, _ in ended for s in r.samples] + stored
        advantages, self.baselines = estimate_advantages(
            config.estimator.name,
            turn_batch(samples),
            baselines=self.baselines,
            alignment=config.alignment,
            **config.estimator.params,
        )
        rollout_s = time.monotonic() - started
        self.stepping = update
        stats = self.learner.update(samples, advantages)
        self.trained, self.stepping = update, None
        turns = sum(len(r.result.turns) for r in rollouts)
        format_errors = sum(t.format_error for r in rollouts for t in r.result.turns)
        row: dict[str, Any] = {
            "kind": "update",
            "update": update,
            "matches": len(rollouts),
            "void": len(rollouts) - len(ended),
            "samples": len(samples),
            "stored_samples": len(stored),
            "return_mean": float(np.mean(returns)),
            "entropy": mean_entropy(samples),
            "format_error_rate": format_errors / max(turns, 1),
            "advantage_std": float(np.std(advantages)) if len(advantages) else 0.0,
            "opponents": {name: _opponent_line(results) for name, results in sorted(per_opponent.items())},
            **stats,
            "rollout_s": rollout_s,
            "update_s": time.monotonic() - started - rollout_s,
            "turns_per_s": turns / max(rollout_s, 1e-9),
        }
        self._log(row)
        if config.opponents.snapshot_every and update % config.opponents.snapshot_every == 0:
            path = self.policy.save(self.run_dir / "snapshots" / f"update-{update}")
            dropped = self.pool.add_snapshot(f"snapshot-{update}", str(path))
            if dropped is not None:
                shutil.rmtree(dropped.spec, ignore_errors=True)
        if config.eval.every and config.eval.bots and (update % config.eval.every == 0 or update == config.updates):
            self.evaluate(update)  # the last update too: what the run ends with is what its user asks
        if config.checkpoint_every and update % config.checkpoint_every == 0:
            self.policy.save(self.run_dir / "checkpoints" / f"update-{update}")
        return row

    def evaluate(self, update: int) -> dict[str, Any]:
        """The gauntlet: ``eval.matches`` against each fixed bot, the learner's seat alternating."""
        config = self.config
        bots = [Opponent(spec, "bot", spec) for spec in config.eval.bots for _ in range(config.eval.matches)]
        # every evaluation match its own deal; seats alternate across gauntlets too, so that a
        # bot met once per gauntlet is not met from one seat only
        plans = plan_matches(config, bots, EVAL_KEYS + update, group_size=1, first_group=self.evaluations)
        self.evaluations += 1
        rollouts = self._play(plans, EVAL_KEYS + update, [])
        results: dict[str, Any] = {}
        for spec in config.eval.bots:
            against = [r for r, o in zip(rollouts, bots, strict=True) if o.name == spec]
            mine = [learner_outcome(r) for r in against if r.result.status != "void"]  # a void scores nobody
            mean, half = interval95([m for m, _, _ in mine])
            wins = [learner_score(*outcome) for outcome in mine]
            results[spec] = {  # every match void: no return or win rate (0 read as a measured loss)
                "matches": len(mine),
                "void": len(against) - len(mine),
                "return": mean if mine else None,
                "return_ci95": half if mine else None,
                "win_rate": float(np.mean(wins)) if wins else None,
            }
        row = {"kind": "eval", "update": update, "bots": results}
        self._log(row)
        return row

    def save(self, name: str) -> Path:
        return self.policy.save(self.run_dir / "checkpoints" / name)

    def close(self) -> None:
        self._metrics_file.close()


def _opponent_line(results: Sequence[tuple[float, float | None]]) -> dict[str, Any]:
    """One opponent's matches of an update: the learner's mean return and win rate (None
    against itself, which no seat of the learner can beat)."""
    scores = [score for _, score in results if score is not None]
    return {
        "matches": len(results),
        "return": float(np.mean([mine for mine, _ in results])),
        "win_rate": float(np.mean(scores)) if scores else None,
    }


def _keep_interrupted(trainer: Trainer) -> Path | None:
    """The weights as they stopped: ``interrupted-N`` after N whole updates, or ``interrupted-in-N``
    when the stop came during update N's PPO step, which had already changed them in part."""
    if trainer.stepping is not None:
        return trainer.save(f"interrupted-in-{trainer.stepping}")
    return trainer.save(f"interrupted-{trainer.trained}") if trainer.trained else None


def train(
    config: TrainConfig,
    *,
    overwrite: bool = False,
    progress: Callable[[Progress], None] | None = None,
    before_gauntlet: Callable[[int], None] | None = None,
) -> TrainResult:
    """Run every update of ``config``; the final checkpoint is ``out_dir/checkpoints/final``.

    Only a run that finished saves ``final``, so that no half-trained model passes for a
    trained one: a run that fails keeps its metrics and periodic checkpoints, and Ctrl-C
    saves ``checkpoints/interrupted-N`` (N the last update whose PPO step finished: the
    weights include it, whatever of the update's snapshot, gauntlet or checkpoint was cut
    short), or ``interrupted-in-N`` when it stopped update N's PPO step partway, and raises
    Interrupted.
    ``overwrite`` clears an earlier run in ``out_dir`` (see ``check_out_dir``).
    ``before_gauntlet`` is told how many matches the gauntlet of update 0 plays, once the run
    has started (its folder checked, its models loaded), before it plays them.
    """
    trainer = Trainer(config, overwrite=overwrite)
    started = time.monotonic()
    try:
        if config.eval.every and config.eval.bots:
            if before_gauntlet is not None:
                before_gauntlet(config.eval.matches * len(config.eval.bots))
            trainer.evaluate(0)
        for update in range(1, config.updates + 1):
            row = trainer.step(update)
            if progress is not None:
                progress(Progress(update, config.updates, time.monotonic() - started, row))
        final = trainer.save("final")
    except (KeyboardInterrupt, BaseExceptionGroup) as error:
        # trio hands Ctrl-C to whichever task was running, so it may come wrapped by its nurseries
        if isinstance(error, BaseExceptionGroup) and error.subgroup(KeyboardInterrupt) is None:
            raise
        raise Interrupted(trainer.trained, config.updates, _keep_interrupted(trainer)) from None
    finally:
        trainer.close()
    return TrainResult(trainer.run_dir, final, trainer.metrics)
