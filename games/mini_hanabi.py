"""Mini Hanabi: a small cooperative Hanabi, as in the "Mini Hanabi" of the MARS paper.

Two players build fireworks together while seeing each other's hand but not their own;
the only way to learn one's own cards is the partner's hints, paid for with a scarce
token. It tests cooperation under hidden information: giving hints a partner can act on
and reading the hints one is given. The rules are those of ``hanabi`` (games.hanabi_rules)
with a deck of two colours and three ranks, hands of two and a single life, so a match
is short and every mistake counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.api import GameSpec
from games.hanabi_rules import HanabiRules, HanabiRulesConfig, copies, deck_size, rules_text

__all__ = ["MiniHanabi", "MiniHanabiConfig", "copies", "deck_size"]


@dataclass(frozen=True)
class MiniHanabiConfig(HanabiRulesConfig):
    colours: int = 2
    ranks: int = 3
    hand_size: int = 2
    hints: int = 3
    lives: int = 1


_DEFAULT = MiniHanabiConfig()


class MiniHanabi(HanabiRules):
    spec = GameSpec(
        name="mini-hanabi",
        title="Mini Hanabi",
        category="cooperative",
        description="A small cooperative Hanabi: see your partner's cards, not your own; hint, play, discard.",
        rules=rules_text(
            "Mini Hanabi, a small version of the cooperative card game Hanabi, for two players (seat 0 and seat 1).",
            _DEFAULT,
            f"{_DEFAULT.hand_size} cards",
        ),
        default_config=_DEFAULT,
        chance=True,
        hidden_information=True,
        teams="all",
    )
    Config = MiniHanabiConfig

    config: MiniHanabiConfig
