"""The iterated prisoner's dilemma: each round both players cooperate or defect at once.

The classic social dilemma (Axelrod's tournaments): defecting pays more in any one
round, yet two players who keep cooperating earn more than two who keep defecting. It
tests whether an agent can build and keep trust, punish, forgive, and (with cheap talk
on) say what it means and mean what it says. Each round pays at once, so learners see
per-round rewards. With ``cheap_talk`` every round opens with a simultaneous message
step; messages bind nobody.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View

COOPERATE = "cooperate"
DEFECT = "defect"
MOVES: tuple[str, ...] = (COOPERATE, DEFECT)
_CANONICAL = {"cooperate": COOPERATE, "c": COOPERATE, "defect": DEFECT, "d": DEFECT}
TALK = "talk"
MOVE = "move"
OVER = "over"
_BOTH = (0, 1)
SAMPLE_MESSAGES: tuple[str, ...] = (
    "Let's both cooperate.",
    "I will cooperate if you do.",
    "Cooperate and we both win.",
    "Don't cross me.",
    "I'm thinking it over.",
    "",
)
"""What a random player says in a talk step."""


@dataclass(frozen=True)
class IteratedPrisonersDilemmaConfig(GameConfig):
    rounds: int = 10
    temptation: float = 5.0
    reward: float = 3.0
    punishment: float = 1.0
    sucker: float = 0.0
    cheap_talk: bool = False
    message_chars: int = 200

    def check(self) -> None:
        super().check()
        if self.rounds < 1:
            raise ConfigError(f"config key 'rounds' must be at least 1, got {self.rounds}")
        if self.message_chars < 1:
            raise ConfigError(f"config key 'message_chars' must be at least 1, got {self.message_chars}")
        order = (("temptation", "reward"), ("reward", "punishment"), ("punishment", "sucker"))
        for high, low in order:
            if not getattr(self, high) > getattr(self, low):
                raise ConfigError(
                    f"config key '{high}' must be greater than '{low}' (a dilemma needs temptation > reward > "
                    f"punishment > sucker), got {high}={getattr(self, high):g}, {low}={getattr(self, low):g}"
                )
        if not 2 * self.reward > self.temptation + self.sucker:
            raise ConfigError(
                f"config key 'reward' must satisfy 2*reward > temptation + sucker (else taking turns to exploit "
                f"each other beats cooperating), got reward={self.reward:g}, temptation={self.temptation:g}, "
                f"sucker={self.sucker:g}"
            )

    def return_bounds(self) -> tuple[float, float]:
        return (self.rounds * self.sucker, self.rounds * self.temptation)

    def action_space(self) -> tuple[str, ...] | None:
        return None if self.cheap_talk else MOVES

    def payoffs(self) -> dict[tuple[str, str], tuple[float, float]]:
        """Each pair of moves (seat 0's, seat 1's) and what it pays (seat 0, seat 1)."""
        t, r, p, s = float(self.temptation), float(self.reward), float(self.punishment), float(self.sucker)
        return {
            (COOPERATE, COOPERATE): (r, r),
            (COOPERATE, DEFECT): (s, t),
            (DEFECT, COOPERATE): (t, s),
            (DEFECT, DEFECT): (p, p),
        }


RULES = """\
Iterated prisoner's dilemma between two players (seat 0 and seat 1), played over a fixed \
number of rounds (10 by default; both players know how many). Each round both players \
choose at the same time, without seeing the other's choice: cooperate or defect. Each \
round pays at once (default payoffs, yours / theirs): both cooperate 3 / 3; you cooperate \
and they defect 0 / 5; you defect and they cooperate 5 / 0; both defect 1 / 1. Defecting \
always pays more in a single round, but two players who keep cooperating earn far more \
than two who keep defecting. Your goal is the highest total score of your own; it is not \
a zero-sum game. After each round both moves are shown to both players. Answer \
"cooperate" or "defect" (or just "c" or "d"). With cheap talk on, each round first has a \
talk step: both players send a message at the same time (any text up to the character \
limit, possibly empty); both messages are shown before the moves. Messages bind nobody. \
The game ends after the last round; the total of your round payoffs is your return."""


def _quoted(message: str) -> str:
    return f'"{message}"' if message else "nothing"


class IteratedPrisonersDilemma(Game):
    spec = GameSpec(
        name="iterated-prisoners-dilemma",
        title="Iterated prisoner's dilemma",
        category="social_dilemma",
        description="Cooperate or defect, round after round; optional cheap talk before each move.",
        rules=RULES,
        default_config=IteratedPrisonersDilemmaConfig(),
        simultaneous=True,
    )
    Config = IteratedPrisonersDilemmaConfig

    config: IteratedPrisonersDilemmaConfig
    round: int
    """Rounds completed so far (0-based index of the current round while live)."""
    phase: str
    moves: list[tuple[str, str]]
    """(seat 0's move, seat 1's move) of each completed round."""
    messages: list[tuple[int, int, str]]
    """(round, 1-based; seat; text) of every message sent, in order."""
    _payoffs: dict[tuple[str, str], tuple[float, float]]

    def _setup(self) -> None:
        self.round = 0
        self.phase = TALK if self.config.cheap_talk else MOVE
        self.moves = []
        self.messages = []
        self._payoffs = self.config.payoffs()

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _BOTH

    def legal_actions(self, seat: int) -> Sequence[str] | None:
        if self.is_over:
            return ()
        return None if self.phase == TALK else MOVES

    def action_format(self, seat: int) -> str:
        if self.phase == TALK:
            return (
                f"a message to the other player: any text up to {self.config.message_chars} characters "
                "(it may be empty); it binds nobody"
            )
        return "cooperate or defect"

    def validate(self, seat: int, action: str) -> str:
        if seat not in _BOTH:
            raise IllegalAction(f"there is no seat {seat}; the seats are 0 and 1")
        if self.is_over:
            raise IllegalAction("the game is over")
        if self.phase == TALK:
            text = " ".join(action.split())
            if len(text) > self.config.message_chars:
                raise IllegalAction(
                    f"your message has {len(text)} characters; the limit is {self.config.message_chars}, so shorten it"
                )
            return text
        move = _CANONICAL.get(action)
        if move is None:
            move = _CANONICAL.get(action.strip().lower())
            if move is None:
                raise IllegalAction(f"'{action}' is not a move; answer cooperate or defect")
        return move

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        if self.phase == TALK:
            number = self.round + 1
            self.messages.append((number, 0, actions[0]))
            self.messages.append((number, 1, actions[1]))
            self.phase = MOVE
            return None
        pair = (actions[0], actions[1])
        self.moves.append(pair)
        self.round += 1
        if self.round == self.config.rounds:
            self.is_over = True
            self.phase = OVER
        elif self.config.cheap_talk:
            self.phase = TALK
        return self._payoffs[pair]

    # ---- rendering ---------------------------------------------------------------------

    def _scores(self) -> tuple[float, float]:
        return self._returns[0], self._returns[1]

    def _current_round(self) -> int:
        return min(self.round + 1, self.config.rounds)

    def _payoff_lines(self, seat: int) -> list[str]:
        lines = ["Payoffs per round (you / them):"]
        for mine, theirs in ((COOPERATE, COOPERATE), (COOPERATE, DEFECT), (DEFECT, COOPERATE), (DEFECT, DEFECT)):
            pair = (mine, theirs) if seat == 0 else (theirs, mine)
            paid = self._payoffs[pair]
            lines.append(f"  you {mine}, they {theirs}: {paid[seat]:g} / {paid[1 - seat]:g}")
        return lines

    def _history_lines(self, seat: int) -> list[str]:
        said: dict[int, dict[int, str]] = {}
        for number, speaker, text in self.messages:
            said.setdefault(number, {})[speaker] = text
        lines: list[str] = []
        for number in range(1, self.round + 2):
            if number in said:
                lines.append(
                    f"  round {number}: you said {_quoted(said[number][seat])}; they said {_quoted(said[number][1 - seat])}"
                )
            if number <= len(self.moves):
                pair = self.moves[number - 1]
                paid = self._payoffs[pair]
                lines.append(
                    f"  round {number}: you {pair[seat]}, they {pair[1 - seat]} (you +{paid[seat]:g}, they +{paid[1 - seat]:g})"
                )
        return lines or ["  (nothing yet)"]

    def _prompt(self) -> str:
        if self.phase == TALK:
            return (
                f"Now: talk step of round {self._current_round()}. Send the other player a message "
                f"(up to {self.config.message_chars} characters; it may be empty). You will see theirs before you move."
            )
        if self.phase == MOVE:
            return f"Now: move of round {self._current_round()}. Answer cooperate or defect."
        return "The game is over."

    def observe(self, seat: int) -> Observation:
        scores = self._scores()
        lines = [
            f"Iterated prisoner's dilemma, round {self._current_round()} of {self.config.rounds}. You are seat {seat}.",
            *self._payoff_lines(seat),
            f"Score so far: you {scores[seat]:g}, them {scores[1 - seat]:g}.",
            "History:",
            *self._history_lines(seat),
            self._prompt(),
        ]
        data: dict[str, Any] = {
            "seat": seat,
            "round": self._current_round(),
            "rounds": self.config.rounds,
            "phase": self.phase,
            "my_moves": [pair[seat] for pair in self.moves],
            "their_moves": [pair[1 - seat] for pair in self.moves],
            "my_score": scores[seat],
            "their_score": scores[1 - seat],
            "messages": [{"round": number, "seat": speaker, "text": text} for number, speaker, text in self.messages],
            "payoffs": {
                "temptation": float(self.config.temptation),
                "reward": float(self.config.reward),
                "punishment": float(self.config.punishment),
                "sucker": float(self.config.sucker),
            },
        }
        return Observation(text="\n".join(lines), data=data)

    def _status(self) -> str:
        scores = self._scores()
        if self.is_over:
            head = f"Game over after {self.config.rounds} rounds."
        else:
            head = f"Round {self._current_round()} of {self.config.rounds}, {self.phase} step."
        return f"{head} Score: seat 0 {scores[0]:g}, seat 1 {scores[1]:g}."

    def public_view(self) -> View:
        scores = self._scores()
        rows = [["C" if pair[seat] == COOPERATE else "D" for pair in self.moves] for seat in _BOTH]
        blocks = [
            render.facts(
                {
                    "round": f"{self._current_round()} of {self.config.rounds}",
                    "step": self.phase,
                    "seat 0": f"{scores[0]:g}",
                    "seat 1": f"{scores[1]:g}",
                }
            ),
            render.grid(
                rows,
                title="moves (C cooperate, D defect)",
                row_labels=("seat 0", "seat 1"),
                col_labels=[str(n) for n in range(1, len(self.moves) + 1)],
            ),
        ]
        if self.config.cheap_talk:
            chat = [(speaker, f"(round {n}) {text}") for n, speaker, text in self.messages if text]
            blocks.append(render.chat(chat, title="talk"))
        return render.view(self._status(), *blocks)

    def full_view(self) -> View:
        return self.public_view()

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        if observation.data["phase"] == TALK:
            return rng.choice(SAMPLE_MESSAGES)
        return rng.choice(MOVES)
