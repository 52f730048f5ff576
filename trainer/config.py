"""A training run's TOML file, read into frozen dataclasses and checked before any work.

    name = "ipd-vs-tit-for-tat"
    model = "models/tiny"          # a from_pretrained folder (`arena train init-model`)
    out_dir = "runs/ipd"
    seed = 0
    device = "cpu"                 # or "cuda" for a real checkpoint on a GPU
    dtype = "float32"              # bfloat16 on a GPU
    updates = 40
    matches_per_update = 32        # rollouts per update
    group_size = 1                 # rollouts sharing a seed (leave_one_out needs >= 2)
    concurrency = 16               # matches played at once (their turns share forward passes)
    checkpoint_every = 10          # save a checkpoint every N updates (0: only the final one)

    [[games]]                      # one or more; matches cycle through them
    name = "iterated-prisoners-dilemma"
    config = { rounds = 10 }

    [estimator]                    # spiral, mars, dr_mas or leave_one_out, and its parameters
    name = "mars"
    gamma = 1.0

    [alignment]                    # optional: the Advantage Alignment term on top
    beta = 2.0
    gamma = 0.96

    [acting]      temperature, max_new_tokens, score_limit, max_retries
    [ppo]         lr, epochs, minibatch, grad_accum, clip_eps, dual_clip, kl_coef, max_grad_norm, weight_decay
    [opponents]   sampling, self_play, bots, models, snapshot_every, max_snapshots
    [eval]        every, matches, bots
    [store]       db, bot, game, limit, per_update, since_hours, exclude_opponents: turns a model
                  played as a live bot

Each section is a dataclass below; its fields are the keys, with their types and defaults.
Every error names the file, the key and what is wrong. Relative paths are taken from the
current directory, like every path given to the ``arena`` command.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import games
from arena.match import check_max_retries
from arena.store import Store, StoreError
from arena.toml_file import read_toml
from bots.registry import make_bot, parse_spec
from games.api import GameError, did_you_mean, make_config
from trainer.advantages import ESTIMATORS, Alignment, check_estimator, estimator_parameters
from trainer.checkpoints import is_model_folder, not_a_model_folder, not_causal
from trainer.device import check_device
from trainer.export import ExportError, trajectory_rows
from trainer.opponents import SAMPLING, model_names
from trainer.plot import METRICS_FILE
from trainer.update import PPOSettings


class TrainConfigError(ValueError):
    """A training file that cannot be run: the message names the file and the key."""


MAX_UPDATES = 1_000_000
MAX_MATCHES_PER_UPDATE = 10_000
"""Past these a run goes on for ever, or its first update asks for terabytes (10^12 matches an
update tried to allocate 7 TiB), where a mistyped number should be said at once."""


def _at_most(setting: object, maximum: int, *keys: str) -> None:
    for key in keys:
        if getattr(setting, key) > maximum:
            raise ValueError(f"{key} must be at most {maximum:,}, got {getattr(setting, key)}")


def _at_least(setting: object, minimum: int, *keys: str) -> None:
    for key in keys:
        if getattr(setting, key) < minimum:
            raise ValueError(f"{key} must be at least {minimum}, got {getattr(setting, key)}")


@dataclass(frozen=True)
class GameSetting:
    name: str
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EstimatorSetting:
    """The estimator's name; the other keys of the table are its parameters."""

    name: str = "mars"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ActingSetting:
    temperature: float = 1.0
    max_new_tokens: int = 48
    score_limit: int = 64
    max_retries: int = 2

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0 (scores are divided by it), got {self.temperature}")
        _at_least(self, 1, "max_new_tokens")
        _at_least(self, 0, "score_limit")
        check_max_retries(self.max_retries)  # the match loop's own limit, met before any model loads


@dataclass(frozen=True)
class OpponentSetting:
    """Who the learner meets: itself (``self_play``), registry bots, other models, and
    its own snapshots saved every ``snapshot_every`` updates (0: none)."""

    sampling: str = "uniform"
    self_play: bool = True
    bots: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    snapshot_every: int = 0
    max_snapshots: int = 5

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLING:
            hint = did_you_mean(self.sampling, SAMPLING)
            raise ValueError(f"sampling {self.sampling!r} is unknown{hint}; choose {', '.join(SAMPLING)}")
        _at_least(self, 0, "snapshot_every")
        _at_least(self, 1, "max_snapshots")
        seen: dict[str, str] = {}
        for spec in self.bots:  # two spellings of one bot ('random', 'random:') were two entries of the pool
            same = str(parse_spec(spec))
            if same in seen:
                also = "" if seen[same] == spec else f" (also as {seen[same]!r})"
                raise ValueError(f"bots lists {spec!r} twice{also}")
            seen[same] = spec
        try:
            model_names(self.models, taken={"self", *self.bots})
        except ValueError as error:
            raise ValueError(f"models: {error}") from None
        if not (self.self_play or self.bots or self.models or self.snapshot_every):
            raise ValueError("no opponent: enable self_play or list bots, models or snapshots")


@dataclass(frozen=True)
class EvalSetting:
    """The gauntlet: ``matches`` against each fixed bot every ``every`` updates (0: never)."""

    every: int = 0
    matches: int = 20
    bots: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        _at_least(self, 0, "every")
        _at_least(self, 1, "matches")
        if self.every and not self.bots:
            raise ValueError(f"every = {self.every} plays a gauntlet against bots, and bots is empty: name some or set every = 0")


@dataclass(frozen=True)
class StoreSetting:
    """Turns a model played as a live bot, read from the arena's store and mixed into every
    update (whole trajectories, at least ``per_update`` turns each, cycling); the stored log-probs are the acting policy's.
    ``limit`` keeps the most recent matches, ``since_hours`` those of the last hours (the
    day's play), ``exclude_opponents`` leaves out turns against those bots (held out)."""

    db: str
    bot: str
    game: str | None = None
    limit: int | None = None
    per_update: int = 64
    since_hours: float | None = None
    exclude_opponents: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.per_update < 1 or (self.limit is not None and self.limit < 1):
            raise ValueError(f"per_update and limit must be at least 1, got {self.per_update} and {self.limit}")
        if self.since_hours is not None and self.since_hours <= 0:
            raise ValueError(f"since_hours must be positive, got {self.since_hours}")


@dataclass(frozen=True)
class TrainConfig:
    name: str
    model: str
    out_dir: str
    games: list[GameSetting]
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    updates: int = 20
    matches_per_update: int = 32
    group_size: int = 1
    concurrency: int = 16
    checkpoint_every: int = 0
    estimator: EstimatorSetting = field(default_factory=EstimatorSetting)
    alignment: Alignment | None = None
    acting: ActingSetting = field(default_factory=ActingSetting)
    ppo: PPOSettings = field(default_factory=PPOSettings)
    opponents: OpponentSetting = field(default_factory=OpponentSetting)
    eval: EvalSetting = field(default_factory=EvalSetting)
    store: StoreSetting | None = None

    def __post_init__(self) -> None:
        if self.dtype == "float16":  # AdamW's step on half-precision weights overflows: one update, every weight NaN
            raise ValueError("dtype float16 cannot be trained (no loss scaling: the weights turn to NaN); use bfloat16")
        if self.dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be float32 or bfloat16, got {self.dtype!r}")
        _at_least(self, 1, "updates", "matches_per_update", "group_size", "concurrency")
        _at_most(self, MAX_UPDATES, "updates")
        _at_most(self, MAX_MATCHES_PER_UPDATE, "matches_per_update", "group_size", "concurrency")
        _at_least(self, 0, "checkpoint_every", "seed")
        if self.matches_per_update % self.group_size:
            raise ValueError(
                f"matches_per_update ({self.matches_per_update}) must be a multiple of group_size ({self.group_size})"
            )
        if self.estimator.name == "leave_one_out" and self.group_size < 2:
            raise ValueError("the leave_one_out estimator needs group_size >= 2 (rollouts sharing a seed)")
        if self.estimator.name == "leave_one_out" and self.store is not None:
            raise ValueError(
                "the leave_one_out estimator cannot use [store] turns: a stored match has no rollouts sharing its seed"
            )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def load(path: str | Path, overrides: Mapping[str, Any] | None = None) -> TrainConfig:
    """Read and check ``path``, with ``overrides`` (top-level keys, as the command line gives
    them) in place of the file's or where it has none; TrainConfigError names what is wrong and where."""
    return parse({**read_toml(path, TrainConfigError), **(overrides or {})}, str(path))


def parse(data: Mapping[str, Any], where: str = "<config>") -> TrainConfig:
    """Check a parsed TOML document; ``where`` (the file) starts every error message."""
    table = dict(data)
    estimator = table.pop("estimator", None)
    config = _build(TrainConfig, table, where, "")
    if estimator is not None:
        setting = _estimator(estimator, where)
        try:
            config = dataclasses.replace(config, estimator=setting)
        except ValueError as error:
            raise TrainConfigError(f"{where}: {error}") from None
    _check_references(config, where)
    return config


def _estimator(table: Any, where: str) -> EstimatorSetting:
    """The estimator's name, then its parameters, checked against the estimator's signature."""
    if not isinstance(table, dict):
        raise TrainConfigError(f"{where}: estimator: must be a table, got {type(table).__name__}")
    params = dict(table)
    name = _value(str, params.pop("name", "mars"), where, "estimator.name")
    if name not in ESTIMATORS:
        hint = did_you_mean(name, list(ESTIMATORS))
        raise TrainConfigError(f"{where}: estimator.name: unknown estimator {name!r}{hint}; choose {', '.join(ESTIMATORS)}")
    known = estimator_parameters(name)
    for key in params:
        if key not in known:
            hint = did_you_mean(key, list(known))
            raise TrainConfigError(
                f"{where}: estimator.{key}: unknown parameter of {name}{hint}; its parameters are {', '.join(known)}"
            )
    params = {key: _value(known[key], value, where, f"estimator.{key}") for key, value in params.items()}
    try:
        check_estimator(name, params)
    except ValueError as error:
        raise TrainConfigError(f"{where}: estimator: {error}") from None
    return EstimatorSetting(name, params)


def _build(cls: type, table: Any, where: str, prefix: str) -> Any:
    """An instance of dataclass ``cls`` from a TOML table, every key and type checked."""
    at = prefix.rstrip(".") or "the file"
    if not isinstance(table, dict):
        raise TrainConfigError(f"{where}: {at}: must be a table, got {type(table).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in table:
        if key not in fields:
            hint = did_you_mean(key, list(fields))
            raise TrainConfigError(f"{where}: {prefix}{key}: unknown key{hint}; the keys are {', '.join(fields)}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in table:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise TrainConfigError(f"{where}: {prefix}{name}: missing")
            continue
        values[name] = _value(hints[name], table[name], where, f"{prefix}{name}")
    try:
        return cls(**values)
    except (ValueError, TypeError) as error:  # a top-level key's error names the key itself
        raise TrainConfigError(f"{where}: {prefix.rstrip('.') + ': ' if prefix else ''}{error}") from None


def _value(hint: Any, value: Any, where: str, key: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        if value not in args:
            raise TrainConfigError(f"{where}: {key}: must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if origin is typing.Union or (origin is not None and type(None) in args):
        inner = next(a for a in args if a is not type(None))
        return _value(inner, value, where, key)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, where, key + ".")
    if origin is list:
        if not isinstance(value, list):
            raise TrainConfigError(f"{where}: {key}: must be a list, got {type(value).__name__} {value!r}")
        return [_value(args[0], item, where, f"{key}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise TrainConfigError(f"{where}: {key}: must be a table, got {type(value).__name__} {value!r}")
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise TrainConfigError(f"{where}: {key}: must be {hint.__name__}, got {type(value).__name__} {value!r}")
    if hint is float and not math.isfinite(value):  # nan passes every range check below; inf breaks the arithmetic
        raise TrainConfigError(f"{where}: {key}: must be a finite number, got {value!r}")
    return value


def _check_references(config: TrainConfig, where: str) -> None:
    """Games, game configs, bot specs, the device and the store's bot must exist; the model
    folders must hold models."""
    try:
        check_device(config.device)
    except ValueError as error:
        raise TrainConfigError(f"{where}: device: {error}") from None
    if not config.games:
        raise TrainConfigError(f"{where}: games: lists no game")
    for i, entry in enumerate(config.games):
        try:
            game = games.get(entry.name)
            make_config(game.Config, entry.config)
        except GameError as error:
            raise TrainConfigError(f"{where}: games[{i}]: {error}") from None
        for section, specs in (("opponents.bots", config.opponents.bots), ("eval.bots", config.eval.bots)):
            for j, spec in enumerate(specs):
                try:
                    make_bot(spec, game.spec.name)
                except (GameError, ValueError) as error:
                    raise TrainConfigError(f"{where}: {section}[{j}]: {error}") from None
    for key, folder in [("model", config.model), *((f"opponents.models[{i}]", m) for i, m in enumerate(config.opponents.models))]:
        if not is_model_folder(folder):
            raise TrainConfigError(f"{where}: {key}: {not_a_model_folder(folder)}")
        if (problem := not_causal(folder)) is not None:
            raise TrainConfigError(f"{where}: {key}: {problem}")
    if config.store is not None:
        _check_store(config.store, where)


def _check_store(setting: StoreSetting, where: str) -> None:
    if not Path(setting.db).is_file():
        raise TrainConfigError(f"{where}: store.db: no such file {setting.db!r}")
    if setting.game is not None:
        try:
            games.get(setting.game)
        except GameError as error:
            raise TrainConfigError(f"{where}: store.game: {error}") from None
    try:
        store = Store(setting.db, read_only=True)
    except StoreError as error:
        raise TrainConfigError(f"{where}: store.db: {error}") from None
    try:
        # each call checks its filters (the bots played there) and reads no row; the second
        # names a misspelled held-out bot, said after the model had loaded (found by a QA helper)
        for key, filters in (("bot", {}), ("exclude_opponents", {"exclude_opponents": setting.exclude_opponents})):
            try:
                trajectory_rows(store, bot=setting.bot, **filters)
            except ExportError as error:
                raise TrainConfigError(f"{where}: store.{key}: {error}") from None
    finally:
        store.close()


def check_out_dir(config: TrainConfig, *, overwrite: bool) -> None:
    """A run never mixes its files with an earlier run's (nor empties its metrics): ``out_dir``
    must be absent or empty. ``overwrite`` lets the run clear it, but only where it holds an
    earlier run (its metrics.jsonl) and none of this run's inputs, which clearing would delete."""
    out = Path(config.out_dir)
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return
    if not out.is_dir():
        raise TrainConfigError(f"out_dir: {config.out_dir!r} is a file, not a folder")
    if not overwrite:
        raise TrainConfigError(
            f"out_dir: {config.out_dir!r} is not empty (an earlier run?); choose a new out_dir (--out DIR), "
            "or pass --overwrite to clear it and start again"
        )
    if not (out / METRICS_FILE).is_file():
        raise TrainConfigError(
            f"out_dir: {config.out_dir!r} holds no earlier run (no {METRICS_FILE}); --overwrite clears only a run's folder"
        )
    inputs = [config.model, *config.opponents.models, *([config.store.db] if config.store is not None else [])]
    # a bot spec's option may name a file or folder too (llm:model=DIR): it is read as well
    specs = [*config.opponents.bots, *config.eval.bots]
    inputs += [value for spec in specs for value in parse_spec(spec).options.values() if Path(value).exists()]
    for path in inputs:
        if out.resolve() in (Path(path).resolve(), *Path(path).resolve().parents):
            raise TrainConfigError(
                f"out_dir: {config.out_dir!r} holds {path!r}, which this run reads; --overwrite would delete it"
            )
