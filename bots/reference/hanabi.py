"""A simple convention bot for Mini Hanabi, the cooperative baseline a learner must beat.

It never gambles: it plays a card only when every card it could still be is playable,
counting the copies it can see (fireworks, discards, the partner's hand). Otherwise it
hints the partner towards a playable card, discards what is surely useless, or the
oldest card no hint has named. It reads only the observation data and legal actions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.mini_hanabi import copies

Face = tuple[str, int]
"""A card as the bot reasons about it: (colour letter, rank)."""


def _faces(known: Mapping[str, Any]) -> list[Face]:
    """Every card a knowledge record allows, ignoring how many copies are left."""
    return [(c, int(r)) for c in known["colours"] for r in known["ranks"]]


def _parse(card: str) -> Face:
    return card[0], int(card[1:])


class _Table:
    """What one observation says about the cards, with the derived facts the policy needs."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.fireworks: dict[str, int] = dict(data["fireworks"])
        self.top: int = data["top_rank"]
        self.partner_hand = [_parse(c) for c in data["partner_hand"]]
        self.partner_knowledge: list[dict[str, Any]] = [dict(k) for k in data["partner_knowledge"]]
        self.discarded = Counter(_parse(c) for c in data["discards"])
        seen = self.discarded + Counter(self.partner_hand)
        self.unseen = {
            (c, r): copies(r, self.top) - seen[(c, r)] - (1 if height >= r else 0)
            for c, height in self.fireworks.items()
            for r in range(1, self.top + 1)
        }
        self.mine = [[f for f in _faces(k) if self.unseen[f] > 0] for k in data["my_knowledge"]]

    def playable(self, face: Face) -> bool:
        return self.fireworks[face[0]] == face[1] - 1

    def useless(self, face: Face) -> bool:
        """Already played, or unplayable for good because a lower rank is all discarded."""
        colour, rank = face
        height = self.fireworks[colour]
        if height >= rank:
            return True
        return any(self.discarded[(colour, r)] == copies(r, self.top) for r in range(height + 1, rank))

    def partner_knows_playable(self, known: Mapping[str, Any]) -> bool:
        return all(self.playable(f) for f in _faces(known))


def _after_hint(table: _Table, value: str) -> list[dict[str, Any]]:
    """The partner's knowledge records after a hint of ``value`` (a colour letter or a rank)."""
    records = []
    for (colour, rank), known in zip(table.partner_hand, table.partner_knowledge, strict=True):
        known = dict(known)
        if value.isdigit():
            known["ranks"] = value if rank == int(value) else known["ranks"].replace(value, "")
        else:
            known["colours"] = value if colour == value else known["colours"].replace(value, "")
        records.append(known)
    return records


def _hint_value(action: str) -> str:
    """The hinted colour letter (upper case, as in card names) or rank digit."""
    return action.split(" ")[1].upper()


@register
class HanabiHeuristic(Bot):
    name = "hanabi-heuristic"
    showcase = True
    description = (
        "Convention bot: plays cards it knows are playable, hints playable cards, discards known-useless "
        "or the oldest unhinted card."
    )
    games = ("mini-hanabi",)

    def act(self, turn: Turn) -> str:
        legal = turn.legal_actions or ()
        table = _Table(turn.observation.data)
        for slot, faces in enumerate(table.mine, start=1):
            if all(table.playable(f) for f in faces):
                return f"play {slot}"
        hints = [a for a in legal if a.startswith("hint ")]
        waiting = [
            i
            for i, (face, known) in enumerate(zip(table.partner_hand, table.partner_knowledge, strict=True))
            if table.playable(face) and not table.partner_knows_playable(known)
        ]
        if hints and waiting:
            return self._best(hints, lambda h: _playable_gain(table, _hint_value(h), waiting))
        if "discard 1" in legal:
            return f"discard {self._discard_slot(table, turn.observation.data['my_knowledge'])}"
        return self._best(hints, lambda h: _information(table, _hint_value(h)))

    def _best(self, actions: Sequence[str], value: Callable[[str], Any]) -> str:
        """One of the actions of highest value, ties broken at random."""
        scored = [(value(a), a) for a in actions]
        top = max(s for s, _ in scored)
        return self.rng.choice([a for s, a in scored if s == top])

    def _discard_slot(self, table: _Table, knowledge: Sequence[Mapping[str, Any]]) -> int:
        for slot, faces in enumerate(table.mine, start=1):
            if all(table.useless(f) for f in faces):
                return slot
        for slot, known in enumerate(knowledge, start=1):
            if not known["touched"]:
                return slot
        return 1


def _playable_gain(table: _Table, value: str, waiting: Sequence[int]) -> tuple[int, int]:
    """How much a hint helps with the partner's playable cards: how many it makes known
    playable, then how many possibilities it rules out for them."""
    after = _after_hint(table, value)
    known = sum(table.partner_knows_playable(after[i]) for i in waiting)
    ruled_out = sum(len(_faces(table.partner_knowledge[i])) - len(_faces(after[i])) for i in waiting)
    return known, ruled_out


def _information(table: _Table, value: str) -> int:
    """How many possibilities a hint rules out over the partner's whole hand."""
    after = _after_hint(table, value)
    return sum(len(_faces(b)) - len(_faces(a)) for b, a in zip(table.partner_knowledge, after, strict=True))
