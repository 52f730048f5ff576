"""Trajectories out of the store: one flat record per accepted turn of a finished match.

The same rows feed two readers: ``arena export trajectories`` writes them as JSON lines
for other trainers (TRL, verl, anything that reads ``datasets.load_dataset("json")``),
and the trainer's store loader builds its training records from them, so a model that
played as a live bot is trained on exactly what was exported. Hence this module stays
free of torch and transformers.

Every row has every key of ``COLUMNS``, and each key keeps one JSON type across rows
(null where a value is absent): Arrow-based loaders infer one type per column and fail
on a mix. Values whose shape depends on the game (the config) or on the bot (the chat
prompt) travel as JSON text for the same reason. docs/TRAJECTORIES.md is the schema.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import os
import secrets
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import games
from arena.store import FINISHED, Store, deal_in_play, where

COLUMNS = (
    "match_id",
    "seed",
    "game",
    "config",
    "seat",
    "bot",
    "opponents",
    "step",
    "attempt",
    "prompt",
    "observation",
    "legal_actions",
    "action",
    "raw",
    "logprobs",
    "tokens_in",
    "tokens_out",
    "reward",
    "return",
    "outcome",
    "rank",
    "tournament",
    "round",
)


class ExportError(ValueError):
    """An export that cannot be done as asked (an unknown bot, a bad limit, a destination
    that is a folder); the message says which."""


def trajectory_rows(
    store: Store,
    *,
    game: str | None = None,
    bot: str | None = None,
    limit: int | None = None,
    since: float | None = None,
    exclude_opponents: Iterable[str] = (),
) -> Iterator[dict[str, Any]]:
    """The accepted turns of finished matches (void ones never), as rows of ``COLUMNS``; not
    yet those whose deal is still being played (``held_back``).

    Order is stable: match creation time (then id), step, seat. ``game`` keeps one game's
    matches; ``bot`` keeps only the turns that bot took; ``limit`` keeps the ``limit``
    most recent matching matches, whole, still written oldest first; ``since`` (a Unix
    time) keeps matches created at or after it; ``exclude_opponents`` drops every turn
    taken against one of those bots (held-out opponents stay out of training). The filters
    are checked here, before the first row, so a bad one fails before anything is written.
    """
    if game is not None and not store.has_matches_of(game):  # a game uninstalled since is still in the store
        game = games.get(game).spec.name  # an unknown name raises GameError with a suggestion
    excluded = frozenset(exclude_opponents)
    for named in ([] if bot is None else [bot]) + sorted(excluded):
        _check_bot(store, named)  # a held-out bot misspelled was silently not held out
    if limit is not None and limit < 1:
        raise ExportError(f"limit must be at least 1, got {limit}")
    return _rows(store, game, bot, limit, since, excluded)


def _check_bot(store: Store, bot: str) -> None:
    """Bots seated in-process are in the seats table only, so that is where to look."""
    if store.conn.execute("SELECT 1 FROM seats WHERE bot = ? LIMIT 1", (bot,)).fetchone():
        return
    known = [row[0] for row in store.conn.execute("SELECT DISTINCT bot FROM seats")]
    # a spec given as its name alone, the model bot 'openai' for 'openai:model=m', is a prefix
    close = difflib.get_close_matches(bot, known, n=1) or sorted(name for name in known if name.startswith(f"{bot}:"))
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ExportError(f"no bot named {bot!r} played a match in {store.path}{hint}")


def held_back(
    store: Store,
    *,
    game: str | None = None,
    bot: str | None = None,
    since: float | None = None,
    exclude_opponents: Iterable[str] = (),
) -> int:
    """How many finished matches the filters would export a line of that wait: their deal is
    still to be played by another table (a duplicate group not yet complete, a live match on
    the same seed), and their seed, turns and results would tell it. The server withholds
    them as long (``/api``, ``/watch``); exported, a live match's cards were in the file, and
    a trainer reading the store learnt its mirror match's deal before playing it (found by a
    QA helper)."""
    excluded = frozenset(exclude_opponents)
    clause, args = where(_selected(game, bot, since) | {deal_in_play("m"): ()})
    rows = store.conn.execute(f"SELECT players FROM matches m{clause}", args)
    return sum(1 for row in rows if _seats_kept(json.loads(row[0]), bot, excluded))


def _selected(game: str | None, bot: str | None, since: float | None) -> dict[str, Any]:
    return {
        "status = ?": FINISHED,
        "game = ?": game,
        "id IN (SELECT match_id FROM seats WHERE bot = ?)": bot,
        "created_at >= ?": since,
    }


def _rows(
    store: Store, game: str | None, bot: str | None, limit: int | None, since: float | None, excluded: frozenset[str]
) -> Iterator[dict[str, Any]]:
    clause, args = where(_selected(game, bot, since) | {f"NOT {deal_in_play('m')}": ()})
    columns = "id, seed, game, config, players, returns, outcomes, ranks, tournament, round, created_at"
    sql = f"SELECT {columns} FROM matches m{clause}"
    if limit is None:
        matches = store.conn.execute(sql + " ORDER BY created_at, id", args).fetchall()
    else:  # the newest that the filters keep: a held-out match took a place of the limit, and kept no line
        newest = store.conn.execute(sql + " ORDER BY created_at DESC, id DESC", args)
        kept_matches = (m for m in newest if _seats_kept(json.loads(m["players"]), bot, excluded))
        matches = list(itertools.islice(kept_matches, min(limit, sys.maxsize)))  # islice takes no larger limit
        matches.reverse()
    for match in matches:
        players = json.loads(match["players"])
        kept = _seats_kept(players, bot, excluded)
        returns, outcomes, ranks = (json.loads(match[key]) for key in ("returns", "outcomes", "ranks"))
        config = json.dumps(json.loads(match["config"]), sort_keys=True)
        turns = store.conn.execute(
            f"SELECT t.* FROM matches m JOIN turns t ON {store.turns_of()} WHERE m.id = ? AND t.accepted = 1"
            " ORDER BY t.step, t.seat, t.attempt",
            (match["id"],),
        ).fetchall()
        for turn, reward in zip(turns, _credited(turns, returns), strict=True):
            seat = turn["seat"]
            if seat not in kept:
                continue
            yield {
                "match_id": match["id"],
                "seed": match["seed"],
                "game": match["game"],
                "config": config,
                "seat": seat,
                "bot": players[seat],
                "opponents": [name for other, name in enumerate(players) if other != seat],
                "step": turn["step"],
                "attempt": turn["attempt"],
                "prompt": turn["prompt"],
                "observation": turn["observation"],
                "legal_actions": None if turn["legal_actions"] is None else json.loads(turn["legal_actions"]),
                "action": turn["action"],
                "raw": turn["raw"],
                "logprobs": _finite(turn["logprobs"]),
                "tokens_in": turn["tokens_in"],
                "tokens_out": turn["tokens_out"],
                "reward": reward,
                "return": float(returns[seat]),
                "outcome": outcomes[seat],
                "rank": ranks[seat],
                "tournament": match["tournament"],
                "round": match["round"],
            }


def _seats_kept(players: Sequence[str], bot: str | None, excluded: frozenset[str]) -> list[int]:
    """The seats whose turns are exported: ``bot``'s (every seat without one), unless another
    seat holds a held-out bot."""
    return [
        seat
        for seat, name in enumerate(players)
        if (bot is None or name == bot) and not excluded.intersection(other for k, other in enumerate(players) if k != seat)
    ]


def _finite(stored: str | None) -> list[float] | None:
    """A turn's log-probs, or None when some are not finite numbers (a bot may send -inf for
    a token its model gave no mass): JSON has no such number, and one such turn stopped
    every export."""
    if stored is None:
        return None
    values = [float(x) for x in json.loads(stored)]
    return values if all(math.isfinite(x) for x in values) else None


def rewards_summing_to(rewards: Sequence[float], total: float) -> list[float]:
    """A trajectory's turn rewards, with whatever of ``total`` (the seat's scored return)
    they do not account for, a forfeit's penalty or gain, added to the last turn; float
    noise is left alone (0.1 + 0.2 is not 0.3, and a reward nudged by 1e-17 reads as changed)."""
    out = [float(reward) for reward in rewards]
    if not math.isclose(sum(out), total, rel_tol=1e-12, abs_tol=1e-12):
        out[-1] += total - sum(out)
    return out


def _credited(turns: Sequence[Mapping[str, Any]], returns: Sequence[float]) -> list[float]:
    """Each turn's reward, a seat's adding up to its return: what a forfeit moved, which no
    step paid, goes to the seat's last turn, as the trainer credits it. Left where the steps
    put it, the winner of a forfeit had rewards of 0 and a return of 1, and summed rewards
    lost every forfeit win and loss."""
    by_seat: dict[int, list[int]] = defaultdict(list)
    for index, turn in enumerate(turns):
        by_seat[turn["seat"]].append(index)
    credited = [float(turn["reward"]) for turn in turns]
    for seat, indexes in by_seat.items():
        for index, reward in zip(indexes, rewards_summing_to([credited[i] for i in indexes], returns[seat]), strict=True):
            credited[index] = reward
    return credited


def write_jsonl(rows: Iterable[dict[str, Any]], out: str | Path) -> tuple[int, int]:
    """Write rows as JSON lines; returns (rows, distinct matches).

    The file appears whole or not at all (written beside it, then renamed), so a failed or
    interrupted export never leaves a truncated dataset that a trainer would read as complete.
    The temporary file is created with mode 0666 for the umask to trim, not mkstemp's 0600,
    because the rename makes it the user's file. A destination that cannot be a file is
    refused before the first row is read. A symbolic link is written through (its target is
    replaced), as writing to it in place would be: the rename would replace the link itself.
    """
    path = Path(out).resolve()
    if path.is_dir():
        raise ExportError(f"cannot write {out}: it is a folder; name a file in it, such as {path / 'trajectories.jsonl'}")
    if path.exists() and not path.is_file():  # a pipe or a device: the rename would put a plain file in its place
        raise ExportError(f"cannot write {out}: it is not a regular file; the export replaces a file whole, name one")
    if not path.parent.is_dir():
        raise ExportError(f"cannot write {out}: no folder {path.absolute().parent}")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:  # a folder this user may not write: said of --out, not of the temporary file
        raise ExportError(f"cannot write {out}: {error.strerror} (in {path.parent})") from None
    try:
        with open(descriptor, "w", encoding="utf-8") as handle:
            counts = write_lines(rows, handle)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return counts


_LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})
"""Characters JSON allows raw in a string that ``str.splitlines`` and JavaScript end a line at:
written escaped, so that every reader sees one line per turn."""


def write_lines(rows: Iterable[dict[str, Any]], handle: TextIO) -> tuple[int, int]:
    """Write rows to ``handle`` as JSON lines; returns (rows, distinct matches)."""
    count, matches = 0, set()
    for row in rows:
        handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False).translate(_LINE_BREAKS) + "\n")
        count += 1
        matches.add(row["match_id"])
    return count, len(matches)
