"""Learning that can be seen: the tiny random model trained on CPU, before and after.

    python -m bench.learning [--scale 1.0] [--only a,b,c,d] [--threads 1] [--out runs/bench-learning]

Four measurements, each from a freshly built tiny model (``arena train init-model``):

(a) iterated prisoner's dilemma against ``tit-for-tat``: mean return per round before and
    after training (target after: at least 2.5; mutual cooperation pays 3);
(b) Kuhn poker against ``random``, the learner's seat alternating: mean return before and
    after (target after: at least +0.25; a best response to random earns about +0.46);
(c) IPD self-play from one seed, with and without the Advantage Alignment term: the
    cooperation rate of each trained policy playing itself;
(d) rollout throughput (turns per second) at 16 concurrent matches, batching on and off.

Returns carry 95% intervals over the evaluation matches. ``--scale`` multiplies every
run's number of updates (0.2 for a quick look); ``--only`` picks measurements; ``--threads``
sets torch's intra-op threads (1 is fastest for this tiny model on a busy 2-core machine).
Prints one JSON object on stdout; progress goes to stderr. Minutes on a laptop CPU; not a test.
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

import torch
import trio

from bench import positive_float, positive_int, quiet_interrupt
from trainer.advantages import Alignment
from trainer.config import ActingSetting, EstimatorSetting, EvalSetting, GameSetting, OpponentSetting, TrainConfig
from trainer.plot import read_metrics
from trainer.policy import Policy
from trainer.rollout import MatchPlan, SeatPlan, play_rollouts
from trainer.run import interval95, train
from trainer.tiny_model import init_model
from trainer.update import PPOSettings

IPD = "iterated-prisoners-dilemma"
ROUNDS = 10
MEASUREMENTS = ("a", "b", "c", "d")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def gauntlet(run_dir: Path, bot: str, per: float = 1.0) -> dict[str, Any]:
    """The first and last gauntlet rows of a run, as before/after with intervals (divided by ``per``)."""
    rows = read_metrics(run_dir)
    evals = [r["bots"][bot] for r in rows if r["kind"] == "eval"]

    def point(row: dict[str, Any]) -> dict[str, float]:
        return {"mean": row["return"] / per, "ci95": row["return_ci95"] / per, "matches": row["matches"]}

    return {"before": point(evals[0]), "after": point(evals[-1])}


def run(config: TrainConfig) -> Path:
    started = time.monotonic()
    result = train(
        config,
        overwrite=True,  # a benchmark rerun replaces its runs
        progress=lambda p: log(f"  {config.name}: update {p.update}/{p.updates}, return {p.metrics['return_mean']:.3f}"),
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
    parser.add_argument("--scale", type=positive_float, default=1.0, help="multiply every run's updates (default 1)")
    parser.add_argument("--out", default="runs/bench-learning", help="where models and runs go (default runs/bench-learning)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="a,b,c,d", help="the measurements to run (default a,b,c,d)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch intra-op threads (default 1)")
    args = parser.parse_args(argv)
    only = {part.strip() for part in args.only.split(",") if part.strip()}
    if not only or not only <= set(MEASUREMENTS):
        parser.error(f"argument --only: pick among {','.join(MEASUREMENTS)}, got {args.only!r}")
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    started = time.monotonic()

    def updates(n: int) -> int:
        return max(1, round(n * args.scale))

    log("building the tiny model")
    model = init_model(out / "tiny", seed=args.seed)

    def config(name: str, game: GameSetting, n: int, matches: int, **changes: Any) -> TrainConfig:
        return TrainConfig(
            name=name,
            model=str(model),
            out_dir=str(out / name),
            games=[game],
            seed=args.seed,
            updates=updates(n),
            matches_per_update=matches,
            concurrency=16,
            estimator=EstimatorSetting("mars", {}),
            acting=ActingSetting(temperature=1.0),
            **{"ppo": PPOSettings(lr=3e-3, epochs=2, minibatch=64), **changes},
        )

    ipd_game = GameSetting(IPD, {"rounds": ROUNDS})
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "torch_threads": args.threads}
    }
    if "a" in only:
        log("(a) iterated prisoner's dilemma against tit-for-tat")
        ipd = config(
            "ipd-vs-tit-for-tat",
            ipd_game,
            10,
            32,
            opponents=OpponentSetting(self_play=False, bots=["tit-for-tat"]),
            eval=EvalSetting(every=updates(10), matches=64, bots=["tit-for-tat"]),
        )
        result = gauntlet(run(ipd), "tit-for-tat", per=ROUNDS)
        report["a_ipd_vs_tit_for_tat_per_round"] = {**result, "target_after": 2.5, "met": result["after"]["mean"] >= 2.5}
    if "b" in only:
        log("(b) Kuhn poker against random, both seats")
        kuhn = config(
            "kuhn-vs-random",
            GameSetting("kuhn-poker"),
            40,
            64,
            opponents=OpponentSetting(self_play=False, bots=["random"]),
            eval=EvalSetting(every=updates(40), matches=1000, bots=["random"]),
            # A policy near-deterministic on a few hands meets huge ratios on the rare hand
            # where it errs: a gentler step and the dual clip keep the end of the run stable.
            ppo=PPOSettings(lr=1e-3, epochs=2, minibatch=64, dual_clip=3.0),
        )
        result = gauntlet(run(kuhn), "random")
        report["b_kuhn_vs_random"] = {**result, "target_after": 0.25, "met": result["after"]["mean"] >= 0.25}
    if "c" in only:
        log("(c) IPD self-play from one seed, with and without Advantage Alignment")
        self_play: dict[str, Any] = {"initial": cooperation_rate(model, args.seed)}
        # beta 4, not the default 2: with the ratio over the distribution actions are drawn from,
        # beta 2 at this step size let self-play slide to defection too (cooperation 0.09)
        for label, alignment in (("plain", None), ("advantage_alignment", Alignment(beta=4.0, gamma=0.96))):
            run_dir = run(config(f"ipd-self-play-{label}", ipd_game, 10, 16, alignment=alignment))
            self_play[label] = cooperation_rate(run_dir / "checkpoints" / "final", args.seed)
        report["c_ipd_self_play"] = self_play
    if "d" in only:
        log("(d) rollout throughput, batching on and off")
        batching = {"on": throughput(model, batching=True), "off": throughput(model, batching=False)}
        batching["speedup"] = batching["on"]["turns_per_s"] / batching["off"]["turns_per_s"]
        report["d_rollout_throughput_16_matches"] = batching
    report["seconds"] = time.monotonic() - started
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    with quiet_interrupt("bench.learning"):
        raise SystemExit(main())
