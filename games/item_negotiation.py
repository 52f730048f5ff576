"""Item negotiation: two players split a pool of items they value differently.

After "Deal or No Deal" (Lewis et al. 2017, "Deal or No Deal? End-to-End Learning for
Negotiation Dialogues"): a pool of a few item types, private values that make the whole
pool worth the same to each player, alternating proposals with free-text messages, and
nothing for either side if no proposal is accepted in time. Because values differ, a
good deal can give both players most of what they care about; it tests whether an agent
can find that deal, argue for it in words, and know when to settle.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from games import render
from games.api import ConfigError, GameSpec, IllegalAction, Observation, View
from games.bargaining import (
    ACCEPT,
    AlternatingOffers,
    AlternatingOffersConfig,
    chat,
    example_message,
    message_hint,
    named_numbers,
    no_arguments,
    read_move,
    whole_numbers,
)
from games.bargaining import format_action as format_move

MIN_COUNT = 1
MAX_COUNT = 4
"""Each item type appears between MIN_COUNT and MAX_COUNT times in the pool."""
MAX_ITEM_TYPES = 5
MAX_TOTAL_VALUE = 30
"""Bounds that keep the enumeration of value vectors at setup small."""
PROPOSE = "propose"
VERBS = (PROPOSE, ACCEPT)
SAMPLE_MESSAGES: tuple[str, ...] = (
    "How about this?",
    "This seems fair to me.",
    "I really need these.",
    "Take it or leave it.",
    "",
)
"""What a random player says with its action."""
_ITEM_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class ItemNegotiationConfig(AlternatingOffersConfig):
    items: tuple[str, ...] = ("books", "hats", "balls")
    total_value: int = 10

    def check(self) -> None:
        super().check()
        if not 1 <= len(self.items) <= MAX_ITEM_TYPES:
            raise ConfigError(f"config key 'items' must name 1 to {MAX_ITEM_TYPES} item types, got {len(self.items)}")
        self.bound_names("items", "an item name")
        for name in self.items:
            if not _ITEM_NAME.fullmatch(name):
                raise ConfigError(
                    f"config key 'items': {name!r} is not a usable item name (lowercase letters, digits, '_' or '-', "
                    "starting with a letter)"
                )
        if len(set(self.items)) != len(self.items):
            raise ConfigError(f"config key 'items' names an item type twice: {', '.join(self.items)}")
        if not len(self.items) <= self.total_value <= MAX_TOTAL_VALUE:
            raise ConfigError(
                f"config key 'total_value' must be between {len(self.items)} (one per item type) and {MAX_TOTAL_VALUE}, "
                f"got {self.total_value}"
            )

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.total_value))


@lru_cache(maxsize=256)
def value_vectors(counts: tuple[int, ...], total: int) -> tuple[tuple[int, ...], ...]:
    """Every vector of non-negative whole values per item type that makes the pool worth ``total``."""
    found: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], remaining: int) -> None:
        count = counts[len(prefix)]
        if len(prefix) == len(counts) - 1:
            if remaining % count == 0:
                found.append((*prefix, remaining // count))
            return
        for value in range(remaining // count + 1):
            extend((*prefix, value), remaining - value * count)

    extend((), total)
    return tuple(found)


def worth(values: Sequence[int], share: Sequence[int]) -> int:
    """What a share of the pool is worth to a player with these values."""
    return sum(v * n for v, n in zip(values, share, strict=True))


def parse_action(action: str, items: Sequence[str]) -> tuple[tuple[int, ...] | None, str]:
    """Read an action as (the counts the proposer keeps, or None for accept; the message).

    Checks the grammar only; whether the action is allowed now is the game's business.
    """
    grammar = f"write 'propose <{'> <'.join(items)}>' with the numbers you keep, or 'accept'"
    verb, args, message = read_move(action, VERBS, grammar)
    if verb == ACCEPT:
        no_arguments(verb, args)
        return None, message
    take = named_numbers(args, items, "item type", "the proposal must say how many of every item type you keep")
    if take is None:
        take = whole_numbers(args, len(items))
    if take is None:
        raise IllegalAction(
            f"a proposal is 'propose' and {len(items)} whole numbers, the {', '.join(items)} you keep "
            "(put any message after a colon, as in 'propose 1 2 0: I need the hats')"
        )
    return take, message


def format_action(take: Sequence[int] | None, message: str = "") -> str:
    """The canonical action: 'propose 1 2 0' or 'accept', then ': message' if there is one."""
    return format_move(ACCEPT if take is None else f"{PROPOSE} {' '.join(str(n) for n in take)}", message)


RULES = """\
Item negotiation, after "Deal or No Deal" (Lewis et al. 2017). Two players (seat 0 and \
seat 1) divide a pool of indivisible items of a few types (books, hats and balls by \
default), 1 to 4 of each. Each player has private values per item type (whole numbers, \
0 or more), drawn so that the whole pool is worth exactly the same total to each player \
(10 by default); every item type is worth something to at least one player, and at \
least one type is worth something to both. You see only your own values. Players take \
turns, seat 0 first, for at most a fixed number of turns in all (10 by default). On your \
turn either propose a division or accept the other player's standing proposal (their \
latest one). To propose, write "propose" and the number of each item type YOU keep, in \
pool order, e.g. "propose 1 2 0"; the other player gets the rest. \
"propose books=1 hats=2 balls=0" also works. "accept" takes the other player's latest \
proposal and ends the game: each player scores the value of their own share by their \
own values. Either action may end with a colon and a message to the other player, e.g. \
"propose 1 2 0: I need the hats" or "accept: deal", unless the match turns messages off \
(your turn says so). If the turns run out without an \
acceptance, there is no deal and both players score 0, so a proposal made on the last \
turn can never be accepted. Your goal is the highest score of your own; it is not \
zero-sum: a division that gives each side the items it values most is good for both."""


class ItemNegotiation(AlternatingOffers[tuple[int, ...]]):
    spec = GameSpec(
        name="item-negotiation",
        title="Item negotiation",
        category="negotiation",
        description=(
            "Split a pool of books, hats and balls valued privately; talk, propose, accept;"
            " no deal before the turns run out leaves both with nothing."
        ),
        rules=RULES,
        default_config=ItemNegotiationConfig(),
        chance=True,
        hidden_information=True,
        free_text=True,
    )
    Config = ItemNegotiationConfig
    sample_messages = SAMPLE_MESSAGES

    config: ItemNegotiationConfig
    counts: tuple[int, ...]
    values: tuple[tuple[int, ...], tuple[int, ...]]
    """Each seat's private values per item type, indexed by seat. An offer is what its proposer keeps."""

    def _deal(self) -> None:
        rng = self.chance()
        size = MAX_COUNT - MIN_COUNT + 1
        while True:
            counts = tuple(MIN_COUNT + rng.randrange(size) for _ in self.config.items)
            options = value_vectors(counts, self.config.total_value)
            if not options:
                continue
            first, second = rng.choice(options), rng.choice(options)
            if all(a or b for a, b in zip(first, second, strict=True)) and any(
                a and b for a, b in zip(first, second, strict=True)
            ):
                break
        self.counts = counts
        self.values = (first, second)

    def parse(self, action: str) -> tuple[tuple[int, ...] | None, str]:
        return parse_action(action, self.config.items)

    def check_offer(self, offer: tuple[int, ...]) -> None:
        for name, wanted, available in zip(self.config.items, offer, self.counts, strict=True):
            if wanted > available:
                raise IllegalAction(f"you asked for {wanted} {name} but the pool has only {available}")

    def offer_move(self, offer: tuple[int, ...]) -> str:
        return format_action(offer)

    def deal_rewards(self) -> tuple[float, float]:
        shares = self._shares()
        return (float(worth(self.values[0], shares[0])), float(worth(self.values[1], shares[1])))

    @classmethod
    def random_offer(cls, data: Mapping[str, Any], rng: Any) -> str:
        return format_action([rng.randrange(count + 1) for count in data["counts"]])

    def action_format(self, seat: int) -> str:
        items = self.config.items
        accept = "or 'accept' to take the other player's standing proposal, " if self.standing is not None else ""
        example = format_action([count // 2 for count in self.counts], example_message(self.config.message_chars))
        return (
            f"'propose <{'> <'.join(items)}>' with the number of each item type you keep (pool: {self._pool_text()}; "
            f"the other player gets the rest), {accept}{message_hint(self.config.message_chars)}, e.g. '{example}'"
        )

    def _shares(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Each seat's share under the standing proposal, indexed by seat."""
        assert self.standing is not None
        kept = self.standing
        rest = tuple(c - n for c, n in zip(self.counts, kept, strict=True))
        return (kept, rest) if self.proposer() == 0 else (rest, kept)

    # ---- rendering ---------------------------------------------------------------------

    def _pool_text(self, share: Sequence[int] | None = None) -> str:
        return ", ".join(
            f"{name} {n}" for name, n in zip(self.config.items, self.counts if share is None else share, strict=True)
        )

    def _values_text(self, seat: int) -> str:
        return ", ".join(f"{name} {v}" for name, v in zip(self.config.items, self.values[seat], strict=True))

    def _deal_text(self, seat: int | None) -> str:
        if not self.is_over:
            return ""
        if not self.agreed:
            return "No deal: the turns ran out. Both players score 0."
        shares = self._shares()
        if seat is None:
            return f"Deal: seat 0 gets {self._pool_text(shares[0])}; seat 1 gets {self._pool_text(shares[1])}."
        return (
            f"Deal: you get {self._pool_text(shares[seat])} (worth {worth(self.values[seat], shares[seat])} to you); "
            f"they get {self._pool_text(shares[1 - seat])}."
        )

    def private_info(self, seat: int) -> list[int]:
        return list(self.values[seat])

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        standing: dict[str, Any] | None = None
        lines = [
            f"Item negotiation. You are seat {seat}.",
            f"Pool: {self._pool_text()}.",
            f"Your values per item: {self._values_text(seat)} (the whole pool is worth {cfg.total_value} to you). "
            "The other player has their own values, which you cannot see.",
        ]
        if self.standing is not None and not self.is_over:
            shares = self._shares()
            by = self.proposer()
            standing = {"by": by, "mine": list(shares[seat]), "theirs": list(shares[1 - seat])}
            author = "yours" if by == seat else "theirs"
            lines.append(
                f"Standing proposal ({author}): you get {self._pool_text(shares[seat])} "
                f"(worth {worth(self.values[seat], shares[seat])} to you); they get {self._pool_text(shares[1 - seat])}."
            )
        lines += self.transcript_lines(seat)
        lines += [self._deal_text(seat)] if self.is_over else self.prompt_lines(seat)
        deal: dict[str, list[int]] | None = None
        if self.agreed:
            shares = self._shares()
            deal = {"mine": list(shares[seat]), "theirs": list(shares[1 - seat])}
        data: dict[str, Any] = {
            "seat": seat,
            "items": list(cfg.items),
            "counts": list(self.counts),
            "my_values": list(self.values[seat]),
            "total_value": cfg.total_value,
            "standing_proposal": standing,
            **self.protocol_data(),
            "deal": deal,
        }
        return Observation(text="\n".join(lines), data=data)

    def _status(self) -> str:
        return self._deal_text(None) if self.is_over else self.progress_text()

    def _public_blocks(self) -> list[dict[str, Any]]:
        facts: dict[str, Any] = {"pool": self._pool_text(), "turn": f"{self.turn_number()} of {self.config.max_turns}"}
        if self.standing is not None:
            shares = self._shares()
            label = "deal" if self.agreed else f"proposal by seat {self.proposer()}"
            facts[label] = f"seat 0 gets {self._pool_text(shares[0])}; seat 1 gets {self._pool_text(shares[1])}"
        return [render.facts(facts), chat(self.said()), render.text("\n".join(self.transcript_lines(None)))]

    def public_view(self) -> View:
        return render.view(self._status(), *self._public_blocks())

    def full_view(self) -> View:
        values = {f"seat {s} values": self._values_text(s) for s in (0, 1)}
        if self.agreed:
            shares = self._shares()
            values |= {f"seat {s} scores": worth(self.values[s], shares[s]) for s in (0, 1)}
        return render.view(self._status(), *self._public_blocks(), render.facts(values, title="private values"))
