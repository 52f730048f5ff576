"""Pig: a push-your-luck dice race; roll to grow the turn total, hold to bank it, a 1 loses it.

A folk dice game whose optimal two-player policy Neller and Presser computed by value
iteration (2004); "hold at 20" is the classic simple rule. It tests judging risk
against reward and adjusting to the score (take more risk when behind). Every roll is
one chance event, so matches with the same seed see the same dice whoever rolls them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View

ROLL = "roll"
HOLD = "hold"
ACTIONS: tuple[str, ...] = (ROLL, HOLD)
_CANONICAL = {"roll": ROLL, "r": ROLL, "hold": HOLD, "h": HOLD, "stop": HOLD, "bank": HOLD}
_FIRST_ROLL: tuple[str, ...] = (ROLL,)
BUST = 1
"""The face that wipes out the turn total and ends the turn."""
MAX_PLAYERS = 4
MAX_FACES = 100
MAX_TARGET = 500
"""The highest target: a match must end within the server's step limit (10,000 steps, then
it is void). With a two-faced die a player banks a point in 1.5 to 2 of its steps, so four
players, holding at 2 or at random, reach 500 in 3,000 to 3,700 steps; a target of a billion
was accepted and never reached."""
_MOVERS: tuple[tuple[int], ...] = tuple((seat,) for seat in range(MAX_PLAYERS))
RECENT_TURNS = 6
"""How many finished turns an observation's text recounts."""


@dataclass(frozen=True)
class PigConfig(GameConfig):
    target: int = 100
    """The banked score that wins, 1 to ``MAX_TARGET``."""
    die: int = 6
    """The number of faces of the die, numbered 1 to ``die``."""

    def check(self) -> None:
        super().check()
        self.at_least("target", 1)
        self.at_most("target", MAX_TARGET)
        if not 2 <= self.die <= MAX_FACES:
            raise ConfigError(f"config key 'die' must be 2 to {MAX_FACES} faces, got {self.die}")

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        return ACTIONS


def win_rewards(winner: int, players: int) -> tuple[float, ...]:
    """The winner gets +1 and the others share -1, so every game sums to zero."""
    loss = -1.0 / (players - 1)
    return tuple(1.0 if seat == winner else loss for seat in range(players))


RULES = """\
Pig, a dice game for 2 to 4 players (seat 0 starts, then seat 1, and so on in turn). \
Each player has a banked score, starting at 0. On your turn you roll a die (six faces \
by default) as often as you like, adding each roll to your turn total, until you either \
hold or roll a 1. Answer "roll" to roll the die, or "hold" to end your turn and add the \
turn total to your banked score. If you roll a 1, you lose the whole turn total (your \
banked score stays) and your turn ends. Each turn starts with a roll: you cannot hold \
before rolling. The first player to bring their banked score to the target (100 by \
default) or more by holding wins: +1. With two players the loser gets -1; with more, \
the losers share -1 equally (-1/2 each with three players, -1/3 each with four)."""


class Pig(Game):
    spec = GameSpec(
        name="pig",
        title="Pig",
        category="competitive",
        description="Roll to build a turn total, hold to bank it; rolling a 1 loses it. First to the target wins.",
        rules=RULES,
        default_config=PigConfig(),
        max_players=MAX_PLAYERS,
        chance=True,
        zero_sum=True,
    )
    Config = PigConfig

    config: PigConfig
    scores: list[int]
    player: int
    rolls: list[int]
    """The current turn's rolls so far (none of them a 1)."""
    turns: list[tuple[int, tuple[int, ...], bool]]
    """Every finished turn: (seat, its rolls, whether it held); a turn that did not hold ended on a 1."""
    winner: int | None

    def _setup(self) -> None:
        self.scores = [0] * self.num_players
        self.player = 0
        self.rolls = []
        self.turns = []
        self.winner = None

    @property
    def turn_total(self) -> int:
        return sum(self.rolls)

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return ACTIONS if self.rolls else _FIRST_ROLL

    def validate(self, seat: int, action: str) -> str:
        move = _CANONICAL.get(action)
        if move is None:
            move = _CANONICAL.get(action.strip().lower())
            if move is None:
                raise IllegalAction(f"'{action}' is not a Pig action; answer roll or hold")
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if move == HOLD and not self.rolls:
            raise IllegalAction("you have not rolled yet this turn, so there is nothing to hold: answer roll")
        return move

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        if actions[player] == ROLL:
            face = self.chance().randrange(self.config.die) + 1
            self.rolls.append(face)
            if face == BUST:
                self._end_turn(held=False)
            return None
        self.scores[player] += self.turn_total
        self._end_turn(held=True)
        if self.scores[player] < self.config.target:
            return None
        self.is_over = True
        self.winner = player
        return win_rewards(player, self.num_players)

    def _end_turn(self, held: bool) -> None:
        """Record the turn and pass the die on (after a winning hold the game is over anyway)."""
        player = self.player
        self.turns.append((player, tuple(self.rolls), held))
        self.rolls = []
        self.player = (player + 1) % self.num_players

    # ---- rendering ---------------------------------------------------------------------

    def _turn_text(self, seat: int, rolls: Sequence[int], held: bool) -> str:
        rolled = ", ".join(map(str, rolls))
        if held:
            return f"seat {seat} rolled {rolled} and held: +{sum(rolls)}"
        return f"seat {seat} rolled {rolled}: a 1, turn total lost"

    def _scores_text(self, viewer: int | None) -> str:
        return ", ".join(f"seat {seat}{' (you)' if seat == viewer else ''} {score}" for seat, score in enumerate(self.scores))

    def _status(self) -> str:
        if self.winner is not None:
            return f"Seat {self.winner} reached {self.scores[self.winner]} and wins."
        rolled = ", ".join(map(str, self.rolls)) or "none yet"
        # at a turn's start, how the last one ended: a roll of 1 showed as nothing but the die passed on
        last = f"Last turn: {self._turn_text(*self.turns[-1])}. " if self.turns and not self.rolls else ""
        return f"{last}Seat {self.player} to act; turn total {self.turn_total} (rolls: {rolled})."

    def observe(self, seat: int) -> Observation:
        config = self.config
        recent = self.turns[-RECENT_TURNS:]
        lines = [
            f"Pig, first to {config.target} wins; a {config.die}-sided die, rolling a 1 loses the turn total. "
            f"You are seat {seat} of {self.num_players}.",
            f"Banked scores: {self._scores_text(seat)}.",
            "Recent turns: " + ("; ".join(self._turn_text(*t) for t in recent) if recent else "none") + ".",
        ]
        if self.is_over:
            lines.append(self._status())
        elif seat == self.player:
            rolled = ", ".join(map(str, self.rolls))
            if self.rolls:
                lines.append(
                    f"It is your turn: you rolled {rolled}, turn total {self.turn_total} "
                    f"(holding now would bank {self.scores[seat] + self.turn_total}). Answer roll or hold."
                )
            else:
                lines.append("It is your turn and you have not rolled yet. Answer roll.")
        else:
            lines.append(self._status())
        last = self.rolls[-1] if self.rolls else self.turns[-1][1][-1] if self.turns else None
        data = {
            "seat": seat,
            "scores": list(self.scores),
            "turn_total": self.turn_total,
            "rolls": list(self.rolls),
            "last_roll": last,
            "to_move": None if self.is_over else self.player,
            "target": config.target,
            "die": config.die,
        }
        return Observation(text="\n".join(lines), data=data)

    def public_view(self) -> View:
        return render.view(
            f"Scores: {self._scores_text(None)}.\n{self._status()}",
            render.facts(
                {
                    **{f"seat {seat}": score for seat, score in enumerate(self.scores)},
                    "target": self.config.target,
                    "turn total": self.turn_total,
                }
            ),
            render.text("\n".join(self._turn_text(*t) for t in self.turns[-RECENT_TURNS:]) or "no turns yet"),
            render.text(self._status()),
        )

    def full_view(self) -> View:
        return self.public_view()
