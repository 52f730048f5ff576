"""The Lewis signalling game: a sender sees the state of the world, the receiver acts.

David Lewis (Convention, 1969) used it to show how meaning can arise from coordination
alone: the signals mean nothing at the start, and a pair that keeps playing can settle on
a convention mapping states to signals to acts. Both players get 1 when the act matches
the state, so their interests are identical; what it tests is inventing a code with a
partner and learning the partner's code from the record. Each round draws a new state
(one chance event per round) and reveals it once the receiver has acted.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View, first_shown, not_shown

SENDER, RECEIVER = 0, 1
SIGNAL, ACT, OVER = "signal", "act", "over"
LETTERS = string.ascii_lowercase
"""Signal names: a signal is a letter, sent as ``signal <letter>``."""
MAX_STATES = 26


@dataclass(frozen=True)
class LewisSignallingConfig(GameConfig):
    states: int = 3
    signals: int = 3
    rounds: int = 10

    def check(self) -> None:
        super().check()
        if not 2 <= self.states <= MAX_STATES:
            raise ConfigError(f"config key 'states' must be 2 to {MAX_STATES}, got {self.states}")
        if not 2 <= self.signals <= len(LETTERS):
            raise ConfigError(f"config key 'signals' must be 2 to {len(LETTERS)}, got {self.signals}")
        self.at_least("rounds", 1)
        self.bound_history("rounds")

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.rounds))

    def signal_actions(self) -> tuple[str, ...]:
        return tuple(f"signal {letter}" for letter in LETTERS[: self.signals])

    def act_actions(self) -> tuple[str, ...]:
        return tuple(f"act {n}" for n in range(1, self.states + 1))

    def action_space(self) -> tuple[str, ...]:
        return self.signal_actions() + self.act_actions()


RULES = """\
The Lewis signalling game, for two players on the same team: seat 0 is the sender, seat \
1 the receiver. It lasts a fixed number of rounds (10 by default); both players know how \
many.

Each round the world is in one of several states (3 by default: state 1, state 2, \
state 3), drawn at random, every state equally likely, independently each round. Only \
the sender sees the state. The sender then sends one signal (3 by default: signal a, \
signal b, signal c); signals have no meaning given in advance, and nothing else can be \
said. The receiver sees the signal, not the state, and chooses an act, one per state \
(act 1, act 2, act 3 by default). If the act's number equals the state's number, both players get \
1 point for the round; otherwise both get 0.

After each round both players are shown the state, the signal and the act, so the pair \
can settle on a convention (which signal stands for which state) and keep to it. Your \
return is the number of rounds won, the same for both players.

Answer as the sender with "signal <letter>" (e.g. "signal a"; "a" alone is accepted) \
and as the receiver with "act <number>" (e.g. "act 2"; "2" alone is accepted)."""


class LewisSignalling(Game):
    spec = GameSpec(
        name="lewis-signalling",
        title="Lewis signalling game",
        category="cooperative",
        description="A sender sees the state and sends a meaningless signal; the receiver acts; both win on a match.",
        rules=RULES,
        default_config=LewisSignallingConfig(),
        chance=True,
        hidden_information=True,
        teams="all",
    )
    Config = LewisSignallingConfig

    config: LewisSignallingConfig
    state: int
    """This round's state, from 0; the sender's secret until the round ends."""
    signal: str
    """The letter of the signal sent this round; empty until it is sent."""
    phase: str
    records: list[tuple[int, str, int]]
    """(state from 0, signal letter, act from 0) of each finished round."""
    _signals: tuple[str, ...]
    _acts: tuple[str, ...]

    def _setup(self) -> None:
        self._signals = self.config.signal_actions()
        self._acts = self.config.act_actions()
        self.records = []
        self._new_round()

    def _new_round(self) -> None:
        self.state = self.chance().randrange(self.config.states)
        self.signal = ""
        self.phase = SIGNAL

    def to_move(self) -> tuple[int, ...]:
        if self.phase == SIGNAL:
            return (SENDER,)
        return (RECEIVER,) if self.phase == ACT else ()

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.phase == SIGNAL and seat == SENDER:
            return self._signals
        if self.phase == ACT and seat == RECEIVER:
            return self._acts
        return ()

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        words = action.strip().lower().split()
        if self.phase == SIGNAL:
            if seat != SENDER:
                raise IllegalAction("it is the sender's (seat 0's) turn to signal; wait for the signal")
            canonical = f"signal {_argument(words, 'signal')}"
            if canonical not in self._signals:
                raise IllegalAction(f"'{action}' is not a signal; send one of: {', '.join(self._signals)}")
            return canonical
        if seat != RECEIVER:
            raise IllegalAction("it is the receiver's (seat 1's) turn to act; your signal is sent")
        canonical = f"act {_argument(words, 'act').lstrip('0')}"
        if canonical not in self._acts:
            raise IllegalAction(f"'{action}' is not an act; choose one of: {', '.join(self._acts)}")
        return canonical

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        if self.phase == SIGNAL:
            self.signal = actions[SENDER].split()[1]
            self.phase = ACT
            return None
        act = int(actions[RECEIVER].split()[1]) - 1
        matched = act == self.state
        self.records.append((self.state, self.signal, act))
        if len(self.records) == self.config.rounds:
            self.phase = OVER
            self.is_over = True
        else:
            self._new_round()
        return (1.0, 1.0) if matched else None

    def private_info(self, seat: int) -> int | None:
        """The sender knows this round's state (from 1) while the round is live."""
        return self.state + 1 if seat == SENDER and not self.is_over else None

    # ---- rendering ---------------------------------------------------------------------

    def _score(self) -> int:
        return sum(state == act for state, _, act in self.records)

    def _round(self) -> int:
        return min(len(self.records) + 1, self.config.rounds)

    def _history(self) -> list[dict[str, Any]]:
        return [
            {"round": n, "state": state + 1, "signal": signal, "act": act + 1, "success": state == act}
            for n, (state, signal, act) in enumerate(self.records, start=1)
        ]

    def _shown(self) -> tuple[int, list[dict[str, Any]]]:
        """The index of the first round shown one by one (``HISTORY_SHOWN``), and the rounds from it on."""
        first = first_shown(len(self.records))
        return first, self._history()[first:]

    def _history_lines(self) -> list[str]:
        first, shown = self._shown()
        lines = [
            f"  round {h['round']}: state {h['state']}, signal {h['signal']}, act {h['act']}: "
            + ("a match, +1 each" if h["success"] else "no match, 0")
            for h in shown
        ]
        if first:
            won = sum(state == act for state, _, act in self.records[:first])
            lines.insert(0, f"  {not_shown(first)}: {won} won")
        return lines or ["  (no rounds finished yet)"]

    def _prompt(self, seat: int) -> str:
        if self.is_over:
            return f"The game is over: {self._score()} of {self.config.rounds} rounds won."
        if self.phase == SIGNAL:
            if seat == SENDER:
                return f"This round's state is state {self.state + 1}. Send a signal: one of {', '.join(self._signals)}."
            return "Waiting for the sender's signal."
        if seat == RECEIVER:
            return f"The sender sent signal {self.signal}. Choose an act: one of {', '.join(self._acts)}."
        return f"This round's state is state {self.state + 1}; you sent signal {self.signal}. Waiting for the receiver's act."

    def observe(self, seat: int) -> Observation:
        role = "sender" if seat == SENDER else "receiver"
        sees = "you see the state each round" if seat == SENDER else "you see only the signal"
        lines = [
            f"You are seat {seat}, the {role}, in the Lewis signalling game ({sees}). "
            f"Round {self._round()} of {self.config.rounds}.",
            f"States and acts: 1 to {self.config.states}; signals: {', '.join(LETTERS[: self.config.signals])}. "
            "Both players score 1 when the act's number equals the state's.",
            f"Rounds won so far: {self._score()} of {len(self.records)}.",
            "History (the state is revealed after each round):",
            *self._history_lines(),
            self._prompt(seat),
        ]
        data: dict[str, Any] = {
            "seat": seat,
            "role": role,
            "round": self._round(),
            "rounds": self.config.rounds,
            "phase": self.phase,
            "states": self.config.states,
            "signals": list(LETTERS[: self.config.signals]),
            "state": self.private_info(seat),
            "signal": self.signal or None,
            "history": self._history(),
            "score": self._score(),
        }
        return Observation(text="\n".join(lines), data=data)

    def _view(self, show_state: bool) -> View:
        """The latest ``HISTORY_SHOWN`` rounds, as the players' text shows them."""
        first, shown = self._shown()
        rows = [[str(h["state"]), h["signal"], str(h["act"]), "match" if h["success"] else "miss"] for h in shown]
        current = {
            "round": f"{self._round()} of {self.config.rounds}",
            "rounds won": self._score(),
            "to move": {SIGNAL: "sender (seat 0)", ACT: "receiver (seat 1)", OVER: "nobody: game over"}[self.phase],
        }
        if not self.is_over:
            current["state"] = f"state {self.state + 1}" if show_state else "hidden"
            current["signal"] = self.signal or "not yet sent"
        summary = f"Round {self._round()} of {self.config.rounds}; {self._score()} won of {len(self.records)} played."
        return render.view(
            summary,
            render.facts(current),
            render.grid(
                rows,
                title="rounds" + (f"; rounds before {first + 1} not shown" if first else ""),
                row_labels=[str(h["round"]) for h in shown],
                col_labels=["state", "signal", "act", "result"],
            ),
        )

    def public_view(self) -> View:
        return self._view(show_state=False)

    def full_view(self) -> View:
        return self._view(show_state=True)


def _argument(words: list[str], verb: str) -> str:
    """What ``<verb> <argument>`` or a bare ``<argument>`` names; empty for anything else."""
    if len(words) == 2 and words[0] == verb:
        return words[1]
    return words[0] if len(words) == 1 else ""
