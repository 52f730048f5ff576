"""Guess the number: the worked example of docs/PLUGINS.md, a game and a bot in one module.

Seat 0 chooses a secret number from 1 to ``high``; seat 1 has ``tries`` guesses to find it,
each answered "higher" or "lower". The guesser scores +1 if it finds the number, else -1
(zero-sum). It shows each part of the game API once: a config with checked options, hidden
information (the secret) that only one seat and the final view may show, validation into
a canonical form, rewards, and the text and data of an observation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.seats import Turn
from bots.base import Bot
from games import render
from games.api import Game, GameConfig, GameSpec, IllegalAction, Observation, View, read_number

CHOOSER, GUESSER = 0, 1


@dataclass(frozen=True)
class GuessConfig(GameConfig):
    high: int = 20
    tries: int = 5

    def check(self) -> None:
        super().check()
        self.at_least("high", 2)
        self.at_most("high", 1000)  # an action space of thousands of words is no game for a language model
        self.at_least("tries", 1)
        self.at_most("tries", 20)

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        numbers = range(1, self.high + 1)
        return tuple(f"choose {n}" for n in numbers) + tuple(f"guess {n}" for n in numbers)


RULES = """\
Guess the number, for two players. Seat 0 chooses a secret number from 1 to 20 (by default) \
by answering "choose <n>". Seat 1 then has 5 guesses (by default) to find it, answering \
"guess <n>"; each wrong guess is answered "higher" or "lower". Seat 1 scores +1 if it finds \
the number and seat 0 -1; if no guess finds it, seat 0 scores +1 and seat 1 -1."""


class GuessTheNumber(Game):
    spec = GameSpec(
        name="guess-the-number",
        title="Guess the number",
        category="competitive",
        description="One seat hides a number, the other finds it by halving the range.",
        rules=RULES,
        default_config=GuessConfig(),
        hidden_information=True,
        zero_sum=True,
    )
    Config = GuessConfig

    config: GuessConfig
    secret: int | None
    guesses: list[tuple[int, str]]  # each guess and its answer: "higher", "lower" or "found"

    def _setup(self) -> None:
        self.secret = None
        self.guesses = []

    def to_move(self) -> tuple[int, ...]:
        if self.is_over:
            return ()
        return (CHOOSER,) if self.secret is None else (GUESSER,)

    def legal_actions(self, seat: int) -> Sequence[str]:
        if seat not in self.to_move():
            return ()
        verb = "choose" if seat == CHOOSER else "guess"
        return tuple(f"{verb} {n}" for n in range(1, self.config.high + 1))

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat not in self.to_move():
            raise IllegalAction(f"it is seat {self.to_move()[0]}'s turn, not seat {seat}'s")
        verb = "choose" if seat == CHOOSER else "guess"
        word, _, number = action.strip().lower().partition(" ")
        n = read_number(number.strip())
        if word != verb or n is None:
            raise IllegalAction(f"answer '{verb} <n>' with a whole number n, such as '{verb} 7'")
        if not 1 <= n <= self.config.high:
            raise IllegalAction(f"the number is from 1 to {self.config.high}, not {n}")
        return f"{verb} {n}"

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        seat, action = next(iter(actions.items()))
        n = int(action.split()[1])
        if seat == CHOOSER:
            self.secret = n
            return None
        assert self.secret is not None
        answer = "found" if n == self.secret else "higher" if n < self.secret else "lower"
        self.guesses.append((n, answer))
        if answer == "found":
            self.is_over = True
            return (-1.0, 1.0)
        if len(self.guesses) == self.config.tries:
            self.is_over = True
            return (1.0, -1.0)
        return None

    def private_info(self, seat: int) -> int | None:
        """The secret is the chooser's alone until the end."""
        return self.secret if seat == CHOOSER else None

    def _log(self) -> str:
        said = "; ".join(f"{n}: {answer}" for n, answer in self.guesses)
        return f"Guesses so far ({len(self.guesses)} of {self.config.tries}): {said or 'none'}."

    def observe(self, seat: int) -> Observation:
        lines = [f"Guess the number from 1 to {self.config.high}. You are seat {seat}."]
        if seat == CHOOSER and self.secret is not None:
            lines.append(f"Your secret number is {self.secret}.")
        lines.append("The number is not chosen yet." if self.secret is None else self._log())
        if seat in self.to_move():
            verb = "choose" if seat == CHOOSER else "guess"
            lines.append(f"Your turn: answer '{verb} <n>'.")
        data = {"high": self.config.high, "tries": self.config.tries, "guesses": [list(g) for g in self.guesses]}
        return Observation("\n".join(lines), data | {"secret": self.private_info(seat), "chosen": self.secret is not None})

    def public_view(self) -> View:
        # what a seat sees beyond its private information, so it must show whether the number is chosen
        text = "The number is not chosen yet." if self.secret is None else self._log()
        return render.view(text, render.facts({"range": f"1 to {self.config.high}", "guesses": len(self.guesses)}))

    def full_view(self) -> View:
        secret = "not chosen" if self.secret is None else self.secret
        return render.view(f"{self.public_view()['text']} The secret: {secret}.", render.facts({"secret": secret}))


class Bisector(Bot):
    """A bot for the game above: halves what is left of the range at every guess, and as
    chooser picks at random. A bot is a ``bots.base.Bot`` with a name, the games it plays and
    its options as typed keyword arguments (``guess-bisect:low_first=true`` sets this one)."""

    name = "guess-bisect"
    description = "Guesses the middle of what the answers leave; chooses its own number at random."
    games = ("guess-the-number",)

    def __init__(self, game: str, seed: int = 0, low_first: bool = False) -> None:
        super().__init__(game, seed)
        self.low_first = low_first  # on an even span, the lower of the two middles

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if turn.seat == CHOOSER:
            return f"choose {self.rng.randint(1, data['high'])}"
        low, high = 1, data["high"]
        for n, answer in data["guesses"]:
            low, high = (n + 1, high) if answer == "higher" else (low, n - 1)
        return f"guess {(low + high) // 2 if self.low_first else (low + high + 1) // 2}"
