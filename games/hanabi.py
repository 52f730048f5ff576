"""Hanabi: the cooperative card game at full size, for two to five players.

The benchmark of cooperation under hidden information (Bard et al., "The Hanabi
Challenge", 2020): each player sees every hand but its own, and hints, paid for with
eight tokens, are the only channel. Five colours of ranks 1 to 5 make a deck of 50 and a
perfect score of 25. Every part of the deck and the table is configurable; the rules are
shared with ``mini-hanabi`` in games.hanabi_rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import GameSpec
from games.hanabi_rules import HanabiRules, HanabiRulesConfig, rules_text

SMALL_TABLE_HAND = 5
"""Cards in a hand with two or three players, as in the published game."""
LARGE_TABLE_HAND = 4
"""Cards in a hand with four or five players."""


@dataclass(frozen=True)
class HanabiConfig(HanabiRulesConfig):
    """``hand_size`` 0 (the default) deals the published game's hand for the player count."""

    colours: int = 5
    ranks: int = 5
    hand_size: int = 0
    hints: int = 8
    lives: int = 3

    def standard_hand_size(self) -> int:
        return SMALL_TABLE_HAND if self.players <= 3 else LARGE_TABLE_HAND


_DEFAULT = HanabiConfig()


class Hanabi(HanabiRules):
    spec = GameSpec(
        name="hanabi",
        title="Hanabi",
        category="cooperative",
        description="The cooperative card game for 2 to 5 players: see every hand but your own; hint, play, discard.",
        rules=rules_text(
            "Hanabi, the cooperative card game, for 2 to 5 players (seats 0, 1, ...; 2 by default).",
            _DEFAULT,
            f"{SMALL_TABLE_HAND} cards with two or three players, {LARGE_TABLE_HAND} with four or five",
        ),
        default_config=_DEFAULT,
        min_players=2,
        max_players=5,
        chance=True,
        hidden_information=True,
        teams="all",
    )
    Config = HanabiConfig

    config: HanabiConfig
