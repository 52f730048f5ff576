"""The game catalog with the bots that can play each game: the text of docs/GAMES.md.

The catalog itself is built by ``games.catalog`` from the game specs; games may not know
about bots, so the section listing them is added here, where both are visible.
"""

from __future__ import annotations

import games
from bots.base import Bot
from bots.registry import all_bots, option_types
from games import catalog
from games.api import Game


def _options(bot: type[Bot]) -> str:
    options = option_types(bot)
    return ", ".join(catalog.code(f"{key}={catalog.value_text(default)}") for key, (_t, default) in options.items()) or "-"


def bots_section(game: type[Game]) -> list[tuple[str, str]]:
    """The "Bots" section of a game's entry: its own bots (the showcase first), then the
    bots that play any game."""
    found = all_bots(game.spec.name)
    ordered = sorted(found, key=lambda bot: (bot.games is None, not bot.showcase, bot.name))
    rows = [
        (
            catalog.code(bot.name) + (" (showcase)" if bot.showcase else ""),
            "any game" if bot.games is None else "this game" if len(bot.games) == 1 else f"{len(bot.games)} games",
            _options(bot),
            catalog.escape(bot.description),
        )
        for bot in ordered
    ]
    body = catalog.table(("bot", "plays", "options (defaults)", "description"), rows)
    return [("Bots", body + "\n\nSeat one with `--seat NAME` or `--seat NAME:key=value,...`.")]


def game_doc(name: str) -> str:
    """One game's catalog entry, bots included; UnknownGame for a name not registered."""
    game = games.get(name)
    return catalog.game_doc(game, bots_section(game))


def catalog_doc() -> str:
    """The whole catalog page, bots included: exactly what docs/GAMES.md must hold."""
    return catalog.catalog_doc(bots_section)
