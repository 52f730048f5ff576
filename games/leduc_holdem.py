"""Leduc hold'em: two players, a six-card deck, two betting rounds and one public card.

Southey et al. (2005) made it the next step up from Kuhn poker for research on
imperfect-information games (it is OpenSpiel's ``leduc_poker``): small enough to solve
exactly, yet it has what Kuhn poker lacks, a public card that changes the value of a
hand mid-game, so it tests reasoning about what the opponent's betting says about a
card that may now pair the board. The whole deal (seat 0's card, seat 1's card, the
public card) is drawn at setup in one chance event, from a table of the 120 equally
likely ways to take three cards in order from the six.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from games import render
from games.api import Game, GameConfig, GameSpec, IllegalAction, Observation, View

RANKS = ("J", "Q", "K")
"""Ranked low to high; a card's value is its rank index. Suits never matter, so a card is written by rank alone."""
DECK: tuple[int, ...] = (0, 0, 1, 1, 2, 2)
"""Two suits of each rank, as rank indices."""
DEALS: tuple[tuple[int, int, int], ...] = tuple(
    (DECK[a], DECK[b], DECK[c]) for a, b, c in itertools.permutations(range(len(DECK)), 3)
)
"""The ranks of (seat 0's card, seat 1's card, the public card) for every ordered draw of three of the six cards."""
HIDDEN = "?"
ACTIONS = ("fold", "check", "call", "raise")
ANTE = 1
RAISE_SIZES = (2, 4)
"""The fixed raise of each betting round."""
MAX_RAISES = 2
"""Raises allowed per betting round (a bet counts as the first)."""
MAX_STAKE = ANTE + MAX_RAISES * sum(RAISE_SIZES)
"""The most one player can put in: 13 chips, the most a hand can win or lose."""

_OPEN: tuple[str, ...] = ("check", "raise")
_FACING: tuple[str, ...] = ("fold", "call", "raise")
_FACING_CAPPED: tuple[str, ...] = ("fold", "call")
_MOVERS = ((0,), (1,))


@dataclass(frozen=True)
class LeducHoldemConfig(GameConfig):
    def return_bounds(self) -> tuple[float, float]:
        return (-float(MAX_STAKE), float(MAX_STAKE))

    def action_space(self) -> tuple[str, ...]:
        return ACTIONS


RULES = f"""\
Leduc hold'em, a small two-player poker game. The deck has six cards: two each of J \
(lowest), Q and K (highest); suits do not matter. Each player antes {ANTE} chip into the \
pot and is dealt one private card, seen only by its holder. There are two betting \
rounds. After the first, one public card is turned face up for both players to see.

Betting: seat 0 acts first in both rounds. With no bet to match you may "check" (put in \
nothing) or "raise" (bet: put in the raise size). Facing a bet you may "fold" (give up \
the hand), "call" (put in enough to match it) or "raise" (match it and put in the raise \
size on top). The raise size is {RAISE_SIZES[0]} chips in round 1 and {RAISE_SIZES[1]} in \
round 2; at most {MAX_RAISES} raises are allowed per round, so after the second raise \
the only answers are fold or call. A round ends when both players check, or when a \
player calls. A fold ends the hand at once: the other player wins it.

Showdown: if nobody folds, after round 2 the cards are shown. A player whose card has \
the same rank as the public card (a pair) wins; otherwise the higher card wins; equal \
ranks split the pot (nobody wins or loses anything).

Your return is the chips you win from the other player: the winner gains what the loser \
put into the pot (ante included) and the loser loses it, at most {MAX_STAKE} chips. \
Answer with one word: fold, check, call or raise."""


def hand_strength(card: int, public: int) -> int:
    """Orders showdown hands: any pair with the public card beats every unpaired card."""
    return card + len(RANKS) if card == public else card


class LeducHoldem(Game):
    spec = GameSpec(
        name="leduc-holdem",
        title="Leduc hold'em",
        category="competitive",
        description="Six-card poker with two betting rounds and a public card: bluffing, calling and reading the board.",
        rules=RULES,
        default_config=LeducHoldemConfig(),
        chance=True,
        hidden_information=True,
        zero_sum=True,
    )
    Config = LeducHoldemConfig

    cards: tuple[int, int]
    """Each seat's card as a rank index: private, shown only to its holder (and to both at a showdown)."""
    public_card: int
    """The rank of the public card, fixed by the deal but unseen until round 2."""
    round: int
    """The betting round, 0 or 1."""
    betting: list[list[str]]
    """The actions of each round so far, public."""
    stakes: list[int]
    """The chips each seat has put into the pot."""
    raises: int
    player: int
    winner: int | None
    """Who won, once over; None after a split pot."""
    showdown: bool
    _legal: tuple[str, ...]

    def _setup(self) -> None:
        first, second, public = DEALS[self.chance().randrange(len(DEALS))]
        self.cards = (first, second)
        self.public_card = public
        self.round = 0
        self.betting = [[]]
        self.stakes = [ANTE, ANTE]
        self.raises = 0
        self.player = 0
        self.winner = None
        self.showdown = False
        self._legal = _OPEN

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return self._legal

    def validate(self, seat: int, action: str) -> str:
        legal = self._legal
        if action in legal and seat == self.player and not self.is_over:
            return action
        word = action.strip().lower()
        if word == "bet":
            word = "raise"
        if word not in ACTIONS:
            raise IllegalAction(f"'{action}' is not a Leduc hold'em action; answer fold, check, call or raise")
        if self.is_over:
            raise IllegalAction("the hand is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if word not in legal:
            if legal is _OPEN:
                raise IllegalAction(f"there is no bet to {word}: answer check or raise")
            if word == "check":
                raise IllegalAction(f"you face a bet, so you cannot check: answer {' or '.join(legal)}")
            raise IllegalAction(f"this round already has {MAX_RAISES} raises, the most allowed: answer fold or call")
        return word

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        other = 1 - player
        action = actions[player]
        betting = self.betting[self.round]
        betting.append(action)
        stakes = self.stakes
        if action == "fold":
            return self._end(other)
        if action == "raise":
            stakes[player] = stakes[other] + RAISE_SIZES[self.round]
            self.raises += 1
            self._legal = _FACING if self.raises < MAX_RAISES else _FACING_CAPPED
            self.player = other
            return None
        if action == "check" and len(betting) == 1:
            self.player = other
            return None
        stakes[player] = stakes[other]
        if self.round == 0:
            self.round = 1
            self.betting.append([])
            self.raises = 0
            self.player = 0
            self._legal = _OPEN
            return None
        self.showdown = True
        mine, theirs = hand_strength(self.cards[0], self.public_card), hand_strength(self.cards[1], self.public_card)
        if mine == theirs:
            self.is_over = True
            return (0.0, 0.0)
        return self._end(0 if mine > theirs else 1)

    def _end(self, winner: int) -> tuple[float, float]:
        self.is_over = True
        self.winner = winner
        chips = float(self.stakes[1 - winner])
        return (chips, -chips) if winner == 0 else (-chips, chips)

    # ---- rendering ---------------------------------------------------------------------

    def _card_shown(self, seat: int, viewer: int | None) -> str:
        """A private card as ``viewer`` sees it (None: a spectator): its holder always, anyone after a showdown."""
        return RANKS[self.cards[seat]] if seat == viewer or self.showdown else HIDDEN

    def _public_shown(self) -> str | None:
        return RANKS[self.public_card] if self.round == 1 else None

    def _betting_text(self) -> str:
        rounds = []
        for number, actions in enumerate(self.betting, start=1):
            said = ", ".join(f"seat {i % 2} {action}s" for i, action in enumerate(actions)) or "no actions yet"
            rounds.append(f"round {number}: {said}")
        return "; ".join(rounds)

    def _status(self) -> str:
        if not self.is_over:
            return f"Round {self.round + 1}, seat {self.player} to act: {' or '.join(self._legal)}."
        winner = self.winner
        if winner is None:
            return f"{self._showdown_text()}; a tie, the pot is split."
        chips = self.stakes[1 - winner]
        won = f"seat {winner} wins {chips} chip{'s' if chips > 1 else ''}"
        return f"{self._showdown_text()}; {won}." if self.showdown else f"Seat {1 - winner} folded; {won}."

    def _showdown_text(self) -> str:
        return (
            f"Showdown: seat 0 has {RANKS[self.cards[0]]}, seat 1 has {RANKS[self.cards[1]]}, "
            f"public card {RANKS[self.public_card]}"
        )

    def private_info(self, seat: int) -> str:
        return RANKS[self.cards[seat]]

    def observe(self, seat: int) -> Observation:
        other = 1 - seat
        public = self._public_shown()
        opponent = self._card_shown(other, seat)
        to_call = self.stakes[other] - self.stakes[seat]
        lines = [
            f"Leduc hold'em. You are seat {seat}. Your card: {RANKS[self.cards[seat]]}. "
            f"Public card: {public or 'not revealed yet (it comes after round 1)'}. "
            f"Opponent's card: {'unknown' if opponent == HIDDEN else opponent}.",
            f"Pot: {self.stakes[0] + self.stakes[1]} chips; you have put in {self.stakes[seat]}, "
            f"the opponent {self.stakes[other]}"
            + (f" (you must add {to_call} to call)." if to_call > 0 and not self.is_over else "."),
            f"Raise size this round: {RAISE_SIZES[self.round]}; raises so far this round: {self.raises} of {MAX_RAISES}.",
            f"Betting: {self._betting_text()}.",
            self._status(),
        ]
        return Observation(
            text="\n".join(lines),
            data={
                "seat": seat,
                "card": RANKS[self.cards[seat]],
                "public_card": public,
                "opponent_card": opponent,
                "round": self.round + 1,
                "betting": [list(actions) for actions in self.betting],
                "stakes": list(self.stakes),
                "pot": self.stakes[0] + self.stakes[1],
                "to_move": None if self.is_over else self.player,
            },
        )

    def _view(self, sees_all: bool) -> View:
        shown = [RANKS[c] if sees_all else self._card_shown(seat, None) for seat, c in enumerate(self.cards)]
        public = self._public_shown()
        summary = (
            f"Seat 0: {shown[0]}, seat 1: {shown[1]}, public card: {public or '-'}. "
            f"Pot: {self.stakes[0] + self.stakes[1]}. Betting: {self._betting_text()}.\n{self._status()}"
        )
        return render.view(
            summary,
            render.cards([("seat 0", [shown[0]]), ("seat 1", [shown[1]]), ("public", [public] if public else [])]),
            render.facts(
                {
                    "round": self.round + 1,
                    "pot": self.stakes[0] + self.stakes[1],
                    "seat 0 put in": self.stakes[0],
                    "seat 1 put in": self.stakes[1],
                }
            ),
            render.text(self._status()),
        )

    def public_view(self) -> View:
        return self._view(sees_all=False)

    def full_view(self) -> View:
        return self._view(sees_all=True)
