"""The registry of reference bots, found by spec: ``name:key=value,key=value``.

Built-in bots live in ``bots/reference/`` and register themselves when it is loaded; third-party packages add bots through the
``arena.bots`` entry-point group, each entry naming a ``Bot`` subclass.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import secrets
import typing
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import games
from bots.base import Bot
from games.api import ConfigError, did_you_mean, parse_value
from games.registry import load_plugin

ENTRY_POINT_GROUP = "arena.bots"

_registry: dict[str, type[Bot]] = {}
_loaded = False


class BotSpecError(ConfigError):
    """A bot spec names an unknown bot, a bad option, or a game the bot cannot play."""


@dataclass(frozen=True)
class BotSpec:
    name: str
    options: dict[str, str]

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in self.options.items())


def parse_spec(text: str) -> BotSpec:
    """Split ``name:key=value,key=value`` into a name and raw option strings."""
    name, _, rest = text.strip().partition(":")
    name = name.strip()  # "perfect :" was the unknown bot 'perfect ', where spaces elsewhere are read past
    if not name:
        raise BotSpecError(f"empty bot name in spec {text!r}")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise BotSpecError(f"bot spec {text!r}: option {part!r} is not key=value")
        if key.strip() in options:
            raise BotSpecError(f"bot spec {text!r}: option {key.strip()!r} is given twice")
        options[key.strip()] = value.strip()
    return BotSpec(name, options)


def register(bot: type[Bot]) -> type[Bot]:
    """Class decorator adding a bot; two bots under one name is an error."""
    existing = _registry.get(bot.name)
    if existing is not None and existing is not bot:
        raise BotSpecError(f"two bots are named {bot.name!r}: {existing.__module__} and {bot.__module__}")
    _registry[bot.name] = bot
    return bot


def _load() -> dict[str, type[Bot]]:
    """Import every reference module and entry point once; a bot module imported earlier
    (a test importing its bot directly) has registered itself, but not the others."""
    global _loaded
    if not _loaded:
        import bots.reference

        for module in pkgutil.iter_modules(bots.reference.__path__, "bots.reference."):
            importlib.import_module(module.name)
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            load_plugin(entry, _register_bot, "bot")
        _loaded = True
    return _registry


def _register_bot(loaded: Any) -> None:
    if not (isinstance(loaded, type) and issubclass(loaded, Bot)):
        raise BotSpecError(f"{loaded!r:.100} is not a Bot subclass")
    known = games.names()
    for game in loaded.games or ():  # a typo made a bot that listed and loaded, and could play nothing
        if game not in known:
            raise BotSpecError(f"bot {loaded.name!r} plays {game!r}, which is no game{did_you_mean(game, known)}")
    register(loaded)


def get(name: str) -> type[Bot]:
    registry = _load()
    try:
        return registry[name]
    except KeyError:
        raise BotSpecError(f"unknown bot '{name}'{did_you_mean(name, list(registry))}") from None


def all_bots(game: str | None = None) -> list[type[Bot]]:
    """Every registered bot, or those that can play ``game``, sorted by name."""
    return [bot for name, bot in sorted(_load().items()) if game is None or bot.games is None or game in bot.games]


def option_types(bot: type[Bot]) -> dict[str, tuple[Any, Any]]:
    """Each option's (type, default), read from the bot's ``__init__`` signature."""
    hints = typing.get_type_hints(bot.__init__)
    params = list(inspect.signature(bot.__init__).parameters.values())[3:]
    return {p.name: (hints.get(p.name, str), p.default) for p in params}


def option_values(cls: type[Bot], parsed: BotSpec) -> dict[str, Any]:
    """A spec's options typed for ``cls``, without building the bot: a file that names a bot's
    options (a nightly's ``bot_options``) is checked before hours go into the bot's model."""
    types = option_types(cls)
    kwargs: dict[str, Any] = {}
    for key, raw in parsed.options.items():
        if key not in types:
            known = ", ".join(types) or "none"
            raise BotSpecError(f"bot '{cls.name}' has no option '{key}'{did_you_mean(key, list(types))} (options: {known})")
        try:
            kwargs[key] = parse_value(key, raw, types[key][0])
        except ConfigError as error:  # the message says "config key"; here it is the bot's option
            raise BotSpecError(f"bot '{cls.name}': option {str(error).removeprefix('config key ')}") from None
    return kwargs


def make_bot(spec: str | BotSpec, game: str, seed: int = 0) -> Bot:
    """Build the bot a spec names, for one seat of a match of ``game``."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    cls = get(parsed.name)
    if cls.games is not None and game not in cls.games:
        raise BotSpecError(f"bot '{cls.name}' plays {', '.join(cls.games)}, not {game}")
    bot = cls(game, seed, **option_values(cls, parsed))
    bot.label = str(BotSpec(parsed.name, cls.public_options(parsed.options)))
    return bot


def seat_seed(match_seed: int, seat: int) -> int:
    """The seed of the bot in ``seat``: distinct per seat, fixed by the match seed, and a
    one-way hash of it, since a bot that could read the match seed back could deal the match."""
    digest = hashlib.blake2b(f"{match_seed}/{seat}".encode(), digest_size=8, person=b"arena-seat-seed").digest()
    return int.from_bytes(digest, "big") >> 1


def secret_seed() -> int:
    """The seed of a bot playing through a server, which never tells it the match seed. Not
    made from what the bot is told (its match id, seat, opponents): its opponent is told
    all of that too, and could draw the bot's moves first from the same generator."""
    return secrets.randbits(63)
