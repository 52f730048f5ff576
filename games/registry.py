"""The registry of games: every module of the ``games`` package plus the ``arena.games`` entry points."""

from __future__ import annotations

import importlib
import inspect
import logging
import math
import pkgutil
import re
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from games.api import Game, GameConfig, GameError, did_you_mean

ENTRY_POINT_GROUP = "arena.games"

_registry: dict[str, type[Game]] = {}
_broken: dict[str, str] = {}  # entry point name -> why its game is missing
_loaded = False
log = logging.getLogger(__name__)


class UnknownGame(GameError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


NAME_RULE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A game's name: lowercase words joined by dashes, as every command, URL and config file
writes it without quoting (a plugin named "QA Bad Name!" had to be quoted everywhere)."""
MAX_GAME_NAME_CHARS = 40


def register(game: type[Game]) -> type[Game]:
    """Add a game class; a second class under the same name is an error, not an override."""
    name = game.spec.name
    if not (isinstance(name, str) and NAME_RULE.fullmatch(name) and len(name) <= MAX_GAME_NAME_CHARS):
        raise GameError(
            f"game name {name!r:.60} ({game.__module__}.{game.__qualname__}): a name is lowercase letters and"
            f" digits, words joined by single dashes, at most {MAX_GAME_NAME_CHARS} characters (e.g. 'guess-the-number')"
        )
    _check_config(game)
    existing = _registry.get(name)
    if existing is not None and existing is not game:
        raise GameError(f"two games are named {name!r}: {existing.__module__} and {game.__module__}")
    _registry[name] = game
    return game


def _check_config(game: type[Game]) -> None:
    """A plugin's mistakes that would otherwise surface mid-use: ``new`` parses any config
    (even the empty one the CLI sends) with ``Config``, and overrides start from Config()'s
    defaults, so a spec whose default config is anything else is silently dropped."""
    config = getattr(game, "Config", None)
    where = f"game {game.spec.name!r} ({game.__module__}.{game.__qualname__})"
    if not (isinstance(config, type) and issubclass(config, GameConfig)):
        raise GameError(f"{where} has no Config: set it to the game's GameConfig subclass")
    default = game.spec.default_config
    if type(default) is not config:
        raise GameError(f"{where}: spec.default_config is a {type(default).__name__}, not its Config {config.__name__}")
    plain = config().to_dict()
    differs = [key for key, value in default.to_dict().items() if plain[key] != value]
    if differs:
        raise GameError(
            f"{where}: spec.default_config differs from Config() in {', '.join(differs)}; "
            "put the defaults on the Config fields and use Config() as the spec's default"
        )
    try:
        low, high = default.return_bounds()
    except NotImplementedError:
        raise GameError(f"{where}: its Config does not define return_bounds()") from None
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise GameError(f"{where}: return_bounds() must give two finite numbers, the least first; got {(low, high)}")


def _is_playable(value: object) -> bool:
    """A concrete Game class with a spec of its own (shared bases have none)."""
    return isinstance(value, type) and issubclass(value, Game) and "spec" in vars(value) and not inspect.isabstract(value)


def _load() -> dict[str, type[Game]]:
    """Import every module of the package and every entry point, once; a game registered
    by hand before that does not stop the others from loading."""
    global _loaded
    if not _loaded:
        import games

        for info in pkgutil.iter_modules(games.__path__, "games."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if _is_playable(value) and value.__module__ == info.name:
                    register(value)
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            _load_plugin(entry)
        _loaded = True
    return _registry


def load_plugin(entry: EntryPoint, accept: Callable[[Any], None], kind: str) -> str | None:
    """Hand what one plugin's entry point names to ``accept`` (which registers it, or raises);
    None, or why it failed, said once in the log: a package broken by an upgrade must not stop
    a server, or every command, from offering the other games and bots."""
    try:
        accept(entry.load())
    except Exception as error:
        why = f"{kind} plugin {entry.name!r} ({entry.value}) failed to load: {type(error).__name__}: {error}"
        log.warning("%s; it is left out", why)
        return why
    return None


def _load_plugin(entry: EntryPoint) -> None:
    why = load_plugin(entry, _register_playable, "game")
    if why is not None:
        _broken[entry.name] = why


def _register_playable(loaded: Any) -> None:
    if not _is_playable(loaded):
        raise GameError(f"{loaded!r:.100} is not a concrete Game subclass with a spec")
    register(loaded)


def get(name: str) -> type[Game]:
    """The game class registered under ``name``, or UnknownGame naming the closest one."""
    registry = _load()
    try:
        return registry[name]
    except KeyError:
        if name in _broken:
            raise UnknownGame(f"unknown game '{name}': {_broken[name]}") from None
        raise UnknownGame(f"unknown game '{name}'{did_you_mean(name, list(registry))}") from None


def all_games() -> list[type[Game]]:
    """Every registered game, sorted by name."""
    registry = _load()
    return [registry[name] for name in sorted(registry)]


def names() -> list[str]:
    return sorted(_load())
