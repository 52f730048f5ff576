"""Chance events keyed by (match seed, chance-event index).

Every random draw a game makes comes from a generator built for one chance event, so
two matches with the same seed see the same deals whatever their seats do: duplicate
tournaments and leave-one-out baselines rely on that. A seeded ``random.Random`` costs
about 5 microseconds to build, a large share of a Kuhn poker hand, so the draws come
from SplitMix64 instead: a few integer operations per draw, identical on every platform.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class ChanceRng:
    """The generator of one chance event; draws are uniform and reproducible."""

    __slots__ = ("_state",)

    def __init__(self, seed: int, index: int) -> None:
        if seed < 0 or index < 0:
            raise ValueError(f"seed and chance index must be non-negative, got {seed}, {index}")
        self._state = _mix((seed & _MASK) ^ _mix((seed >> 64) + index * _GOLDEN + 1))

    def bits(self) -> int:
        """The next 64 random bits."""
        self._state = (self._state + _GOLDEN) & _MASK
        return _mix(self._state)

    def randrange(self, n: int) -> int:
        """A uniform integer in [0, n); the modulo bias of 64 bits is below 1e-17."""
        if n <= 0:
            raise ValueError(f"randrange needs a positive bound, got {n}")
        return self.bits() % n

    def random(self) -> float:
        """A uniform float in [0, 1) with 53 bits of precision."""
        return (self.bits() >> 11) * (1.0 / (1 << 53))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.randrange(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.bits() % (i + 1)
            items[i], items[j] = items[j], items[i]
