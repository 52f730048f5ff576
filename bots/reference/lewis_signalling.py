"""Lewis signalling bots: a pair that shares a convention from the start, and a learner.

The convention bot is what two players who agreed beforehand do (state i, signal i, act
i), the ceiling of the game. The learner agrees on nothing: it reads the record of past
rounds and adopts whatever convention the partner seems to follow, or proposes one, so
it measures how fast meaning can be learnt from scratch, with itself or with others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.lewis_signalling import SIGNAL


@register
class LewisConvention(Bot):
    name = "lewis-convention"
    showcase = True
    description = "A fixed convention: the sender sends the i-th signal for state i, the receiver answers it with act i."
    games = ("lewis-signalling",)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        signals: list[str] = data["signals"]
        if data["phase"] == SIGNAL:
            return f"signal {signals[(data['state'] - 1) % len(signals)]}"
        return f"act {signals.index(data['signal']) % data['states'] + 1}"


@register
class LewisLearner(Bot):
    name = "lewis-learner"
    description = (
        "Learns the code from the record: the receiver answers a signal with the state it most often stood for; "
        "the sender sends a signal the receiver answers (or by now should answer) with this state's act, else a fresh one."
    )
    games = ("lewis-signalling",)

    def act(self, turn: Turn) -> str:
        data = turn.observation.data
        if data["phase"] == SIGNAL:
            return f"signal {self._signal(data)}"
        return f"act {self._act(data)}"

    def _act(self, data: Mapping[str, Any]) -> int:
        """The state this signal most often stood for; for a signal not seen yet, a state no
        signal has stood for (a new signal likely has a new meaning)."""
        history = data["history"]
        meant = Counter(h["state"] for h in history if h["signal"] == data["signal"])
        if meant:
            top = max(meant.values())
            return self.rng.choice(sorted(state for state, n in meant.items() if n == top))
        taken = {h["state"] for h in history}
        free = [state for state in range(1, data["states"] + 1) if state not in taken]
        return self.rng.choice(free or range(1, data["states"] + 1))

    def _signal(self, data: Mapping[str, Any]) -> str:
        """A signal that should mean this state to the receiver; else one not used yet (to
        propose a meaning for it); else any."""
        history, state = data["history"], data["state"]
        promising = [s for s in data["signals"] if _means(history, s, state)]
        if promising:
            return self.rng.choice(promising)
        used = {h["signal"] for h in history}
        return self.rng.choice([s for s in data["signals"] if s not in used] or data["signals"])


def _means(history: list[dict[str, Any]], signal: str, state: int) -> bool:
    """Whether the receiver should answer ``signal`` with ``state``'s act: its latest answer
    to it was that act, or the signal has stood for the state and no answer given since
    (when the receiver knew that) was another act."""
    rounds = [h for h in history if h["signal"] == signal]
    if rounds and rounds[-1]["act"] == state:
        return True
    first = next((i for i, h in enumerate(rounds) if h["state"] == state), None)
    return first is not None and all(h["act"] == state for h in rounds[first + 1 :])
