"""Goofspiel (the game of pure strategy): players bid for prize cards with cards of their own.

Merrill Flood's game from the 1950s, and OpenSpiel's ``goofspiel``: every player holds the
same hand, 1 to n; each turn a prize card is turned up and everyone bids one card at the
same time; the highest bid takes the prize and every bid card is spent. Nothing is hidden
but the moves being made together, and, by default, the order of the prizes still to come
(shuffled in one chance event at setup), so it tests reasoning about simultaneous choices
and the value of a card over the whole game rather than reading hidden state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View, did_you_mean, read_number

MAX_PLAYERS = 8
MAX_CARDS = 52
PRIZE_ORDERS = ("random", "descending", "ascending")


@dataclass(frozen=True)
class GoofspielConfig(GameConfig):
    cards: int = 13
    """Cards per hand and prizes, valued 1 to ``cards``; one turn each."""
    prize_order: str = "random"

    def check(self) -> None:
        super().check()
        if not 1 <= self.cards <= MAX_CARDS:
            raise ConfigError(f"config key 'cards' must be 1 to {MAX_CARDS}, got {self.cards}")
        if self.prize_order not in PRIZE_ORDERS:
            raise ConfigError(
                f"config key 'prize_order' must be one of {', '.join(PRIZE_ORDERS)}, got {self.prize_order!r}"
                + did_you_mean(self.prize_order, PRIZE_ORDERS)
            )

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def action_space(self) -> tuple[str, ...]:
        return tuple(ACTION_OF[1 : self.cards + 1])


ACTION_OF: tuple[str, ...] = tuple(f"bid {card}" for card in range(MAX_CARDS + 1))
"""The canonical action bidding each card (index 0 unused)."""
_CARD_OF = {action: card for card, action in enumerate(ACTION_OF) if card}


@lru_cache(maxsize=1 << 13)  # every hand of the default 13 cards; a 52-card match meets ~100 new ones
def bids_in(hand: int) -> tuple[str, ...]:
    """The legal bids of a hand given as a bit mask (bit n set: card n held), lowest first."""
    return tuple(ACTION_OF[card] for card in range(1, hand.bit_length()) if hand >> card & 1)


def cards_in(hand: int) -> list[int]:
    return [card for card in range(1, hand.bit_length()) if hand >> card & 1]


def rank_returns(points: Sequence[int]) -> tuple[float, ...]:
    """+1 for each opponent a seat out-collected, -1 for each that out-collected it, over
    the number of opponents: win/loss/draw as +1/-1/0 for two players, zero-sum for any number."""
    opponents = len(points) - 1
    return tuple(sum((mine > theirs) - (mine < theirs) for theirs in points) / opponents for mine in points)


RULES = """\
Goofspiel. Every player starts with the same hand of cards valued 1 up to the number of \
cards (1 to 13 by default). A separate prize deck with the same values is shuffled (by \
default; the prize_order option can fix it descending or ascending) and placed face down.

Each turn the top prize card is turned face up and every player secretly chooses one \
card from their hand as a bid; the bids are revealed together. The single highest bid \
wins the prize: its value is added to that player's points. If two or more players tie \
for the highest bid, nobody gets the prize and it is discarded. Every bid card is spent \
(removed from its owner's hand), whether it won or not. All bids are shown to everyone \
after each turn, so everyone knows everyone's remaining cards; only the order of the \
prizes still to come is unknown.

The game lasts one turn per card. The player with the most points wins. With two \
players the winner gets +1, the loser -1, a tie 0 each. With more players each player \
gets +1 for every opponent with fewer points and -1 for every opponent with more, \
divided by the number of opponents.

Answer with the card you bid, e.g. "bid 7" (or just "7")."""


class Goofspiel(Game):
    spec = GameSpec(
        name="goofspiel",
        title="Goofspiel",
        category="competitive",
        description="Bid your cards for prize cards, all players at once; the highest bid takes the prize.",
        rules=RULES,
        default_config=GoofspielConfig(),
        max_players=MAX_PLAYERS,
        simultaneous=True,
        chance=True,
        zero_sum=True,
    )
    Config = GoofspielConfig

    config: GoofspielConfig
    prizes: tuple[int, ...]
    """The prize deck in the order it is turned up: unknown to the players beyond the current turn."""
    hands: list[int]
    """Each seat's remaining cards as a bit mask (bit n: card n); public, since every bid is shown."""
    points: list[int]
    bids: list[tuple[int, ...]]
    """Each completed turn's bids, one card per seat."""
    winners: list[int | None]
    """Each completed turn's prize winner; None when the highest bid was tied."""
    _seats: tuple[int, ...]

    def _setup(self) -> None:
        cfg = self.config
        prizes = list(range(1, cfg.cards + 1))
        if cfg.prize_order == "random":
            self.chance().shuffle(prizes)
        elif cfg.prize_order == "descending":
            prizes.reverse()
        self.prizes = tuple(prizes)
        full = (1 << (cfg.cards + 1)) - 2
        self.hands = [full] * self.num_players
        self.points = [0] * self.num_players
        self.bids = []
        self.winners = []
        self._seats = tuple(range(self.num_players))

    @property
    def turn(self) -> int:
        """The number of turns played."""
        return len(self.bids)

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else self._seats

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over:
            return ()
        return bids_in(self.hands[seat])

    def validate(self, seat: int, action: str) -> str:
        card = _CARD_OF.get(action)
        # A canonical bid of a held card (a card beyond the config is never held) needs no other check.
        if card is not None and not self.is_over and seat in self._seats and self.hands[seat] >> card & 1:
            return action
        if card is None:
            text = action.strip().lower().removeprefix("bid").strip()
            card = read_number(text)
            if card is None:
                raise IllegalAction(f"'{action}' is not a bid; answer with a card from your hand, e.g. 'bid 7'")
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat not in self._seats:
            raise IllegalAction(f"there is no seat {seat}")
        if not 1 <= card <= self.config.cards:
            raise IllegalAction(f"there is no card {card}: cards run from 1 to {self.config.cards}")
        hand = self.hands[seat]
        if not hand >> card & 1:
            held = ", ".join(map(str, cards_in(hand)))
            raise IllegalAction(f"you have already played your {card}; your cards: {held}")
        return ACTION_OF[card]

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        card_of = _CARD_OF
        played = tuple([card_of[actions[seat]] for seat in self._seats])
        high = max(played)
        winner = played.index(high) if played.count(high) == 1 else None
        if winner is not None:
            self.points[winner] += self.prizes[len(self.bids)]
        hands = self.hands
        for seat, card in enumerate(played):
            hands[seat] ^= 1 << card
        self.bids.append(played)
        self.winners.append(winner)
        if len(self.bids) < self.config.cards:
            return None
        self.is_over = True
        return rank_returns(self.points)

    # ---- rendering ---------------------------------------------------------------------

    def _prize(self) -> int | None:
        return None if self.is_over else self.prizes[self.turn]

    def _prizes_to_come(self) -> list[int]:
        """The prizes after this one: in the order they come when the config fixes it (a fixed
        order is common knowledge), else sorted (the order is what the deck hides)."""
        rest = self.prizes[self.turn + 1 :]
        return sorted(rest) if self.config.prize_order == "random" else list(rest)

    def _prizes_to_come_text(self) -> str:
        prizes = ", ".join(map(str, self._prizes_to_come())) or "none"
        order = self.config.prize_order
        if order == "random":
            return f"Prizes still to come after this one (order unknown): {prizes}."
        return f"Prizes still to come after this one, in {order} order: {prizes}."

    def _turn_text(self, number: int, seat: int | None) -> str:
        played = self.bids[number]
        winner = self.winners[number]
        who = [("you" if s == seat else f"seat {s}") + f" bid {card}" for s, card in enumerate(played)]
        if winner is None:
            outcome = "tied, prize discarded"
        else:
            outcome = f"{'you win' if winner == seat else f'seat {winner} wins'} {self.prizes[number]}"
        return f"  turn {number + 1}: prize {self.prizes[number]}; {', '.join(who)}: {outcome}"

    def _status(self) -> str:
        points = ", ".join(f"seat {s} {p}" for s, p in enumerate(self.points))
        if not self.is_over:
            return f"Turn {self.turn + 1} of {self.config.cards}: prize {self._prize()}. Points: {points}."
        best = max(self.points)
        leaders = [s for s, p in enumerate(self.points) if p == best]
        result = f"seat {leaders[0]} wins" if len(leaders) == 1 else "tie between seats " + ", ".join(map(str, leaders))
        return f"Game over: {result}. Points: {points}."

    def observe(self, seat: int) -> Observation:
        lines = [
            f"Goofspiel, {self.num_players} players, {self.config.cards} cards each. You are seat {seat}.",
            self._status(),
            f"Your cards: {', '.join(map(str, cards_in(self.hands[seat]))) or 'none'}.",
            *(
                f"Seat {s}'s cards: {', '.join(map(str, cards_in(hand))) or 'none'}."
                for s, hand in enumerate(self.hands)
                if s != seat
            ),
            self._prizes_to_come_text(),
            "History:",
            *(self._turn_text(number, seat) for number in range(self.turn)),
        ]
        if self.turn == 0:
            lines.append("  (nothing yet)")
        if not self.is_over:
            lines.append(f"Bid a card from your hand for the prize {self._prize()}, e.g. 'bid 7'.")
        data: dict[str, Any] = {
            "seat": seat,
            "turn": min(self.turn + 1, self.config.cards),
            "turns": self.config.cards,
            "prize": self._prize(),
            "hand": cards_in(self.hands[seat]),
            "hands": [cards_in(hand) for hand in self.hands],
            "points": list(self.points),
            "prizes_to_come": self._prizes_to_come(),
            "prize_order": self.config.prize_order,
            "history": [
                {"prize": self.prizes[n], "bids": list(played), "winner": self.winners[n]} for n, played in enumerate(self.bids)
            ],
            "to_move": list(self.to_move()),
        }
        return Observation(text="\n".join(lines), data=data)

    def public_view(self) -> View:
        rows = [[str(self.prizes[n]) for n in range(self.turn)]]
        rows += [[str(played[s]) for played in self.bids] for s in self._seats]
        return render.view(
            self._status() + "\n" + "\n".join(self._turn_text(n, None) for n in range(self.turn)),
            render.facts({"prize": self._prize() or "-", **{f"seat {s}": p for s, p in enumerate(self.points)}}),
            render.grid(
                rows,
                title="bids by turn",
                row_labels=["prize", *(f"seat {s}" for s in self._seats)],
                col_labels=[str(n + 1) for n in range(self.turn)],
            ),
            render.text(self._status()),
        )

    def full_view(self) -> View:
        return self.public_view()
