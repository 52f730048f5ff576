"""The ratings report: a markdown page and PNG plots, written from the store.

For each game variant: the pairwise win-rate heatmap ordered by Nash rating, the Nash
equilibrium mixture, and TrueSkill over time per bot; across games, the agent-by-game
score matrix. matplotlib (the ``report`` extra) is imported here only, so nothing else
in the arena pays for it.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import numpy as np

from arena.ratings.leaderboard import (
    NOTHING_RATED,
    TABLE_HEADER,
    finished_matches,
    overall,
    pairwise,
    table_cells,
    variant_leaderboard,
)
from arena.ratings.nash import win_matrix
from arena.store import Store


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _markdown_row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


SLUG_CHARS = 60
"""The most characters of a variant's name its plots' file names keep, before a hash of it all."""


def _slug(variant: str) -> str:
    """The start of the file names of a variant's plots: a game's name as it is; a variant's
    words, cut short, and a hash of its whole name. Its words alone made two variants one file
    (``sucker=-0.5`` and ``sucker=0.5``: each section showed the same plots) and a long config
    a name past the file system's limit, which failed the whole report (found by a QA helper)."""
    words = re.sub(r"[^a-z0-9]+", "-", variant.lower()).strip("-")
    if words == variant:
        return words
    return f"{words[:SLUG_CHARS].rstrip('-')}-{hashlib.sha256(variant.encode()).hexdigest()[:10]}"


PLOT_LINK = re.compile(r"!\[[^\]]*\]\(((?:[a-z0-9-]+-(?:winrates|mixture|trueskill)|scores)\.png)\)")
"""A plot a report's page shows, by the names this module gives its PNGs."""
TITLE = "# Arena ratings report"


PLOTTED_BOTS = 30
"""The bots a variant's plots show, the best by Nash rating; its table lists every bot. Two
hundred bots made a heatmap of 182 megapixels (40,000 labels, 6 GB and minutes to draw) that
no viewer opens, and a legend of 200 lines."""
TITLE_CHARS_PER_INCH = 8
"""About how many characters of a title's font fit in an inch of figure."""


def _title(ax: Any, *lines: str) -> None:
    """A title wrapped to its figure's width: a variant's name (its config written out) ran past
    the edge, cut off in the saved image."""
    width = max(20, int(ax.figure.get_figwidth() * TITLE_CHARS_PER_INCH))
    ax.set_title("\n".join(textwrap.fill(line, width) for line in lines))


def win_rate_heatmap(store: Store, variant: str, order: list[str], path: Path) -> None:
    """Row bot's score against column bot (draws count half), bots ordered by Nash rating."""
    plt = _pyplot()
    shown = set(order)
    pairs = (pair for m in finished_matches(store, variant=variant) for pair in pairwise(m))
    counts = win_matrix((pair for pair in pairs if pair[0] in shown and pair[1] in shown), agents=order)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(counts.games > 0, counts.wins / counts.games, np.nan)
    size = max(4.0, 0.6 * len(order) + 2)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    image = ax.imshow(rate, vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(len(order)), order, rotation=45, ha="right")
    ax.set_yticks(range(len(order)), order)
    for i in range(len(order)):
        for j in range(len(order)):
            if counts.games[i, j]:
                ax.text(j, i, f"{rate[i, j]:.2f}\n({int(counts.games[i, j])})", ha="center", va="center", fontsize=7)
    ax.set_xlabel("opponent")
    ax.set_ylabel("bot (ordered by Nash rating, best first)")
    _title(ax, f"{variant}: score against each opponent", "(games played in brackets)")
    fig.colorbar(image, ax=ax, label="score (win 1, draw 0.5)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mixture_chart(rows: list[dict[str, Any]], variant: str, path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(rows) + 2), 4))
    ax.bar([r["bot"] for r in rows], [r["mass"] for r in rows], color="tab:green")
    ax.set_ylim(0, 1)
    ax.set_ylabel("equilibrium mass")
    ax.set_xlabel("bot")
    _title(ax, f"{variant}: maximum-entropy Nash mixture")
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def trueskill_over_time(store: Store, variant: str, bots: list[str], path: Path) -> None:
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    shown: dict[str, list[Any]] = {bot: [] for bot in sorted(bots)}
    for row in store.conn.execute("SELECT bot, mu, sigma FROM rating_history WHERE variant = ? ORDER BY at, id", (variant,)):
        if row["bot"] in shown:  # one pass: a scan per bot took seconds over 200 bots
            shown[row["bot"]].append(row)
    fig, ax = plt.subplots(figsize=(7, 4))
    for bot, mine in shown.items():
        if mine:
            mu = np.array([row["mu"] for row in mine])
            sigma = np.array([row["sigma"] for row in mine])
            steps = np.arange(1, len(mine) + 1)
            ax.plot(steps, mu, label=bot)
            ax.fill_between(steps, mu - sigma, mu + sigma, alpha=0.15)
    ax.set_xlabel("rated matches played")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counted in whole matches
    ax.set_ylabel("TrueSkill mu (band: +- sigma)")
    _title(ax, f"{variant}: TrueSkill over time")
    if any(shown.values()):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


LABEL_CHARS = 40
"""The most characters of a name an axis shows: a variant's config written out (hundreds of
characters) left the plot no room, and matplotlib warned that it could not lay it out."""


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def score_matrix(agents: list[str], variants: list[str], scores: np.ndarray, path: Path) -> None:
    plt = _pyplot()
    low, high = scores.min(axis=0), scores.max(axis=0)
    spread = np.where(high > low, high - low, 1.0)
    normalised = (scores - low) / spread
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * len(variants) + 3), max(4.0, 0.5 * len(agents) + 2)))
    image = ax.imshow(normalised, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(variants)), map(_label, variants), rotation=45, ha="right")
    ax.set_yticks(range(len(agents)), map(_label, agents))
    for i in range(len(agents)):
        for j in range(len(variants)):
            ax.text(
                j,
                i,
                f"{scores[i, j]:.2g}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if normalised[i, j] < 0.5 else "black",
            )
    ax.set_xlabel("game")
    ax.set_ylabel("bot")
    _title(ax, "Mean return per game (colour: normalised per game)")
    fig.colorbar(image, ax=ax, label="normalised score")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(store: Store, out: Path, *, resamples: int = 200, held_out: AbstractSet[str] = frozenset()) -> Path:
    """Write ``out/README.md`` and its plots; returns the page's path. ``held_out`` variants
    stay out of the table across games and are marked as held out where they are shown.
    The plots an earlier report in ``out`` showed and this one does not are removed: left
    there, they were a game's plots beside a page that no longer has the game. Only a page
    of this report's, and only plots by its names: ``out`` may be a folder of the user's own."""
    out.mkdir(parents=True, exist_ok=True)
    page = out / "README.md"
    old = page.read_text(encoding="utf-8", errors="replace") if page.is_file() else ""
    earlier = set(PLOT_LINK.findall(old)) if old.startswith(TITLE) else set()
    variants = [row["variant"] for row in store.conn.execute("SELECT DISTINCT variant FROM matches WHERE status = 'finished'")]
    lines = [TITLE, ""]
    if not variants:  # a page with a title alone reads as a report that failed
        lines += [f"No finished matches in {store.path} yet: nothing to rate.", ""]
    whole = overall(store, leave_out=held_out)
    if whole is not None:
        score_matrix(whole.agents, whole.variants, whole.scores, out / "scores.png")
        lines += ["## Across games", "", "| bot | skill | mass | games |", "|---|---|---|---|"]
        lines += [f"| {r['bot']} | {r['skill']:.3f} | {r['mass']:.3f} | {r['games']} |" for r in whole.rows()]
        lines += ["", "| game | difficulty | mass |", "|---|---|---|"]
        for g in whole.game_rows():
            difficulty = "uninformative" if g["difficulty"] is None else f"{g['difficulty']:.3f}"
            lines.append(f"| {g['variant']} | {difficulty} | {g['mass']:.3f} |")
        lines += ["", "![Mean return per game](scores.png)", ""]
    for variant in sorted(variants):
        rows = variant_leaderboard(store, variant, resamples=resamples)
        title = f"{variant} (held-out game)" if variant in held_out else variant
        if not rows:  # its plots would be empty frames, and matplotlib warns about them
            lines += [f"## {title}", "", f"{NOTHING_RATED.capitalize()}.", ""]
            continue
        slug = _slug(variant)
        order = [r["bot"] for r in sorted(rows, key=lambda r: (-r["nash"], r["bot"]))][:PLOTTED_BOTS]
        win_rate_heatmap(store, variant, order, out / f"{slug}-winrates.png")
        mixture_chart([r for r in rows if r["bot"] in order], variant, out / f"{slug}-mixture.png")
        trueskill_over_time(store, variant, order, out / f"{slug}-trueskill.png")
        # every column of `arena ratings`: in ranked games, where W/D/L is "-", mean return tells the bots apart
        lines += [f"## {title}", "", _markdown_row(TABLE_HEADER), _markdown_row(["---"] * len(TABLE_HEADER))]
        lines += [_markdown_row(table_cells(r)) for r in rows]
        cut = len(rows) > PLOTTED_BOTS
        plotted = [f"The plots show the {PLOTTED_BOTS} bots of best Nash rating, of {len(rows)}."] if cut else []
        lines += [
            "",
            *plotted,
            f"![Win rates]({slug}-winrates.png)",
            f"![Nash mixture]({slug}-mixture.png)",
            f"![TrueSkill over time]({slug}-trueskill.png)",
            "",
        ]
    text = "\n".join(lines)
    page.write_text(text, encoding="utf-8")
    for name in earlier - set(PLOT_LINK.findall(text)):
        (out / name).unlink(missing_ok=True)
    return page
