"""What a reference bot is: a seeded policy for one match, built from a spec string."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from arena.seats import Move, Turn


class Bot(ABC):
    """A policy for one seat of one match.

    Subclasses set ``name`` (kebab-case), ``description``, and ``games`` (the game names
    they can play, or None for any game), and take their options as keyword arguments
    of ``__init__`` with type annotations and defaults: the registry parses
    ``name:key=value`` specs against those annotations. Randomness comes from ``rng``,
    seeded per bot, never from the global generator.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    games: ClassVar[tuple[str, ...] | None] = None
    showcase: ClassVar[bool] = False
    """The bot to show a newcomer for its games: the strongest or most telling one."""

    def __init__(self, game: str, seed: int = 0) -> None:
        self.game = game
        self.rng = random.Random(seed)
        self.label = self.name

    @classmethod
    def public_options(cls, options: Mapping[str, str]) -> dict[str, str]:
        """The spec's options as the bot's label shows them in match records and logs; a bot
        whose options can hold a secret leaves it out."""
        return dict(options)

    @abstractmethod
    def act(self, turn: Turn) -> str | Move:
        """Choose an action for ``turn``."""

    def action_probabilities(self, turn: Turn) -> dict[str, float] | None:
        """The bot's mixed strategy at this turn, for bots that can state it."""
        return None
