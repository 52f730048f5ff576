"""Learning that can be seen: the tiny random model trained on CPU, before and after.

    python -m bench.learning [--scale 1.0] [--out runs/bench-learning]

Four measurements, each from a freshly built tiny model (``arena train init-model``):

(a) iterated prisoner's dilemma against ``tit-for-tat``: mean return per round before and
    after training (target after: at least 2.5; mutual cooperation pays 3);
(b) Kuhn poker against ``random``, the learner's seat alternating: mean return before and
    after (target after: at least +0.25; a best response to random earns about +0.46);
(c) IPD self-play from one seed, with and without the Advantage Alignment term: the
    cooperation rate of each trained policy playing itself;
(d) rollout throughput (turns per second) at 16 concurrent matches, batching on and off.

Returns carry 95% intervals over the evaluation matches. ``--scale`` multiplies every
run's number of updates (0.2 for a quick look). Prints one JSON object on stdout;
progress goes to stderr. Minutes on a laptop CPU; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import trio

from trainer.advantages import Alignment
from trainer.config import ActingSetting, EstimatorSetting, EvalSetting, GameSetting, OpponentSetting, TrainConfig
from trainer.policy import Policy
from trainer.rollout import MatchPlan, SeatPlan, play_rollouts
from trainer.run import interval95, train
from trainer.tiny_model import init_model
from trainer.update import PPOSettings

IPD = "iterated-prisoners-dilemma"
ROUNDS = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def gauntlet(run_dir: Path, bot: str, per: float = 1.0) -> dict[str, Any]:
    """The first and last gauntlet rows of a run, as before/after with intervals (divided by ``per``)."""
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    evals = [r["bots"][bot] for r in rows if r["kind"] == "eval"]

    def point(row: dict[str, Any]) -> dict[str, float]:
        return {"mean": row["return"] / per, "ci95": row["return_ci95"] / per, "matches": row["matches"]}

    return {"before": point(evals[0]), "after": point(evals[-1])}


def run(config: TrainConfig) -> Path:
    started = time.monotonic()
    result = train(
        config, progress=lambda p: log(f"  {config.name}: update {p.update}/{p.updates}, return {p.metrics['return_mean']:.3f}")
    )
    log(f"  {config.name}: {time.monotonic() - started:.0f}s")
    return result.run_dir


def cooperation_rate(model: Path, seed: int, matches: int = 64) -> dict[str, float]:
    """How often the policy cooperates when it plays itself (both seats, every round)."""
    policy = Policy.load(model)
    plans = [MatchPlan(i, IPD, 10_000 + i, (SeatPlan("learner", "self"), SeatPlan("learner", "self"))) for i in range(matches)]
    rollouts = trio.run(lambda: play_rollouts(plans, policy, seed=seed))
    moves = [action for r in rollouts for step in r.result.actions for action in step.values()]
    rate = sum(a == "cooperate" for a in moves) / len(moves)
    returns = [sum(r.result.returns) / 2 / ROUNDS for r in rollouts]
    mean, half = interval95(returns)
    return {"cooperation_rate": rate, "return_per_round": mean, "return_ci95": half, "matches": matches}


def throughput(model: Path, *, batching: bool, matches: int = 16) -> dict[str, float]:
    """Turns per second of 16 concurrent IPD matches against tit-for-tat."""
    policy = Policy.load(model)
    plans = [MatchPlan(i, IPD, 20_000 + i, (SeatPlan("learner", "me"), SeatPlan("bot", "tit-for-tat"))) for i in range(matches)]
    trio.run(lambda: play_rollouts(plans[:2], policy, seed=0))  # warm-up
    policy.forward_passes = 0
    started = time.perf_counter()
    rollouts = trio.run(lambda: play_rollouts(plans, policy, seed=1, concurrency=matches, max_batch=64 if batching else 1))
    seconds = time.perf_counter() - started
    turns = sum(len(r.samples) for r in rollouts)
    return {"turns_per_s": turns / seconds, "turns": turns, "forward_passes": policy.forward_passes, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.learning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every run's updates (default 1)")
    parser.add_argument("--out", default="runs/bench-learning", help="where models and runs go (default runs/bench-learning)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = Path(args.out)
    started = time.monotonic()

    def updates(n: int) -> int:
        return max(1, round(n * args.scale))

    log("building the tiny model")
    model = init_model(out / "tiny", seed=args.seed)
    common: dict[str, Any] = {"model": str(model), "seed": args.seed, "concurrency": 16, "acting": ActingSetting(temperature=1.0)}

    log("(a) iterated prisoner's dilemma against tit-for-tat")
    ipd_dir = run(
        TrainConfig(
            name="ipd-vs-tit-for-tat",
            out_dir=str(out / "ipd-vs-tit-for-tat"),
            games=[GameSetting(IPD, {"rounds": ROUNDS})],
            updates=updates(10),
            matches_per_update=32,
            estimator=EstimatorSetting("mars", {}),
            ppo=PPOSettings(lr=3e-3, epochs=2, minibatch=64),
            opponents=OpponentSetting(self_play=False, bots=["tit-for-tat"]),
            eval=EvalSetting(every=updates(10), matches=64, bots=["tit-for-tat"]),
            **common,
        )
    )
    log("(b) Kuhn poker against random")
    kuhn_dir = run(
        TrainConfig(
            name="kuhn-vs-random",
            out_dir=str(out / "kuhn-vs-random"),
            games=[GameSetting("kuhn-poker")],
            updates=updates(30),
            matches_per_update=64,
            estimator=EstimatorSetting("mars", {}),
            ppo=PPOSettings(lr=3e-3, epochs=2, minibatch=64),
            opponents=OpponentSetting(self_play=False, bots=["random"]),
            eval=EvalSetting(every=updates(30), matches=400, bots=["random"]),
            **common,
        )
    )
    log("(c) IPD self-play, with and without Advantage Alignment")
    self_play: dict[str, Any] = {}
    for label, alignment in (("plain", None), ("advantage_alignment", Alignment(beta=2.0, gamma=0.96))):
        run_dir = run(
            TrainConfig(
                name=f"ipd-self-play-{label}",
                out_dir=str(out / f"ipd-self-play-{label}"),
                games=[GameSetting(IPD, {"rounds": ROUNDS})],
                updates=updates(10),
                matches_per_update=32,
                estimator=EstimatorSetting("mars", {}),
                alignment=alignment,
                ppo=PPOSettings(lr=3e-3, epochs=2, minibatch=64),
                opponents=OpponentSetting(self_play=True),
                **common,
            )
        )
        self_play[label] = cooperation_rate(run_dir / "checkpoints" / "final", args.seed)
    self_play["initial"] = cooperation_rate(model, args.seed)
    log("(d) rollout throughput, batching on and off")
    batching = {"on": throughput(model, batching=True), "off": throughput(model, batching=False)}
    batching["speedup"] = batching["on"]["turns_per_s"] / batching["off"]["turns_per_s"]

    ipd = gauntlet(ipd_dir, "tit-for-tat", per=ROUNDS)
    kuhn = gauntlet(kuhn_dir, "random")
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "ipd_vs_tit_for_tat_per_round": {**ipd, "target_after": 2.5, "met": ipd["after"]["mean"] >= 2.5},
        "kuhn_vs_random": {**kuhn, "target_after": 0.25, "met": kuhn["after"]["mean"] >= 0.25},
        "ipd_self_play": self_play,
        "rollout_throughput_16_matches": batching,
        "seconds": time.monotonic() - started,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
