"""Nim: two players take objects from heaps in turn; whoever takes the last object wins.

Bouton solved it in 1901: the player to move wins exactly when the xor of the heap
sizes (the nim-sum) is not zero. So it tests whether an agent can find and apply a
known exact strategy from text, and every position has a checkable right answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce
from operator import xor

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View, read_number

MAX_HEAPS = 10
MAX_HEAP_SIZE = 100
_MOVERS = ((0,), (1,))
_WIN = ((1.0, -1.0), (-1.0, 1.0))
"""_WIN[seat]: the rewards when ``seat`` takes the last object."""


def action_name(heap: int, count: int) -> str:
    """The canonical action taking ``count`` objects from ``heap`` (numbered from 1)."""
    return f"take {count} from {heap}"


def nim_sum(heaps: Sequence[int]) -> int:
    """The xor of the heap sizes: the player to move can force a win exactly when it is not 0."""
    return reduce(xor, heaps, 0)


@dataclass(frozen=True)
class NimConfig(GameConfig):
    heaps: tuple[int, ...] = (3, 4, 5)

    def check(self) -> None:
        super().check()
        if not 1 <= len(self.heaps) <= MAX_HEAPS:
            raise ConfigError(f"config key 'heaps' must list 1 to {MAX_HEAPS} heap sizes, got {len(self.heaps)}")
        for size in self.heaps:
            if not 1 <= size <= MAX_HEAP_SIZE:
                raise ConfigError(f"config key 'heaps' must hold sizes from 1 to {MAX_HEAP_SIZE}, got {size}")

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        return tuple(action_name(heap, n) for heap, size in enumerate(self.heaps, start=1) for n in range(1, size + 1))


RULES = """\
Nim. Two players (seat 0 and seat 1) take turns; seat 0 moves first. On the table lie \
several heaps of objects (by default three heaps of 3, 4 and 5 objects), numbered 1, 2, \
3, ... from the left. On your turn, choose one heap that is not empty and take one or \
more objects from it: any number from 1 up to the whole heap. You may not pass. The \
player who takes the last object wins (+1, the other -1); there are no draws. Answer \
"take <n> from <heap>": for example "take 2 from 3" takes 2 objects from heap 3. Two \
bare numbers such as "3 2" are also accepted and are read heap first, then how many \
(heap 3, take 2)."""

_TAKE = re.compile(r"(?:take\s+)?(\d+)\s+(?:objects?\s+)?from\s+(?:heap\s+)?(\d+)")
"""``take <n> from <heap>`` and its looser spellings: count first."""
_PAIR = re.compile(r"(?:heap\s+)?(\d+)(?:\s*[,:;/-]\s*|\s+)(?:take\s+)?(\d+)")
"""``<heap> <n>`` (also ``heap 3: 2``, ``3,2``): heap first."""


@lru_cache(maxsize=1 << 14)
def legal_moves(heaps: tuple[int, ...]) -> tuple[str, ...]:
    """The canonical moves from a position, heap by heap, fewest objects first."""
    return tuple(action_name(heap, n) for heap, size in enumerate(heaps, start=1) for n in range(1, size + 1))


@lru_cache(maxsize=1 << 12)
def parse_move(action: str) -> tuple[int, int] | None:
    """The (heap, count) an action names, in any accepted spelling, or None (cached, since
    ``_apply`` reads back the canonical strings ``validate`` wrote)."""
    text = action.strip().lower()
    match = _TAKE.fullmatch(text)
    if match:
        heap, count = read_number(match[2]), read_number(match[1])
    else:
        match = _PAIR.fullmatch(text)
        if not match:
            return None
        heap, count = read_number(match[1]), read_number(match[2])
    return None if heap is None or count is None else (heap, count)


class Nim(Game):
    spec = GameSpec(
        name="nim",
        title="Nim",
        category="competitive",
        description="Take from one heap at a time; whoever takes the last object wins.",
        rules=RULES,
        default_config=NimConfig(),
        zero_sum=True,
    )
    Config = NimConfig

    config: NimConfig
    heaps: tuple[int, ...]
    player: int
    winner: int | None

    def _setup(self) -> None:
        self.heaps = self.config.heaps
        self.player = 0
        self.winner = None

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return legal_moves(self.heaps)

    def validate(self, seat: int, action: str) -> str:
        move = parse_move(action)
        if move is None:
            raise IllegalAction(f"'{action}' is not a Nim move; answer like 'take 2 from 3' (take 2 objects from heap 3)")
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        heap, count = move
        if not 1 <= heap <= len(self.heaps):
            raise IllegalAction(f"there is no heap {heap}; the heaps are numbered 1 to {len(self.heaps)}")
        size = self.heaps[heap - 1]
        if size == 0:
            raise IllegalAction(f"heap {heap} is empty; take from a heap that has objects left")
        if count < 1:
            raise IllegalAction("you must take at least 1 object")
        if count > size:
            raise IllegalAction(f"heap {heap} has only {size} object{'s' if size > 1 else ''}; you cannot take {count}")
        return action_name(heap, count)

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        move = parse_move(actions[player])
        assert move is not None
        heap, count = move
        heaps = list(self.heaps)
        heaps[heap - 1] -= count
        self.heaps = tuple(heaps)
        if any(heaps):
            self.player = 1 - player
            return None
        self.is_over = True
        self.winner = player
        return _WIN[player]

    # ---- rendering ---------------------------------------------------------------------

    def _heaps_text(self) -> str:
        return ", ".join(f"heap {heap}: {size}" for heap, size in enumerate(self.heaps, start=1))

    def _moves(self) -> list[tuple[int, str]]:
        return [(seat, action) for step in self.history for seat, action in step.items()]

    def _moves_text(self) -> str:
        moves = self._moves()
        return "Moves so far: " + ("; ".join(f"seat {s} {a}" for s, a in moves) if moves else "none") + "."

    def _status(self) -> str:
        if self.winner is not None:
            return f"Seat {self.winner} took the last object and wins."
        return f"Seat {self.player} to move."

    def observe(self, seat: int) -> Observation:
        moves = self._moves()
        if self.is_over:
            prompt = self._status()
        elif seat == self.player:
            prompt = (
                "It is your turn: take 1 or more objects from one non-empty heap. "
                "Answer like 'take 2 from 3' (take 2 objects from heap 3)."
            )
        else:
            prompt = f"It is seat {self.player}'s turn."
        lines = [
            f"Nim. You are seat {seat}. Whoever takes the last object wins.",
            f"Heaps (objects left): {self._heaps_text()}.",
            self._moves_text(),
            prompt,
        ]
        return Observation(
            text="\n".join(lines),
            data={
                "seat": seat,
                "heaps": list(self.heaps),
                "moves": [{"seat": s, "action": a} for s, a in moves],
                "to_move": None if self.is_over else self.player,
            },
        )

    def public_view(self) -> View:
        width = max(self.config.heaps)
        rows = [["o" if i < size else "" for i in range(width)] for size in self.heaps]
        return render.view(
            f"{self._heaps_text()}.\n{self._status()}",
            render.grid(rows, title="heaps", row_labels=[f"heap {h}" for h in range(1, len(self.heaps) + 1)]),
            render.facts({f"heap {h}": size for h, size in enumerate(self.heaps, start=1)}),
            # The moves too, as the seats' observations retell them: the heaps alone do not say
            # how they came to be.
            render.text(f"{self._moves_text()}\n{self._status()}"),
        )

    def full_view(self) -> View:
        return self.public_view()
