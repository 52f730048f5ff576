"""``arena train plot RUN_DIR``: training curves from a run's ``metrics.jsonl``, as PNG files.

One figure per question a reader of a run asks: is the return going up (``return.png``,
with the gauntlet's 95% intervals), against whom (``win_rate.png``, per opponent), is the
policy moving too far or collapsing (``kl.png``, ``entropy.png``), is the optimisation
healthy (``grad_norm.png``). Reading the file never needs torch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} holds no {METRICS_FILE}: is it the out_dir of a training run?")
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not a JSON line ({error.msg})") from None
    return rows


def _figure(title: str, ylabel: str) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.set_title(title)
    ax.set_xlabel("update")
    # a short run's axis read 0.5, 1.5: updates are whole; and one update alone, 0.95 to 1.05 (without
    # min_n_ticks=1 the locator gives up on whole numbers when fewer than two fit the view)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def _save(fig: Any, ax: Any, path: Path, empty: str) -> Path:
    """Write the figure; one with nothing drawn says why (``empty``) instead of showing bare axes."""
    import matplotlib.pyplot as plt

    if not any(len(line.get_xdata()) for line in ax.lines):  # a series with no points still adds a line
        ax.text(0.5, 0.5, empty, transform=ax.transAxes, ha="center", va="center", wrap=True)
        ax.set_xticks([])
        ax.set_yticks([])
    elif ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _series(rows: Sequence[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    points = [(r["update"], r[key]) for r in rows if r.get(key) is not None]
    return [u for u, _ in points], [v for _, v in points]


def plot_run(run_dir: str | Path) -> list[Path]:
    """Write the curves of ``run_dir`` next to its metrics; returns the files written."""
    out = Path(run_dir)
    rows = read_metrics(out)
    updates = [r for r in rows if r.get("kind") == "update"]
    evals = [r for r in rows if r.get("kind") == "eval"]
    if not updates:
        raise ValueError(f"{out / METRICS_FILE} has no update yet: nothing to plot")
    written = []

    fig, ax = _figure("Learner return", "mean return per match")
    ax.plot(*_series(updates, "return_mean"), marker=".", label="training matches")  # a dot: one update is a point
    for bot in sorted({b for r in evals for b in r["bots"]}):
        points = [(r["update"], r["bots"][bot]) for r in evals if bot in r["bots"] and r["bots"][bot]["return"] is not None]
        ax.errorbar(
            [u for u, _ in points],
            [p["return"] for _, p in points],
            yerr=[p["return_ci95"] for _, p in points],
            marker="o",
            capsize=3,
            label=f"gauntlet vs {bot} (95% CI)",
        )
    written.append(_save(fig, ax, out / "return.png", "no update has a return yet"))

    fig, ax = _figure("Win rate per opponent (draws count half)", "win rate")
    for name in sorted({n for r in updates for n in r.get("opponents", {})}):
        points = [(r["update"], r["opponents"][name]["win_rate"]) for r in updates if name in r.get("opponents", {})]
        points = [(u, w) for u, w in points if w is not None]  # the learner against itself has none
        if points:
            ax.plot([u for u, _ in points], [w for _, w in points], marker=".", label=name)
    ax.set_ylim(-0.05, 1.05)
    written.append(_save(fig, ax, out / "win_rate.png", "no win rate: the learner met only itself, which it cannot beat"))

    for key, title, filename, empty in (
        ("approx_kl", "KL(acting || updated), k3 per sampled action or generated token", "kl.png", "no update measured it"),
        (
            "entropy",
            "Entropy over legal actions (nats)",
            "entropy.png",
            "no update measured it: every turn was generated or stored, with no legal set scored",
        ),
        ("grad_norm", "Gradient norm before clipping", "grad_norm.png", "no update measured it"),
    ):
        fig, ax = _figure(title, key)
        ax.plot(*_series(updates, key), marker=".", label=key)
        reference = _series(updates, "kl_ref") if key == "approx_kl" else ([], [])
        if reference[0]:  # measured only against a reference model
            ax.plot(*reference, marker=".", label="k3 KL to the reference")
        written.append(_save(fig, ax, out / filename, empty))
    return written
