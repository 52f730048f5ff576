"""The nightly training tournament: train, enter, play, rate, report, and promote only on evidence.

``arena nightly FILE`` runs one night (``run_night``), in order:

1. train each policy from its current checkpoint for its budget (the trainer, on fresh
   self-play and opponents from its training config, plus the current bot's most recent
   stored turns when there are any), into ``<nightly dir>/<date>/<policy>/``;
2. register the new checkpoint as a bot, ``<policy>.<date>`` (a valid server bot name,
   so the same checkpoint can later play live under it);
3. play the tournament in this process into the store; ``{new:NAME}`` and
   ``{current:NAME}`` participants become ``llm:model=DIR`` specs that play under the
   bots' names, so the leaderboards and the head-to-head read ``ipd.2025-01-31``, not a path;
4. TrueSkill moved as each match ended; Nash averaging is recomputed, the ratings report
   written, and each bot's rating compared with the previous night's record;
5. the gate (``tournaments.gate``) reads new against current from the store; only a
   promotion rewrites the policy's "current" pointer. The decision and its statistic are
   recorded either way.

Every step updates the night record (``<date>/night.json``) as it ends, so a night cut
short and started again on the same date resumes: trained checkpoints are kept, the
tournament plays only its missing matches (its name carries the date, so its keys do too),
and a decision taken is never taken twice. A finished night is not run again; a night with
a void match is not finished, so that its rerun plays that match again.

``next_run`` and ``serve_nightly`` are the ``--at HH:MM`` loop; the CLI runs each night in a
child process, so a failed night, and the models a night loads, end with it.

The trainer and torch are imported inside functions only (the layering table).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fcntl
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import games
from arena.protocol import dumps
from arena.ratings.leaderboard import fixed
from arena.store import FINISHED, Store, try_flock, valid_bot_name
from arena.toml_file import read_toml
from bots.registry import BotSpec, BotSpecError, option_values, parse_spec
from bots.registry import get as get_bot
from games.api import GameError
from tournaments import gate as gates
from tournaments.config import TournamentConfig, TournamentConfigError
from tournaments.config import parse as parse_tournament

TOP_KEYS = ("name", "db", "dir", "resamples", "policies", "tournament", "gate")
POLICY_KEYS = ("name", "current", "train", "updates", "store_matches", "bot_options")
GATE_PARAMS = {"sprt": ("p0", "p1", "alpha", "beta"), "bootstrap": ("confidence", "resamples", "seed")}
PIPELINE_KEYS = ("model", "out_dir", "updates", "store")  # training keys the pipeline sets
PARTICIPANT_KEYS = ("participants", "challenger", "held_out_opponents")
PLACEHOLDER = re.compile(r"\{(new|current):([^{}]*)\}")
RECORD = "night.json"
LOCK = ".lock"  # held by the run under way: two runs would train into, and promote from, one folder
OWNER = "owner.json"  # the nightly (name and store) whose nights the folder keeps
PAGE = "NIGHT.md"


class NightlyError(ValueError):
    """A night that cannot run; the message says why, and where."""


class NightlyConfigError(NightlyError):
    """A nightly file that cannot be run: the message names the file and the key."""


@dataclass(frozen=True)
class Policy:
    """One policy trained every night. ``current`` is a checkpoint folder (the starting
    point, until a promotion writes the pointer) or a pointer file (JSON)."""

    name: str
    current: str
    train: Any  # trainer.config.TrainConfig; its model is replaced by the current checkpoint
    updates: int
    store_matches: int = 64
    bot_options: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Gate:
    method: str
    game: str | None  # the head-to-head's game; None: every game both play
    params: Mapping[str, float | int]


@dataclass(frozen=True)
class NightlyConfig:
    name: str
    path: str
    db: str
    dir: str | None  # None: ``nightly/`` next to the store
    resamples: int
    policies: tuple[Policy, ...]
    tournament: Mapping[str, Any]  # the [tournament] table, placeholders unresolved
    gate: Gate


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint and the bot name it plays under."""

    bot: str
    path: Path

    def to_dict(self) -> dict[str, str]:
        return {"bot": self.bot, "checkpoint": str(self.path)}


# ---- the file ------------------------------------------------------------------------------


def load(path: str | Path) -> NightlyConfig:
    """Read and check ``path``; NightlyConfigError names what is wrong and where."""
    return parse(read_toml(path, NightlyConfigError), str(path))


def _typed(where: str, table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], name: str, default: Any) -> Any:
    if key not in table:
        if default is _REQUIRED:
            raise NightlyConfigError(f"{where}: {name}: missing")
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        words = {"str": "a string", "int": "an integer", "dict": "a table", "list": "a list"}
        expected = "a number" if float in kinds else " or ".join(words[k.__name__] for k in kinds)
        raise NightlyConfigError(f"{where}: {name}: must be {expected}, got {type(value).__name__} {value!r}")
    return value


_REQUIRED = object()


def parse(data: Mapping[str, Any], where: str = "<nightly>") -> NightlyConfig:
    """Check a parsed TOML document; ``where`` (the file) starts every error message."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise NightlyConfigError(f"{where}: {unknown[0]}: unknown key; the keys are {', '.join(TOP_KEYS)}")
    name = _typed(where, data, "name", str, "name", _REQUIRED)
    if not name or "/" in name:
        raise NightlyConfigError(f"{where}: name: must be a non-empty name without '/', got {name!r}")
    db = _typed(where, data, "db", str, "db", "arena.db")
    folder = _typed(where, data, "dir", str, "dir", None)
    resamples = _typed(where, data, "resamples", int, "resamples", 200)
    if resamples < 2:  # a percentile bootstrap needs two draws; one failed the night at its report
        raise NightlyConfigError(f"{where}: resamples: must be at least 2, got {resamples}")
    tables = _typed(where, data, "policies", list, "policies", _REQUIRED)
    if not tables:
        raise NightlyConfigError(f"{where}: policies: lists no policy")
    policies = tuple(_policy(where, table, f"policies[{i}]") for i, table in enumerate(tables))
    names = [p.name for p in policies]
    for policy_name in names:
        if names.count(policy_name) > 1:
            raise NightlyConfigError(f"{where}: policies: {policy_name!r} is listed twice")
    tournament = _typed(where, data, "tournament", dict, "tournament", _REQUIRED)
    template = _check_tournament(where, name, tournament, policies)
    gate = _gate(where, _typed(where, data, "gate", dict, "gate", {}), template, policies)
    return NightlyConfig(name, where, db, folder, resamples, policies, tournament, gate)


def _policy(where: str, table: Any, at: str) -> Policy:
    from trainer.config import MAX_UPDATES, TrainConfigError
    from trainer.config import parse as parse_training
    from trainer.llm_bot import check_device, check_settings

    if not isinstance(table, dict):
        raise NightlyConfigError(f"{where}: {at}: must be a table, got {type(table).__name__}")
    for key in table:
        if key not in POLICY_KEYS:
            raise NightlyConfigError(f"{where}: {at}.{key}: unknown key; the keys are {', '.join(POLICY_KEYS)}")
    name = _typed(where, table, "name", str, f"{at}.name", _REQUIRED)
    if not valid_bot_name(name) or "." in name:
        raise NightlyConfigError(
            f"{where}: {at}.name: {name!r} must be a bot name without '.' (lowercase letters, digits, '-' and '_'): "
            "its checkpoints play as NAME.DATE"
        )
    current = _typed(where, table, "current", str, f"{at}.current", _REQUIRED)
    start = _starting_checkpoint(where, f"{at}.current", current, name)
    raw = _typed(where, table, "train", (str, dict), f"{at}.train", _REQUIRED)
    try:
        if isinstance(raw, str):
            # the keys the pipeline sets are replaced before the check: the file's model folder and
            # store (an earlier run's, perhaps gone since) are never read
            table_in = {**read_toml(raw, TrainConfigError), "model": str(start), "out_dir": "."}
            table_in.pop("store", None)
            train = parse_training(table_in, raw)
        else:
            for key in PIPELINE_KEYS:
                if key in raw:
                    raise NightlyConfigError(f"{where}: {at}.train.{key}: set by the nightly pipeline; leave it out")
            table_in = {"name": name, **raw, "model": str(start), "out_dir": "."}
            train = parse_training(table_in, f"{where}: {at}.train")
    except TrainConfigError as error:
        raise NightlyConfigError(str(error) if isinstance(raw, dict) else f"{where}: {at}.train: {error}") from None
    updates = _typed(where, table, "updates", int, f"{at}.updates", train.updates)
    if not 1 <= updates <= MAX_UPDATES:  # checked here too: the training config is built later, when the night runs
        raise NightlyConfigError(f"{where}: {at}.updates: must be from 1 to {MAX_UPDATES:,}, got {updates}")
    store_matches = _typed(where, table, "store_matches", int, f"{at}.store_matches", 64)
    if store_matches < 0:
        raise NightlyConfigError(f"{where}: {at}.store_matches: must be 0 (no stored turns) or more, got {store_matches}")
    options = _typed(where, table, "bot_options", dict, f"{at}.bot_options", {})
    for key, value in options.items():
        if key == "model" or not isinstance(value, str | int | float) or isinstance(value, bool):
            raise NightlyConfigError(
                f"{where}: {at}.bot_options.{key}: the llm bot's options other than model, as strings or numbers"
            )
    try:
        values = option_values(get_bot("llm"), BotSpec("llm", {k: str(v) for k, v in options.items()}))
        check_settings(**{k: v for k, v in values.items() if k != "device"})
        if "device" in values:  # torch is loaded already, for the training config's own device
            check_device(values["device"])
    except BotSpecError as error:
        raise NightlyConfigError(f"{where}: {at}.bot_options: {error}") from None
    return Policy(name, current, train, updates, store_matches, {k: str(v) for k, v in options.items()})


def _starting_checkpoint(where: str, key: str, current: str, policy: str) -> Path:
    """The checkpoint ``current`` names today: the folder itself, or where its pointer points."""
    from trainer.checkpoints import is_model_folder

    path = Path(current)
    if path.suffix == ".json":
        if not path.is_file():
            raise NightlyConfigError(f"{where}: {key}: no such pointer file {current!r}")
        try:
            return read_pointer(path, policy).path
        except NightlyError as error:
            raise NightlyConfigError(f"{where}: {key}: {error}") from None
    if not is_model_folder(path):
        raise NightlyConfigError(
            f"{where}: {key}: {current!r} is neither a model folder saved by save_pretrained nor a pointer file (*.json)"
        )
    return path


def _substitute(table: Mapping[str, Any], spec_of: Callable[[str, str, str], str]) -> dict[str, Any]:
    """The tournament table with every ``{new:NAME}`` / ``{current:NAME}`` participant replaced
    (in the participant lists, the challenger and the held-out opponents)."""

    def one(value: Any, key: str) -> Any:
        if isinstance(value, str):
            found = PLACEHOLDER.fullmatch(value)
            return spec_of(found.group(1), found.group(2), key) if found else value
        if isinstance(value, list):
            return [one(v, f"{key}[{i}]") for i, v in enumerate(value)]
        return value

    out = {key: one(value, key) if key in PARTICIPANT_KEYS else value for key, value in table.items()}
    if isinstance(out.get("games"), list):
        out["games"] = [
            {k: one(v, f"games[{i}].{k}") if k == "participants" else v for k, v in entry.items()}
            if isinstance(entry, dict)
            else entry
            for i, entry in enumerate(out["games"])
        ]
    return out


def _check_tournament(where: str, name: str, table: Mapping[str, Any], policies: tuple[Policy, ...]) -> TournamentConfig:
    """The tournament with stand-ins for the placeholders (the new checkpoints do not exist yet):
    ``remote:NAME.new`` and ``remote:NAME.current``, which the tournament parser accepts unloaded."""
    at = f"{where}: tournament"
    if "name" in table:
        raise NightlyConfigError(f"{at}: name: set by the nightly pipeline (the nightly's name and the date); leave it out")
    known = {p.name for p in policies}

    def stand_in(kind: str, policy: str, key: str) -> str:
        if policy not in known:
            raise NightlyConfigError(
                f"{at}: {key}: {{{kind}:{policy}}} names no policy; the policies are {', '.join(sorted(known))}"
            )
        return f"remote:{policy}.{kind}"

    try:
        config = parse_tournament({"name": name, **_substitute(table, stand_in)}, at)
    except TournamentConfigError as error:
        raise NightlyConfigError(str(error)) from None
    ours = {f"remote:{p.name}.{kind}" for p in policies for kind in ("new", "current")}
    theirs = [p for p in config.remote if p not in ours]
    if theirs:
        raise NightlyConfigError(
            f"{at}: {theirs[0]!r}: remote participants play only through a server; the nightly plays in-process"
        )
    held_games = {e.name for e in config.games if e.label in config.held_out_games}
    for i, policy in enumerate(policies):
        new, current = f"remote:{policy.name}.new", f"remote:{policy.name}.current"
        if not any(new in e.participants and current in e.participants for e in config.games):
            raise NightlyConfigError(
                f"{at}: games: no game seats both {{new:{policy.name}}} and {{current:{policy.name}}}; "
                "the gate needs their head-to-head"
            )
        trained = {g.name for g in policy.train.games}
        if trained & held_games:
            raise NightlyConfigError(
                f"{where}: policies[{i}].train.games: {sorted(trained & held_games)[0]} is a held-out game of the tournament; "
                "a held-out game is one never trained on"
            )
        met = set(policy.train.opponents.bots) & set(config.held_out_opponents)
        if met:
            raise NightlyConfigError(
                f"{where}: policies[{i}].train.opponents.bots: {sorted(met)[0]} is a held-out opponent of the tournament; "
                "a held-out opponent is one never trained against"
            )
    return config


def _gate(where: str, table: Mapping[str, Any], template: TournamentConfig, policies: tuple[Policy, ...]) -> Gate:
    method = _typed(where, table, "method", str, "gate.method", "sprt")
    if method not in gates.METHODS:
        raise NightlyConfigError(f"{where}: gate.method: unknown method {method!r}; choose {', '.join(gates.METHODS)}")
    allowed = ("method", "game", *GATE_PARAMS[method])
    for key in table:
        if key not in allowed:
            raise NightlyConfigError(f"{where}: gate.{key}: unknown key for method {method}; the keys are {', '.join(allowed)}")
    game = _typed(where, table, "game", str, "gate.game", None)
    if game is not None:
        try:
            game = games.get(game).spec.name
        except GameError as error:
            raise NightlyConfigError(f"{where}: gate.game: {error}") from None
        for policy in policies:
            new, current = f"remote:{policy.name}.new", f"remote:{policy.name}.current"
            if not any(e.name == game and new in e.participants and current in e.participants for e in template.games):
                raise NightlyConfigError(
                    f"{where}: gate.game: no {game} game of the tournament seats both {{new:{policy.name}}} and "
                    f"{{current:{policy.name}}}"
                )
    params: dict[str, float | int] = {}
    for key in GATE_PARAMS[method]:
        if key in table:
            kind: type | tuple[type, ...] = int if key in ("resamples", "seed") else (int, float)
            params[key] = _typed(where, table, key, kind, f"gate.{key}", None)
    try:  # the gate's own checks, on no data
        if method == "sprt":
            gates.sprt([], **params)  # type: ignore[arg-type]
        else:
            gates.bootstrap_interval([0.5], **params)  # type: ignore[arg-type]
    except ValueError as error:
        raise NightlyConfigError(f"{where}: gate: {error}") from None
    return Gate(method, game, params)


# ---- checkpoints and pointers ----------------------------------------------------------------


def nightly_dir(config: NightlyConfig, db: str | Path) -> Path:
    return Path(config.dir) if config.dir is not None else Path(db).parent / "nightly"


def pointer_path(policy: Policy, folder: Path) -> Path:
    """Where the policy's "current" pointer lives: its own file, or one the pipeline keeps."""
    return Path(policy.current) if policy.current.endswith(".json") else folder / "current" / f"{policy.name}.json"


def read_pointer(path: Path, policy: str) -> Checkpoint:
    """A pointer: ``{"checkpoint": DIR, "bot": NAME}``; a hand-written one may leave out the
    bot (then ``POLICY.base``)."""
    from trainer.checkpoints import is_model_folder

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise NightlyError(f"cannot read the pointer {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("checkpoint"), str):
        raise NightlyError(f"the pointer {path} must be a JSON object with a string 'checkpoint'")
    bot = data.get("bot", f"{policy}.base")
    if not isinstance(bot, str) or not valid_bot_name(bot):
        raise NightlyError(f"the pointer {path}: 'bot' must be a valid bot name, got {bot!r}")
    checkpoint = Path(data["checkpoint"])
    if not is_model_folder(checkpoint):
        raise NightlyError(f"the pointer {path} names {checkpoint}, which is not a model folder saved by save_pretrained")
    return Checkpoint(bot, checkpoint)


def current_checkpoint(policy: Policy, folder: Path) -> Checkpoint:
    """Tonight's current checkpoint: the pointer's, once there is one; else the starting folder."""
    pointer = pointer_path(policy, folder)
    if pointer.is_file():
        return read_pointer(pointer, policy.name)
    return Checkpoint(f"{policy.name}.base", Path(policy.current).resolve())


def _write_json(path: Path, data: Any) -> None:
    """Written whole or not at all: a crash never leaves half a pointer or record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    # JSON that any reader takes: a cost that is no number (a leaderboard's) is null, not NaN
    partial.write_text(dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)


def llm_spec(checkpoint: Checkpoint, options: Mapping[str, str]) -> str:
    return "llm:" + ",".join(f"{k}={v}" for k, v in {"model": str(checkpoint.path), **options}.items())


def check_spec_carries(path: Path, what: str, where: str) -> None:
    """NightlyError unless a bot spec (``llm:model=PATH,...``, how the tournament seats a
    checkpoint) gives ``path`` back whole: a comma splits it, and a night with such a folder
    trained, then failed at its tournament, every night (found by a QA helper)."""
    try:
        carried = parse_spec(llm_spec(Checkpoint("", path), {})).options.get("model")
    except BotSpecError:
        carried = None
    if carried != str(path):
        raise NightlyError(f"{where}: {what} {path} cannot be named in a bot spec, which a comma splits: move or rename it")


# ---- the night ----------------------------------------------------------------------------------


def previous_record(folder: Path, night: dt.date) -> dict[str, Any] | None:
    """The last finished night before ``night``, or None on the first night."""
    found = []
    for path in folder.glob(f"*/{RECORD}"):
        try:
            date = dt.date.fromisoformat(path.parent.name)
        except ValueError:
            continue
        if date < night:
            found.append((date, path))
    for _, path in sorted(found, reverse=True):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("finished_at") is not None:
            return record
    return None


def _stored_matches(db: Path, bot: str, game: str | None, since: float | None, excluded: Sequence[str]) -> int:
    """The bot's finished matches the trainer may take: none against an ``excluded`` bot (it
    counted those, which the trainer then left out, and said more turns than were used)."""
    store = Store(db, read_only=True)
    try:
        row = store.conn.execute(
            """SELECT COUNT(DISTINCT s.match_id) FROM seats s JOIN matches m ON m.id = s.match_id
               WHERE s.bot = ? AND m.status = ? AND (? IS NULL OR m.game = ?) AND m.created_at >= ?
               AND NOT EXISTS (SELECT 1 FROM seats o WHERE o.match_id = s.match_id
                               AND o.bot IN (SELECT value FROM json_each(?)))""",
            (bot, FINISHED, game, game, since or 0.0, json.dumps(list(excluded))),
        ).fetchone()
        return int(row[0])
    finally:
        store.close()


def _store_setting(
    policy: Policy, current: Checkpoint, db: Path, template: TournamentConfig, since: float | None
) -> tuple[Any, str]:
    """The stored turns to train on, and why (or why not).

    The day's trajectories: the current bot's matches since the previous night began (all
    of its recent ones on the first night), at most ``store_matches`` of them, never a turn
    against a held-out opponent. Stored turns are used only when the game filter also keeps
    every held-out game out of training."""
    from trainer.config import StoreSetting

    if policy.store_matches == 0:
        return None, "store_matches = 0"
    if policy.train.estimator.name == "leave_one_out":
        return None, "the leave_one_out estimator compares rollouts sharing a seed, which stored matches do not have"
    trained = [g.name for g in policy.train.games]
    game = trained[0] if len(set(trained)) == 1 else None
    if game is None and template.held_out_games:
        return None, "training on several games while the tournament holds out games: stored turns cannot be filtered"
    excluded = [spec.removeprefix("remote:") for spec in template.held_out_opponents]
    matches = _stored_matches(db, current.bot, game, since, excluded)
    window = "since the previous night" if since is not None else "in the store"
    if matches == 0:
        return None, f"no finished match of {current.bot} {window}" + (f" but against {', '.join(excluded)}" if excluded else "")
    since_hours = None if since is None else max((time.time() - since) / 3600, 1e-6)
    setting = StoreSetting(
        db=str(db), bot=current.bot, game=game, limit=policy.store_matches, since_hours=since_hours, exclude_opponents=excluded
    )
    held = f" (none against {', '.join(excluded)})" if excluded else ""
    return setting, f"{min(matches, policy.store_matches)} matches of {current.bot} {window}{held}"


def _train(
    policy: Policy,
    current: Checkpoint,
    out: Path,
    night: dt.date,
    db: Path,
    template: TournamentConfig,
    since: float | None,
    log: Callable[[str], None],
) -> dict[str, Any]:
    from trainer.run import train

    store, why = _store_setting(policy, current, db, template, since)
    seed = policy.train.seed + night.toordinal()  # a fresh, reproducible draw each night
    config = dataclasses.replace(
        policy.train, model=str(current.path), out_dir=str(out), updates=policy.updates, seed=seed, store=store
    )
    stored = f"stored turns: {why}" if store is not None else f"no stored turns: {why}"
    log(f"{policy.name}: training from {current.bot} for {policy.updates} update{'s' * (policy.updates != 1)} ({stored})")

    def progress(p: Any) -> None:
        log(f"{policy.name}: update {p.update}/{p.updates}, return {p.metrics['return_mean']:.3f}, {p.elapsed:.0f}s")

    result = train(config, overwrite=True, progress=progress)  # a night cut short trains again from scratch
    last = [row for row in result.metrics if row["kind"] == "update"][-1]
    return {
        "run_dir": str(result.run_dir.resolve()),
        "updates": policy.updates,
        "seed": seed,
        "stored_turns": why if store is not None else None,
        "stored_turns_skipped": None if store is not None else why,
        "last_update": last,
        "checkpoint": str(result.final.resolve()),
    }


def _ratings(boards: Mapping[str, list[dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    keys = ("rank", "mu", "sigma", "conservative", "nash", "games")
    return {variant: {row["bot"]: {k: row[k] for k in keys} for row in rows} for variant, rows in boards.items()}


def changes(
    now: Mapping[str, Mapping[str, Mapping[str, Any]]], before: Mapping[str, Any] | None
) -> dict[str, list[dict[str, Any]]]:
    """Per variant, each bot's rating tonight beside its change since the previous night
    (``None`` deltas: the bot is new to that variant)."""
    then = (before or {}).get("ratings", {})
    out: dict[str, list[dict[str, Any]]] = {}
    for variant, bots in now.items():
        rows = []
        for bot, row in bots.items():  # the leaderboard's order, best first
            old = then.get(variant, {}).get(bot)
            rows.append(
                {
                    "bot": bot,
                    **row,
                    "new": old is None,
                    **{f"{k}_delta": None if old is None else row[k] - old[k] for k in ("mu", "conservative", "nash", "games")},
                }
            )
        out[variant] = rows
    return out


def run_night(
    config: NightlyConfig,
    *,
    db: str | Path | None = None,
    night: dt.date | None = None,
    log: Callable[[str], None] = lambda line: None,
    progress: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) the night of ``night`` (default: today) into ``db`` (default: the
    file's); returns the night record, also written to ``<nightly dir>/<date>/night.json``.
    One run at a time per nightly folder: a second is refused while the first holds it."""
    db_path = Path(db if db is not None else config.db)
    if not db_path.parent.is_dir():
        raise NightlyError(f"cannot make the store {db_path}: no folder {db_path.parent}")
    if db_path.exists():  # a file that is no store is said before the nightly folder is claimed for it
        Store(db_path).close()  # written to, as the night would: an empty file is made a store, an old one migrated
    folder = nightly_dir(config, db_path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / LOCK, "ab")  # noqa: SIM115 (held for the night, closed below)
    except OSError as error:
        where = "the file's `dir`" if config.dir is not None else "beside the store; set `dir` in the file to keep them elsewhere"
        raise NightlyError(f"cannot write the nightly folder {folder} ({where}): {error.strerror or error}") from None
    with handle:
        if not try_flock(handle, fcntl.LOCK_EX):
            raise NightlyError(f"another arena nightly run is using {folder}; wait for it to end")
        _claim(folder, config.name, [policy.name for policy in config.policies], db_path)
        return _run_night(config, db_path, folder, night or dt.date.today(), log, progress)


def _claim(folder: Path, name: str, policies: list[str], db: Path) -> None:
    """Keep one nightly's nights in ``folder``: a second nightly file beside the first shared its
    records (its night was refused as run already) and its policies' pointers (one's promotion
    moved the other's). A nightly is its name and its policies' names: two files copied from the
    example both named "nightly" took each other's folder. A file that adds or drops a policy
    keeps its folder while one policy stays; a folder from before the policies were kept is
    claimed by its next run of that name. The store is said, not compared: a folder
    moved with its store stays its nightly's."""
    owner = {"name": name, "policies": sorted(policies), "db": str(db.resolve())}
    path = folder / OWNER
    if path.is_file():
        found = json.loads(path.read_text(encoding="utf-8"))
        # the same name and a policy in common is this nightly, its file grown or cut by a policy
        if found.get("name") != name or not set(found.get("policies", owner["policies"])) & set(owner["policies"]):
            theirs = ", ".join(found.get("policies") or ["?"])
            raise NightlyError(
                f"{folder} keeps the nights of nightly {found.get('name')!r} (policies {theirs}; store {found.get('db')}); "
                f"set `dir` in this file (nightly {name!r}, policies {', '.join(owner['policies'])}; store {owner['db']})"
                " to keep its nights apart"
            )
        if found.get("policies") == owner["policies"]:
            return
    _write_json(path, owner)


def _run_night(
    config: NightlyConfig,
    db_path: Path,
    folder: Path,
    night: dt.date,
    log: Callable[[str], None],
    progress: Callable[[Any], None] | None,
) -> dict[str, Any]:
    from arena.ratings.report import write_report  # matplotlib: fail before training, not after
    from tournaments.runner import held_out_opponents, leaderboards, run_tournament, split_held_out
    from trainer.checkpoints import is_model_folder

    night_dir = folder / night.isoformat()
    record_path = night_dir / RECORD
    record: dict[str, Any] = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
    if record.get("finished_at") is not None:
        raise NightlyError(f"the night of {night} ran already (its record is {record_path}); a night runs once")
    Store(db_path).close()  # create or migrate it
    template = _check_tournament(config.path, config.name, config.tournament, config.policies)
    record = {
        "night": night.isoformat(),
        "nightly": config.path,
        "db": str(db_path.resolve()),
        "record": str(record_path),
        "tournament": {"name": f"{config.name}-{night.isoformat()}"},
        "policies": {},
        "steps": [],
        "started_at": time.time(),
        **record,
        "finished_at": None,
    }

    def done(step: str) -> None:
        if step not in record["steps"]:
            record["steps"].append(step)
        _write_json(record_path, record)

    # 1. train (a checkpoint trained before a crash is kept)
    last_night = previous_record(folder, night)
    since = None if last_night is None else last_night["started_at"]
    for policy in config.policies:
        entry = record["policies"].setdefault(policy.name, {})
        entry.setdefault("current", current_checkpoint(policy, folder).to_dict())
        current = Checkpoint(entry["current"]["bot"], Path(entry["current"]["checkpoint"]))
        check_spec_carries(current.path, f"policy {policy.name}'s checkpoint", config.path)
        check_spec_carries((night_dir / policy.name).resolve(), "the night's folder", config.path)
        trained = entry.get("training")
        if trained is None or not is_model_folder(trained["checkpoint"]):
            entry["training"] = _train(policy, current, night_dir / policy.name, night, db_path, template, since, log)
        entry["new"] = Checkpoint(f"{policy.name}.{night.isoformat()}", Path(entry["training"]["checkpoint"])).to_dict()
        done("train")

    # 2. register
    store = Store(db_path)
    try:
        for entry in record["policies"].values():
            for side in ("new", "current"):
                if not store.bot_exists(entry[side]["bot"]):
                    store.register_bot(entry[side]["bot"])
    finally:
        store.close()
    done("register")

    # 3. the tournament
    specs: dict[str, str] = {}  # participant spec -> bot name
    by_policy = {p.name: p for p in config.policies}

    def spec_of(kind: str, name: str, key: str) -> str:
        entry = record["policies"][name][kind]
        spec = llm_spec(Checkpoint(entry["bot"], Path(entry["checkpoint"])), by_policy[name].bot_options)
        specs[spec] = entry["bot"]
        return spec

    at = f"{config.path}: tournament"
    try:
        tournament = parse_tournament({"name": record["tournament"]["name"], **_substitute(config.tournament, spec_of)}, at)
    except TournamentConfigError as error:
        raise NightlyError(str(error)) from None
    log(f"tournament {tournament.name}: {', '.join(specs.get(p, p) for p in tournament.participants)}")
    summary = run_tournament(tournament, db_path, progress=progress, names=specs)
    boards, held_boards = split_held_out(tournament, leaderboards(tournament, db_path, resamples=config.resamples))
    opponents = [
        {**row, "participant": specs.get(row["participant"], row["participant"])}
        for row in held_out_opponents(tournament, summary.finished)
    ]
    record["tournament"].update(
        played=summary.played,
        skipped=summary.skipped,
        voided=summary.voided,
        void_details=summary.void_details,
        elapsed=summary.elapsed,
        leaderboards=boards,
        held_out={"games": held_boards, "opponents": opponents},
    )
    done("tournament")

    # 4. ratings, the report, what changed
    before = previous_record(folder, night)
    record["ratings"] = _ratings({**boards, **held_boards})
    record["changes"] = {"since": None if before is None else before["night"], "variants": changes(record["ratings"], before)}
    store = Store(db_path, read_only=True)
    try:
        report = write_report(store, night_dir / "report", resamples=config.resamples, held_out=set(held_boards))
        record["report"] = str(report)
    finally:
        store.close()
    done("report")

    # 5. promotion (a decision taken before a crash stands)
    for policy in config.policies:
        entry = record["policies"][policy.name]
        if "decision" in entry:
            continue
        store = Store(db_path, read_only=True)
        try:
            scores = gates.head_to_head(store, entry["new"]["bot"], entry["current"]["bot"], config.gate.game)
        finally:
            store.close()
        decision = gates.promotion_decision(
            entry["new"]["bot"],
            entry["current"]["bot"],
            scores,
            config.gate.method,
            **config.gate.params,  # type: ignore[arg-type]
        )
        entry["decision"] = decision.to_dict()
        if decision.promote:
            pointer = pointer_path(policy, folder)
            _write_json(
                pointer, {**entry["new"], "since": night.isoformat(), "previous": entry["current"], "decision": entry["decision"]}
            )
            entry["pointer"] = str(pointer)
        log(f"{policy.name}: {decision.reason}")
        done("promote")

    record["page"] = str(night_dir / PAGE)
    (night_dir / PAGE).write_text(night_page(record), encoding="utf-8")
    if not record["tournament"]["voided"]:  # else a rerun the same day plays the void matches again
        record["finished_at"] = time.time()
    done("page")
    return json.loads(record_path.read_text(encoding="utf-8"))  # as written: JSON's lists, not the gate's tuples


# ---- the page --------------------------------------------------------------------------------------


def _delta(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "new"
    return fixed(value, digits, sign=True) if isinstance(value, float) else f"{value:+d}"


def night_page(record: Mapping[str, Any]) -> str:
    """The night in markdown: what was trained, the decisions, what changed; the ratings
    report (``report/README.md``) holds the full leaderboards and plots."""
    tour = record["tournament"]
    lines = [
        f"# Night of {record['night']}",
        "",
        f"Tournament `{tour['name']}`: {tour['played']} played, {tour['skipped']} already done, {tour['voided']} void. "
        f"Full leaderboards and plots: [report/README.md](report/README.md).",
        "",
        "## Trained",
        "",
        "| policy | from | new bot | updates | last return | stored turns | checkpoint |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in record["policies"].items():
        training = entry["training"]
        stored = training["stored_turns"] or f"none ({training['stored_turns_skipped']})"
        lines.append(
            f"| {name} | {entry['current']['bot']} | {entry['new']['bot']} | {training['updates']} | "
            f"{training['last_update']['return_mean']:.3f} | {stored} | `{training['checkpoint']}` |"
        )
    lines += ["", "## Promotion", "", "| policy | new | current | test | statistic | interval | matches | promoted |"]
    lines += ["|---|---|---|---|---|---|---|---|"]
    reasons = []
    for name, entry in record["policies"].items():
        d = entry["decision"]
        interval = "-" if d["interval"] is None else f"[{d['interval'][0]:.3f}, {d['interval'][1]:.3f}]"
        lines.append(
            f"| {name} | {d['new']} | {d['old']} | {d['method']} | {d['statistic']:.3f} | {interval} | {d['n']} | "
            f"{'yes' if d['promote'] else 'no'} |"
        )
        reasons.append(f"- {name}: {d['reason']}")
    lines += ["", *reasons, ""]
    since, held = record["changes"]["since"], tour["held_out"]
    lines += [f"## What changed since {since}" if since else "## Ratings (the first night: nothing to compare with)", ""]
    for variant, rows in record["changes"]["variants"].items():
        title = f"{variant} (held-out game)" if variant in held["games"] else variant
        lines += [f"### {title}", "", "| rank | bot | mu | Δmu | mu-3σ | Δ(mu-3σ) | Nash | ΔNash | games | Δgames |"]
        lines += ["|---|---|---|---|---|---|---|---|---|---|"]
        lines += [
            f"| {r['rank']} | {r['bot']} | {fixed(r['mu'])} | {_delta(r['mu_delta'])} | {fixed(r['conservative'])} | "
            f"{_delta(r['conservative_delta'])} | {fixed(r['nash'])} | {_delta(r['nash_delta'])} | {r['games']} | "
            f"{_delta(r['games_delta'])} |"
            for r in rows
        ]
        lines.append("")
    if held["opponents"]:
        lines += ["## Held-out opponents", "", "| game | participant | vs held-out | mean return | vs the rest | mean return |"]
        lines += ["|---|---|---|---|---|---|"]
        for r in held["opponents"]:
            other = "-" if r["other_mean_return"] is None else f"{r['other_mean_return']:.3g}"
            lines.append(
                f"| {r['game']} | {r['participant']} | {r['held_out_matches']} | {r['held_out_mean_return']:.3g} | "
                f"{r['other_matches']} | {other} |"
            )
        lines.append("")
    return "\n".join(lines)


# ---- every night at HH:MM --------------------------------------------------------------------------


def parse_at(text: str) -> dt.time:
    """``HH:MM`` in 24-hour local time."""
    found = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
    if found is None or int(found.group(1)) > 23 or int(found.group(2)) > 59:
        raise NightlyError(f"--at: expected HH:MM in 24-hour local time (e.g. 02:30), got {text!r}")
    return dt.time(int(found.group(1)), int(found.group(2)))


def next_run(now: dt.datetime, at: dt.time) -> dt.datetime:
    """The first ``at`` (local wall-clock time) strictly after ``now``: today's if it is still
    ahead, else tomorrow's."""
    today = now.replace(hour=at.hour, minute=at.minute, second=0, microsecond=0)
    return today if today > now else today + dt.timedelta(days=1)


def night_process(command: Sequence[str]) -> int:
    """Run one night's ``command`` in a child process; its exit status.

    The child leads its own process group, so that a Ctrl-C at the terminal reaches this loop
    alone. An interrupt here (Ctrl-C, or SIGTERM and SIGHUP as the CLI takes them) is passed
    on as one SIGTERM, and the night is waited for while it stops in order; a second interrupt
    kills it. ``subprocess.call`` gave the night a quarter of a second, then killed it, and a
    SIGTERM to the loop never reached it. The night gets Ctrl-C's default back, if the loop
    runs without it (a script's background job): an arena command that ignores Ctrl-C takes a
    SIGTERM as a kill, and no terminal's Ctrl-C reaches a process group of its own anyway."""
    night = subprocess.Popen(
        list(command), start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    try:
        return night.wait()
    except KeyboardInterrupt:
        night.send_signal(signal.SIGTERM)
        try:
            night.wait()
        except KeyboardInterrupt:
            night.kill()
            night.wait()
        raise


def serve_nightly(
    run: Callable[[], int],
    at: dt.time,
    *,
    now: Callable[[], dt.datetime] = dt.datetime.now,
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] = lambda line: None,
    nights: int | None = None,
) -> None:
    """Run ``run`` at every ``at``, for ever (or ``nights`` times).

    The wait is taken in slices of at most a minute, re-reading the clock each time, so a
    machine that slept, or a clock set forward or back (summer time), still runs at the
    wall-clock time asked for and never twice for one date. A night that fails is logged
    and the loop waits for the next one.
    """
    ran = 0
    while nights is None or ran < nights:
        target = next_run(now(), at)
        log(f"next night at {target:%Y-%m-%d %H:%M}")
        while (left := target.timestamp() - now().timestamp()) > 0:
            sleep(min(left, 60.0))
        status = run()
        ran += 1
        log(f"the night of {target:%Y-%m-%d} ended with status {status}")
