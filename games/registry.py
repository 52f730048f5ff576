"""The registry of games: built-in modules plus the ``arena.games`` entry points."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from games.api import Game, GameError, did_you_mean

BUILTIN_MODULES = (
    "games.tic_tac_toe",
    "games.connect_four",
    "games.kuhn_poker",
    "games.iterated_prisoners_dilemma",
    "games.mini_hanabi",
    "games.item_negotiation",
)
ENTRY_POINT_GROUP = "arena.games"

_registry: dict[str, type[Game]] = {}


class UnknownGame(GameError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def register(game: type[Game]) -> type[Game]:
    """Add a game class; a second class under the same name is an error, not an override."""
    name = game.spec.name
    existing = _registry.get(name)
    if existing is not None and existing is not game:
        raise GameError(f"two games are named {name!r}: {existing.__module__} and {game.__module__}")
    _registry[name] = game
    return game


def _load() -> dict[str, type[Game]]:
    if not _registry:
        for module_name in BUILTIN_MODULES:
            module = importlib.import_module(module_name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Game) and value.__module__ == module_name:
                    register(value)
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            loaded = entry.load()
            if not (isinstance(loaded, type) and issubclass(loaded, Game)):
                raise GameError(f"entry point {entry.name!r} in {ENTRY_POINT_GROUP} is not a Game subclass")
            register(loaded)
    return _registry


def get(name: str) -> type[Game]:
    """The game class registered under ``name``, or UnknownGame naming the closest one."""
    registry = _load()
    try:
        return registry[name]
    except KeyError:
        raise UnknownGame(f"unknown game '{name}'{did_you_mean(name, list(registry))}") from None


def all_games() -> list[type[Game]]:
    """Every registered game, sorted by name."""
    registry = _load()
    return [registry[name] for name in sorted(registry)]


def names() -> list[str]:
    return sorted(_load())
