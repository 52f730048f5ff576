"""A simple convention bot for Hanabi at any size, the cooperative baseline a learner must beat.

It never gambles: it plays a card only when every card it could still be is playable,
counting the copies it can see (fireworks, discards, the other hands). Otherwise it
hints a player towards a playable card (the soonest to act first), discards what is
surely useless, or the oldest card no hint has named; only when no hint or discard is
legal does it gamble, on its likeliest card. It reads only the observation data and
legal actions, so it plays ``mini-hanabi`` and ``hanabi`` at every player count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.registry import register
from games.hanabi_rules import copies

Face = tuple[str, int]
"""A card as the bot reasons about it: (colour letter, rank)."""


def _faces(known: Mapping[str, Any]) -> list[Face]:
    """Every card a knowledge record allows, ignoring how many copies are left."""
    return [(c, int(r)) for c in known["colours"] for r in known["ranks"]]


def _parse(card: str) -> Face:
    return card[0], int(card[1:])


@dataclass
class _Hand:
    """Another player's hand as the bot sees it: the cards and what their holder knows."""

    seat: int
    distance: int
    """How many turns after the bot's own this player acts."""
    cards: list[Face]
    knowledge: list[dict[str, Any]]


class _Table:
    """What one observation says about the cards, with the derived facts the policy needs."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.fireworks: dict[str, int] = dict(data["fireworks"])
        self.top: int = data["top_rank"]
        # Two-seat observations made before ``others`` existed carry only the partner's hand.
        others = data.get("others") or [
            {"seat": 1 - data["seat"], "hand": data["partner_hand"], "knowledge": data["partner_knowledge"]}
        ]
        self.hands = {
            o["seat"]: _Hand(o["seat"], d, [_parse(c) for c in o["hand"]], [dict(k) for k in o["knowledge"]])
            for d, o in enumerate(others, start=1)
        }
        self.discarded = Counter(_parse(c) for c in data["discards"])
        seen = self.discarded + Counter(face for hand in self.hands.values() for face in hand.cards)
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

    def play_chance(self, slot: int) -> float:
        """The share of the unseen copies my card in ``slot`` (from 0) may be that are playable."""
        faces = self.mine[slot]
        unseen = sum(self.unseen[f] for f in faces)
        return sum(self.unseen[f] for f in faces if self.playable(f)) / unseen if unseen else 0.0

    def knows_playable(self, known: Mapping[str, Any]) -> bool:
        return all(self.playable(f) for f in _faces(known))

    def waiting(self) -> dict[int, list[int]]:
        """Per seat, the slots (from 0) of playable cards their holder does not know to be
        playable, leaving out faces someone already knows to play (a second copy would misplay)."""
        known = {
            face
            for hand in self.hands.values()
            for face, k in zip(hand.cards, hand.knowledge, strict=True)
            if self.knows_playable(k)
        }
        return {
            hand.seat: [
                i
                for i, (face, k) in enumerate(zip(hand.cards, hand.knowledge, strict=True))
                if self.playable(face) and face not in known and not self.knows_playable(k)
            ]
            for hand in self.hands.values()
        }


def _hint(table: _Table, action: str) -> tuple[_Hand, str]:
    """The hand a legal hint is for and its value (a colour letter, upper case as in card
    names, or a rank digit); a two-seat hint names no seat."""
    words = action.split(" ")
    hand = table.hands[int(words[1])] if len(words) == 3 else next(iter(table.hands.values()))
    return hand, words[-1].upper()


def _after_hint(hand: _Hand, value: str) -> list[dict[str, Any]]:
    """The holder's knowledge records after a hint of ``value`` (a colour letter or a rank)."""
    records = []
    for (colour, rank), known in zip(hand.cards, hand.knowledge, strict=True):
        known = dict(known)
        if value.isdigit():
            known["ranks"] = value if rank == int(value) else known["ranks"].replace(value, "")
        else:
            known["colours"] = value if colour == value else known["colours"].replace(value, "")
        records.append(known)
    return records


@register
class HanabiHeuristic(Bot):
    name = "hanabi-heuristic"
    showcase = True
    description = (
        "Convention bot: plays cards it knows are playable, hints playable cards, discards known-useless "
        "or the oldest unhinted card."
    )
    games = ("mini-hanabi", "hanabi")

    def act(self, turn: Turn) -> str:
        legal = turn.legal_actions or ()
        table = _Table(turn.observation.data)
        for slot, faces in enumerate(table.mine, start=1):
            if all(table.playable(f) for f in faces):
                return f"play {slot}"
        hints = [a for a in legal if a.startswith("hint ")]
        waiting = table.waiting()
        useful = [h for h in hints if waiting[_hint(table, h)[0].seat]]
        if useful:
            return self._best(useful, lambda h: _playable_gain(table, *_hint(table, h), waiting))
        if "discard 1" in legal:
            return f"discard {self._discard_slot(table, turn.observation.data['my_knowledge'])}"
        if hints:
            return self._best(hints, lambda h: _information(*_hint(table, h)))
        # With one-card hands the others can end up holding nothing to hint while every
        # token is back, so discarding is barred too: playing is forced, so gamble on the
        # likeliest card.
        plays = [a for a in legal if a.startswith("play ")]
        return self._best(plays, lambda a: table.play_chance(int(a.split(" ")[1]) - 1))

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


def _playable_gain(table: _Table, hand: _Hand, value: str, waiting: Mapping[int, Sequence[int]]) -> tuple[int, int, int]:
    """How much a hint helps with its holder's playable cards: how many it makes known
    playable, then how many possibilities it rules out for them, then how soon they act."""
    after = _after_hint(hand, value)
    slots = waiting[hand.seat]
    known = sum(table.knows_playable(after[i]) for i in slots)
    ruled_out = sum(len(_faces(hand.knowledge[i])) - len(_faces(after[i])) for i in slots)
    return known, ruled_out, -hand.distance


def _information(hand: _Hand, value: str) -> int:
    """How many possibilities a hint rules out over its holder's whole hand."""
    after = _after_hint(hand, value)
    return sum(len(_faces(b)) - len(_faces(a)) for b, a in zip(hand.knowledge, after, strict=True))
