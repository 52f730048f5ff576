"""The one interface every game obeys.

A game is a class: its ``spec`` says what kind of game it is, its ``Config`` says what
can be tuned, and an instance is one state of one match. Actions are strings, so the
same game serves scripted bots, language models and the wire. States are deterministic
given (config, seed, actions): chance draws come from ``chance()``, keyed by the seed
and the index of the chance event, never from a global generator.

Subclasses write the rules in a handful of hooks (``_setup``, ``to_move``,
``legal_actions``, ``validate``, ``_apply``, ``observe`` and the two views); the
machinery shared by every game (config parsing, stepping, simultaneous moves, returns,
history, serialisation, replay, cloning) lives here once.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import typing
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from games.chance import ChanceRng

Category = Literal["competitive", "cooperative", "social_dilemma", "negotiation"]
CATEGORIES: tuple[Category, ...] = ("competitive", "cooperative", "social_dilemma", "negotiation")
MAX_SEED = 2**63 - 1
"""The largest seed: a match's seed is stored and sent as a signed 64-bit integer."""

MAX_TURNS = 1_000
MAX_MESSAGE_CHARS = 1_000
MAX_TALK_CHARS = 20_000
"""Bounds on a match's length (``GameConfig.bound_history``): a turn shows the history (games
of many rounds their latest rounds only, ``HISTORY_SHOWN``) and the server
keeps each turn's observation until the match ends, so its memory can grow as the square of
the turns (one bot's self-play seek for a billion rounds of long
messages held gigabytes within a minute). ``MAX_TURNS`` is for two players; with more, each
round holds more and is told to more seats, so fewer rounds are allowed (1,000 rounds of
two players hold about 60 MB). ``MAX_TALK_CHARS`` bounds what one seat may say over a
match: a hundred rounds of 200-character messages."""
HISTORY_SHOWN = 20
"""Rounds a game of many rounds shows one by one in its text and views, the latest; those
before are summed up in one line, and the observation's data lists every round. Every round,
shown at every turn, made the text grow with the match and what the server keeps of a match
with its square: eight matches of 1,000 rounds with messages held 2 GB, which a server with
that much gave back to no one, and one of iterated ultimatum 176 MB."""


def first_shown(played: int) -> int:
    """The index of the first of ``played`` rounds shown one by one (``HISTORY_SHOWN``)."""
    return max(0, played - HISTORY_SHOWN)


def not_shown(first: int) -> str:
    """How the text's history names the ``first`` rounds it sums up in one line."""
    rounds = "round 1" if first == 1 else f"rounds 1 to {first}"
    return f"{rounds}, not shown one by one (the observation's data lists every round)"


class GameError(Exception):
    """Base of the errors a game raises; the message is meant for the user."""


class ConfigError(GameError, ValueError):
    """A config key is unknown or its value is out of range."""


class IllegalAction(GameError):
    """An action the rules do not allow now; ``reason`` says why, for the mover."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GameOver(GameError):
    """A step was asked of a finished game."""


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """A suffix for an error message naming the closest valid choice, if any is close: by
    spelling, else the few that hold the word (``kuhn`` is ``kuhn-poker``, ``chicken`` is
    ``iterated-chicken``, too short a part of either for difflib)."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    holding = [choice for choice in choices if word.lower() in choice.lower()] if len(word) >= 3 else []
    if not holding or len(holding) > 3:
        return ""
    return f"; did you mean {' or '.join(repr(choice) for choice in holding)}?"


MAX_NUMBER_DIGITS = 18
"""Longer numbers are no amount, slot or card in any game; int() refuses past 4300 digits."""

MAX_CONFIG_NUMBER = 10**9
"""The largest magnitude of a number in a config. Every game's counts, sizes and payoffs sit far
below it, and past it the numbers broke what carries and sums them: an integer over 64 bits
cannot be packed in msgpack (a seek of pig with ``target`` 2**64 crashed the server as it sent
the lobby), and a payoff of -1.7e308 made a match's returns infinite, which no rating takes."""

MAX_NAME_CHARS = 32
"""The longest name a config may give an option or an item: it is in every observation, and
in the lobby's list of waiting seeks that every spectator is sent (26 options of 2,400
characters made one seek's config 62 KB)."""


def read_number(text: str, most_digits: int = MAX_NUMBER_DIGITS) -> int | None:
    """The whole number ``text`` writes in at most ``most_digits`` decimal digits, or None.

    Replies come from language models and remote bots: '²' is a digit to str.isdigit but
    not to int(), and int() refuses a number of thousands of digits. Either would escape
    ``validate`` as a ValueError, which the match loop takes for the engine's fault (a
    void match), so a seat could void a match it is losing.
    """
    if not text.isdecimal() or len(text) > most_digits:
        return None
    return int(text)


@dataclass(frozen=True)
class GameConfig:
    """Base of every game's config: a frozen dataclass whose fields all have defaults.

    ``check`` runs at construction, so an instance is always valid. ``players`` lives
    here because every game is played by some number of seats; the game's spec bounds it.
    """

    players: int = 2

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            expected = _field_types(type(self))[f.name]
            value = getattr(self, f.name)
            if not _is_instance(value, expected):
                raise ConfigError(f"config key '{f.name}' must be {_type_name(expected)}, got {_shown(value)}")
            if any(isinstance(number, float) and not math.isfinite(number) for number in _numbers(value)):
                # NaN passes every range check, since all its comparisons are false
                raise ConfigError(f"config key '{f.name}' must be a finite number, got {_shown(value)}")
        self.check()  # first: the game's own range says more than the bound below ("rounds at most 1000")
        for f in dataclasses.fields(self):
            for number in _numbers(getattr(self, f.name)):
                if abs(number) > MAX_CONFIG_NUMBER:
                    raise ConfigError(
                        f"config key '{f.name}' must be a number from -{MAX_CONFIG_NUMBER:,} to {MAX_CONFIG_NUMBER:,}, "
                        f"got {number!r:.40}"
                    )

    def check(self) -> None:
        """Raise ConfigError naming the bad key; games override and call super()."""
        self.at_least("players", 1)

    def at_least(self, key: str, low: float) -> None:
        """The check most keys need: ConfigError naming ``key`` when its value is below ``low``."""
        value = getattr(self, key)
        if value < low:
            raise ConfigError(f"config key '{key}' must be at least {low}, got {value}")

    def at_most(self, key: str, high: float) -> None:
        """ConfigError naming ``key`` when its value is above ``high``."""
        value = getattr(self, key)
        if value > high:
            raise ConfigError(f"config key '{key}' must be at most {high}, got {value}")

    def bound_names(self, key: str, what: str) -> None:
        """ConfigError naming ``key`` when one of the names it lists (``what``: "an option")
        is longer than ``MAX_NAME_CHARS``."""
        for name in getattr(self, key):
            if len(name) > MAX_NAME_CHARS:
                raise ConfigError(f"config key '{key}': {what} is {len(name)} characters, the most is {MAX_NAME_CHARS}")

    def bound_history(self, turns: str, chars: str | None = None, *, talk: bool = True) -> None:
        """ConfigError when ``turns`` (a match's rounds or moves; fewer with more players), its
        messages' ``chars`` or, when players talk, all one seat may say (``turns`` times
        ``chars``) pass what a match may hold (``MAX_TURNS``, ``MAX_MESSAGE_CHARS``,
        ``MAX_TALK_CHARS``)."""
        self.at_most(turns, MAX_TURNS * 2 // max(self.players, 2))
        if chars is None:
            return
        self.at_most(chars, MAX_MESSAGE_CHARS)
        length, size = getattr(self, turns), getattr(self, chars)
        if talk and length * size > MAX_TALK_CHARS:
            raise ConfigError(
                f"config key '{turns}' times '{chars}' must be at most {MAX_TALK_CHARS} when players talk "
                f"(every turn shows all that was said), got {length} x {size}"
            )

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return a seat can get under this config."""
        raise NotImplementedError

    def action_space(self) -> tuple[str, ...] | None:
        """Every action the game can ever take under this config, when that set is fixed."""
        return None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def overrides(self) -> dict[str, Any]:
        """The keys that differ from the defaults: what makes this config a variant."""
        default = make_config(type(self), None)
        return {k: v for k, v in self.to_dict().items() if v != _plain(getattr(default, k))}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


_TYPE_CACHE: dict[type, dict[str, Any]] = {}


FIELD_TYPES = (int, float, bool, str)
"""What a config key may hold, alone or as ``tuple[T, ...]``: what the command line, TOML,
JSON and msgpack all write, and the config parser reads from each."""


def _field_types(cls: type) -> dict[str, Any]:
    """The types of a config class's keys, checked once against ``FIELD_TYPES``: a plugin's
    ``int | None`` could never be set from the command line, and a ``Literal`` failed with
    Python's own words on subscripted generics."""
    if cls not in _TYPE_CACHE:
        hints = typing.get_type_hints(cls)
        found = {f.name: hints[f.name] for f in dataclasses.fields(cls)}  # a ClassVar is no key
        for key, kind in found.items():
            item = typing.get_args(kind)[0] if typing.get_origin(kind) is tuple else kind
            if item not in FIELD_TYPES or (item is not kind and typing.get_args(kind)[1:] != (Ellipsis,)):
                raise GameError(
                    f"{cls.__module__}.{cls.__qualname__}: config key {key!r} is typed {kind}; a key holds int,"
                    " float, bool or str, or a tuple of one of them (tuple[int, ...])"
                )
        _TYPE_CACHE[cls] = found
    return _TYPE_CACHE[cls]


def _numbers(value: Any) -> Iterator[float]:
    """The numbers in a config value, inside tuples too (a bool is not one)."""
    if isinstance(value, tuple):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


def _is_instance(value: Any, expected: Any) -> bool:
    if typing.get_origin(expected) is tuple:
        (item, *_rest) = typing.get_args(expected)
        return isinstance(value, tuple) and all(_is_instance(v, item) for v in value)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


_TYPE_NAMES = {
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("true or false", "booleans"),
    str: ("text", "texts"),
}


def _type_name(expected: Any, plural: bool = False) -> str:
    if typing.get_origin(expected) is tuple:
        return f"a comma-separated list of {_type_name(typing.get_args(expected)[0], plural=True)}"
    return _TYPE_NAMES.get(expected, (str(expected), str(expected)))[plural]


def _shown(value: Any) -> str:
    """A config value as a client wrote it, whatever its language: JSON's null, true and [1, 2]
    (what a seek's config and TOML hold), not Python's None, True and (1, 2)."""
    try:
        return json.dumps(value)
    except TypeError:  # what no JSON holds (msgpack's binary data): as Python shows it
        return repr(value)


def parse_value(key: str, text: str, expected: Any) -> Any:
    """Turn a command-line string into the field's type, or say what was expected."""
    try:
        if typing.get_origin(expected) is tuple:
            item = typing.get_args(expected)[0]
            return tuple(parse_value(key, part.strip(), item) for part in text.split(",") if part.strip())
        if expected is bool:
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if expected is int:
            return int(text)
        if expected is not float:
            return text
        number = float(text)
    except ValueError:
        raise ConfigError(f"config key '{key}' must be {_type_name(expected)}, got {text!r}") from None
    if not math.isfinite(number):  # NaN passes every range check, since all its comparisons are false
        raise ConfigError(f"config key '{key}' must be a finite number, got {text!r}")
    return number


CONFIGS_KEPT = 1024
"""Configs ``make_config`` keeps by their values: a server builds the same few for every seek,
table and match, and checking one walks every field."""

_made_configs: dict[Any, GameConfig] = {}


def check_seed(seed: Any) -> None:
    """ConfigError unless ``seed`` is a match seed: what SQLite stores as an integer."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"the seed must be an integer from 0 to {MAX_SEED} (2**63 - 1), got {seed!r}")


def make_config(config_type: type[GameConfig], values: GameConfig | Mapping[str, Any] | None) -> GameConfig:
    """Build a validated config from None, an instance, or a mapping (strings are parsed).

    Configs are frozen, so one built from the same values is handed out again."""
    if isinstance(values, config_type):
        return values
    if values is not None and not isinstance(values, Mapping):
        raise ConfigError(f"a config must be a mapping of keys to values, got {type(values).__name__}")
    given = values or {}
    key = _config_key(config_type, given)
    made = None if key is None else _made_configs.get(key)
    if made is None:
        made = _build_config(config_type, given)
        if key is not None:
            if len(_made_configs) >= CONFIGS_KEPT:
                _made_configs.clear()
            _made_configs[key] = made
    return made


def _config_key(config_type: type[GameConfig], values: Mapping[str, Any]) -> Any:
    """A hashable key of the values, types included (``True``, ``1`` and ``1.0`` are equal
    keys in a dict, but not the same config value); None when a value cannot be hashed."""
    try:
        key = (config_type, tuple((name, _typed(value)) for name, value in values.items()))
        hash(key)
    except TypeError:
        return None
    return key


def _typed(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value), tuple(_typed(item) for item in value)
    if isinstance(value, float):
        return float, value.hex()  # -0.0 is not 0.0
    return type(value), value


def _build_config(config_type: type[GameConfig], values: Mapping[str, Any]) -> GameConfig:
    types = _field_types(config_type)
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in types:
            raise ConfigError(f"unknown config key '{key}'{did_you_mean(key, list(types))}; keys: {', '.join(types)}")
        expected = types[key]
        if isinstance(value, str) and expected is not str:
            value = parse_value(key, value, expected)
        elif isinstance(value, list):
            value = tuple(value)
        elif expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        kwargs[key] = value
    return config_type(**kwargs)


@dataclass(frozen=True)
class GameSpec:
    """What a game is, independent of any match. Return bounds and the action space are
    those of the default config; ``GameConfig`` gives them for any other."""

    name: str
    title: str
    category: Category
    description: str
    rules: str
    default_config: GameConfig
    min_players: int = 2
    max_players: int = 2
    simultaneous: bool = False
    chance: bool = False
    hidden_information: bool = False
    free_text: bool = False
    zero_sum: bool = False
    teams: Literal["none", "all"] = "none"
    staged_rounds: bool = False
    """A round is played in steps that different seats take, each seat once (a proposal, then
    the votes on it): a seat's k-th turn is in round k, not at step k. The trainer's
    estimators discount and align turns by rounds (``trainer.rollout.turn_times``)."""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.name}: unknown category {self.category!r}")

    @property
    def min_return(self) -> float:
        return self.default_config.return_bounds()[0]

    @property
    def max_return(self) -> float:
        return self.default_config.return_bounds()[1]

    @property
    def action_space(self) -> tuple[str, ...] | None:
        return self.default_config.action_space()

    def check_players(self, players: int) -> None:
        """A config can name any player count; only the spec knows which the game allows, so
        whoever accepts a config before a match exists (a seek, say) must ask here too."""
        if not self.min_players <= players <= self.max_players:
            span = f"{self.min_players}" if self.min_players == self.max_players else f"{self.min_players} to {self.max_players}"
            raise ConfigError(f"{self.name} is played by {span} players, not {players}")

    def team_of(self, seat: int, players: int) -> tuple[int, ...]:
        """The seats that share ``seat``'s fate: all of them in a team game, else itself."""
        return tuple(range(players)) if self.teams == "all" else (seat,)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "category": self.category,
            "description": self.description,
            "players": [self.min_players, self.max_players],
            "simultaneous": self.simultaneous,
            "chance": self.chance,
            "hidden_information": self.hidden_information,
            "free_text": self.free_text,
            "zero_sum": self.zero_sum,
            "teams": self.teams,
            "min_return": self.min_return,
            "max_return": self.max_return,
            "action_space": None if self.action_space is None else list(self.action_space),
            "default_config": self.default_config.to_dict(),
        }


@dataclass(frozen=True)
class Observation:
    """What one seat may know now: ``text`` for language models, ``data`` for scripts."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


View = dict[str, Any]
"""A spectator view: ``{"text": str, "render": [block, ...]}``; see games.render."""


class Game(ABC):
    """One state of one match. Subclasses set ``spec`` and ``Config`` and write the hooks."""

    spec: ClassVar[GameSpec]
    Config: ClassVar[type[GameConfig]]

    config: GameConfig
    seed: int
    num_players: int
    history: list[dict[int, str]]
    is_over: bool
    _returns: list[float]
    _chance_index: int

    @classmethod
    def config_of(cls, config: GameConfig | Mapping[str, Any] | None = None) -> GameConfig:
        """The checked config a match would be played with, its players counted: what a
        command checks before it plays, without running the game's own ``_setup``."""
        cfg = cls.spec.default_config if config is None else make_config(cls.Config, config)
        cls.spec.check_players(cfg.players)
        return cfg

    @classmethod
    def new(cls, config: GameConfig | Mapping[str, Any] | None = None, seed: int = 0) -> Self:
        """The initial state; the same (config, seed) always gives the same match."""
        cfg = cls.config_of(config)
        check_seed(seed)
        state = cls.__new__(cls)
        state.config = cfg
        state.seed = seed
        state.num_players = cfg.players
        state.history = []
        state.is_over = False
        state._returns = [0.0] * cfg.players
        state._chance_index = 0
        state._setup()
        return state

    def chance(self) -> ChanceRng:
        """The generator of the next chance event; call it once per event, in rule order."""
        rng = ChanceRng(self.seed, self._chance_index)
        self._chance_index += 1
        return rng

    # ---- the rules: what a game writes -------------------------------------------------

    @abstractmethod
    def _setup(self) -> None:
        """Lay out the initial position (config, seed and players are already set)."""

    @abstractmethod
    def to_move(self) -> tuple[int, ...]:
        """The seats that act at this step; several in a simultaneous step, none at the end."""

    @abstractmethod
    def legal_actions(self, seat: int) -> Sequence[str] | None:
        """The legal actions of ``seat`` now, or None when the action is free-form."""

    def action_format(self, seat: int) -> str:
        """How to write an action when ``legal_actions`` is None."""
        return "one of the legal actions, written exactly as listed"

    @abstractmethod
    def validate(self, seat: int, action: str) -> str:
        """The canonical form of ``action``, or IllegalAction with the reason."""

    @abstractmethod
    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        """Apply canonical actions of every mover; return this step's rewards, if any."""

    @abstractmethod
    def observe(self, seat: int) -> Observation:
        """Only what ``seat`` may know."""

    def private_info(self, seat: int) -> Any:
        """What ``seat`` knows that some other seat does not (its cards, its values, the
        hands it can see), as JSON data; None in games without hidden information.

        The contract the hidden-information tests check: ``observe(seat)`` is a function of
        ``public_view()`` and ``private_info(seat)`` alone, so it cannot leak anything else.
        """
        return None

    @abstractmethod
    def public_view(self) -> View:
        """What a spectator of the live match may see: no hidden information."""

    @abstractmethod
    def full_view(self) -> View:
        """Everything, for after the end."""

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        """A random well-formed action when ``legal_actions`` is None, chosen from the
        observation alone (so a random bot works over the wire). Free-form games override it."""
        raise NotImplementedError(f"{cls.spec.name} has no free-form actions")

    # ---- the machinery every game shares -----------------------------------------------

    def step(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        """Apply one action per mover, given as {seat: action}; return the step's rewards.

        Validates everything before changing anything, so an IllegalAction leaves the
        state as it was. The history keeps a copy: a caller that reuses its mapping for the
        next step must not rewrite this one.
        """
        if self.is_over:
            raise GameOver(f"{self.spec.name}: the game is over")
        movers = self.to_move()
        if len(actions) != len(movers):
            raise IllegalAction(f"expected actions for seats {list(movers)}, got {sorted(actions)}")
        canonical = dict(actions)
        for seat in movers:
            action = actions.get(seat)
            if action is None:
                raise IllegalAction(f"seat {seat} must act at this step")
            canonical[seat] = self.validate(seat, action)
        rewards = self._apply(canonical)
        if rewards is not None and len(rewards) != self.num_players:
            # Summing a short list would leave the missing seats a silent 0 (a wrong result),
            # and it is the game's fault, never the movers': not an IllegalAction.
            raise GameError(f"{self.spec.name} returned {len(rewards)} rewards for {self.num_players} seats")
        self.history.append(canonical)
        if rewards is not None:
            totals = self._returns
            for seat, reward in enumerate(rewards):
                totals[seat] += reward
        return rewards

    def returns(self) -> tuple[float, ...]:
        """Each seat's total reward so far (the final returns once the game is over)."""
        return tuple(self._returns)

    @property
    def step_count(self) -> int:
        return len(self.history)

    def clone(self) -> Self:
        """An independent copy, for search and enumeration."""
        return copy.deepcopy(self)

    def serialize(self) -> dict[str, Any]:
        """Everything needed to rebuild this state: the game, config, seed and actions."""
        return {
            "game": self.spec.name,
            "config": self.config.to_dict(),
            "seed": self.seed,
            "actions": [{str(seat): action for seat, action in step.items()} for step in self.history],
        }

    @classmethod
    def replay(
        cls,
        actions: Sequence[Mapping[int | str, str]],
        config: GameConfig | Mapping[str, Any] | None = None,
        seed: int = 0,
    ) -> Self:
        """Rebuild a state by applying a recorded action log from the start."""
        state = cls.new(config, seed)
        for step in actions:
            state.step({int(seat): action for seat, action in step.items()})
        return state

    @classmethod
    def deserialize(cls, record: Mapping[str, Any]) -> Self:
        if record.get("game") != cls.spec.name:
            raise GameError(f"record is of game {record.get('game')!r}, not {cls.spec.name!r}")
        return cls.replay(record["actions"], record.get("config"), int(record.get("seed", 0)))
