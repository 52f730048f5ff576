"""Pure coordination: every player picks an option at once, and all win only if all agree.

Schelling's focal points (The Strategy of Conflict, 1960): with no way to talk and no
option better than another, people still match far above chance by picking what stands
out (heads over tails, the first word of a list). It tests whether an agent can find the
choice others will find too, and, over several rounds, converge on the group's habit.
Payoff rule: 1 to everyone in a round where all choices are equal, else 0 to everyone.
Rounds, the optional talk step and the record are the shared machinery of games.iterated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from games.api import ConfigError, GameSpec
from games.iterated import Choices, IteratedConfig, IteratedGame, normalise, or_list

MAX_PLAYERS = 8
MAX_OPTIONS = 26


def _is_option(text: str) -> bool:
    return bool(text) and text == normalise(text) and text.isascii() and text.isprintable()


@dataclass(frozen=True)
class CoordinationConfig(IteratedConfig):
    rounds: int = 1
    options: tuple[str, ...] = ("heads", "tails")

    def check(self) -> None:
        super().check()
        if not 2 <= len(self.options) <= MAX_OPTIONS:
            raise ConfigError(f"config key 'options' must list 2 to {MAX_OPTIONS} options, got {len(self.options)}")
        self.bound_names("options", "an option")
        for option in self.options:
            if not _is_option(option):
                # printable ASCII: an escape sequence, a bidi override and a look-alike twin ('аccept' with a
                # Cyrillic а beside 'accept') passed as lower-case words (found by a QA helper)
                suggestion = f"; write {normalise(option)!r}" if _is_option(normalise(option)) else ""
                raise ConfigError(
                    "config key 'options' must hold lower-case words of printable ASCII, single-spaced,"
                    f" got {option!r}{suggestion}"
                )
        if len(set(self.options)) != len(self.options):
            raise ConfigError(f"config key 'options' lists an option twice: {', '.join(self.options)}")

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.rounds))

    def move_space(self) -> tuple[str, ...]:
        return self.options


RULES = """\
Pure coordination (a focal-point game) for 2 to 8 players (2 by default), all on the same \
team. Each round every player chooses one option from the same list (by default "heads" \
and "tails"), all at the same time, without seeing the others' choices. If every player \
chose the same option, everyone scores 1 for the round; otherwise everyone scores 0. No \
option is worth more than another: the only goal is to choose what the others choose, so \
think about which option stands out to everyone.

The game lasts a fixed number of rounds (1 by default). After each round every player's \
choice is shown to all, so later rounds can follow what the group did. Your return is \
the number of rounds in which everyone matched, the same for every player.

Answer with one option as listed (case does not matter; an unambiguous beginning such as \
"h" for "heads" is accepted too). With cheap talk on (off by default), each round first \
has a talk step: every player sends a message at the same time (any text up to the \
character limit, possibly empty), shown to all before the choices. Messages bind nobody."""


def _matched(joint: Sequence[str]) -> bool:
    return len(set(joint)) == 1


class Coordination(IteratedGame):
    spec = GameSpec(
        name="coordination",
        title="Pure coordination",
        category="cooperative",
        description="Everyone picks an option at once; all score only if all pick the same: find the focal point.",
        rules=RULES,
        default_config=CoordinationConfig(),
        min_players=2,
        max_players=MAX_PLAYERS,
        simultaneous=True,
        teams="all",
    )
    Config = CoordinationConfig
    config: CoordinationConfig
    SAMPLE_MESSAGES = ("Let's all pick the first option.", "I'll stick with what most chose last time.", "")

    _options: Choices
    _win: tuple[float, ...]
    _miss: tuple[float, ...]

    def _prepare(self) -> None:
        self._options = Choices.words(self.config.options)
        self._win = (1.0,) * self.num_players
        self._miss = (0.0,) * self.num_players

    def _choices(self, seat: int) -> Choices:
        return self._options

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        return self._win if _matched(joint) else self._miss

    # ---- rendering ---------------------------------------------------------------------

    def _score(self) -> int:
        return sum(map(_matched, self.moves))

    def _situation_lines(self, seat: int) -> list[str]:
        return [
            f"Options: {', '.join(self.config.options)}. Everyone scores 1 for a round only if all "
            f"{self.num_players} players choose the same option; choices are made at the same time.",
            f"Rounds in which everyone matched: {self._score()} of {len(self.moves)}.",
        ]

    def _describe(self, seat: int, index: int) -> str:
        joint = self.moves[index]
        chosen = ", ".join(f"{self._name(seat, s)} {joint[s]}" for s in self._viewer_first(seat))
        return f"{chosen}: {'everyone matched' if _matched(joint) else 'no match'}"

    def _stage_prompt(self, seat: int) -> str:
        return f"Now: choice of round {self.current_round}. Answer {or_list(self.config.options)}."

    def _cell(self, seat: int, index: int) -> str:
        return self.moves[index][seat]

    def _grid_title(self) -> str:
        return "choices"

    def _end_text(self) -> str:
        return f"Game over: everyone matched in {self._score()} of {self.round} round(s)."

    def _game_data(self, seat: int) -> dict[str, Any]:
        return {"options": list(self.config.options), "matched": [_matched(joint) for joint in self.moves]}

    def _facts(self) -> dict[str, Any]:
        return {"matched": f"{self._score()} of {len(self.moves)}"}
