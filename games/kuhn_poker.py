"""Kuhn poker: the smallest poker game, three cards and one round of betting.

Kuhn (1950) solved it by hand; its Nash equilibria are known in closed form, so it
tests bluffing and calling under hidden information against an exactly measurable
standard. The betting tree has four decision points, so the state is a node number
in a fixed table plus the two cards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from games import render
from games.api import Game, GameConfig, GameSpec, IllegalAction, Observation, View

CARDS = ("J", "Q", "K")
"""Ranked low to high; a card's index is its rank."""
HIDDEN = "?"
ACTIONS = ("check", "bet", "call", "fold")
DEALS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(3) for b in range(3) if a != b)
"""The six (seat 0's card, seat 1's card) deals, equally likely."""
ANTE = 1
BET = 1


@dataclass(frozen=True)
class KuhnPokerConfig(GameConfig):
    def return_bounds(self) -> tuple[float, float]:
        return (-float(ANTE + BET), float(ANTE + BET))

    def action_space(self) -> tuple[str, ...]:
        return ACTIONS


RULES = """\
Kuhn poker. Two players; the deck has three cards, J (lowest), Q and K (highest). Each \
player antes 1 chip into the pot and is dealt one card, seen only by its holder; the \
third card is not used. Seat 0 acts first. With no bet outstanding, a player may check \
(put in nothing) or bet (put in 1 chip). Facing a bet, a player may fold (give up the \
pot) or call (put in 1 chip to match). The possible sequences: check, check: showdown; \
check, bet, then fold or call; bet, then fold or call. A call leads to a showdown. At a \
showdown the higher card takes the pot: each player wins or loses 1 chip after check, \
check, and 2 chips after a bet is called. A player who folds loses the 1 chip ante to \
the other. Your return is the chips you win (positive) or lose (negative). Answer with \
one word: check, bet, call or fold."""

START, AFTER_CHECK, AFTER_BET, AFTER_CHECK_BET = range(4)
_MOVER = (0, 1, 1, 0)
_LEGAL: tuple[tuple[str, ...], ...] = (("check", "bet"), ("check", "bet"), ("fold", "call"), ("fold", "call"))
SHOWDOWN, FOLD = -1, -2
_NEXT: tuple[dict[str, int], ...] = (
    {"check": AFTER_CHECK, "bet": AFTER_BET},
    {"check": SHOWDOWN, "bet": AFTER_CHECK_BET},
    {"fold": FOLD, "call": SHOWDOWN},
    {"fold": FOLD, "call": SHOWDOWN},
)
"""The betting tree: node -> action -> next node, or how the hand ends."""
_MOVERS = ((0,), (1,))
_PAY: tuple[tuple[tuple[float, float], ...], ...] = (
    ((0.0, 0.0), (1.0, -1.0), (2.0, -2.0)),
    ((0.0, 0.0), (-1.0, 1.0), (-2.0, 2.0)),
)
"""_PAY[winner][chips]: the rewards when ``winner`` takes ``chips`` from the other."""


class KuhnPoker(Game):
    spec = GameSpec(
        name="kuhn-poker",
        title="Kuhn poker",
        category="competitive",
        description="Three-card poker with one bet: bluffing and calling under hidden information.",
        rules=RULES,
        default_config=KuhnPokerConfig(),
        chance=True,
        hidden_information=True,
        zero_sum=True,
    )
    Config = KuhnPokerConfig

    cards: tuple[int, int]
    """Each seat's card as a rank index: private, shown only to its holder."""
    node: int
    player: int
    actions: list[str]
    """The betting so far, public."""
    pot: int
    winner: int | None
    showdown: bool

    def _setup(self) -> None:
        self.cards = DEALS[self.chance().randrange(len(DEALS))]
        self.node = START
        self.player = 0
        self.actions = []
        self.pot = 2 * ANTE
        self.winner = None
        self.showdown = False

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else _MOVERS[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return _LEGAL[self.node]

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        legal = _LEGAL[self.node]
        if action in legal and seat == self.player:
            return action
        word = action.strip().lower()
        if word not in ACTIONS:
            raise IllegalAction(f"'{action}' is not a Kuhn poker action; answer check, bet, call or fold")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if word not in legal:
            if legal[0] == "fold":
                raise IllegalAction(f"you face a bet, so you cannot {word}: answer fold or call")
            raise IllegalAction(f"there is no bet to {word}: answer check or bet")
        return word

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        action = actions[player]
        self.actions.append(action)
        if action == "bet" or action == "call":
            self.pot += BET
        node = _NEXT[self.node][action]
        if node >= 0:
            self.node = node
            self.player = 1 - player
            return None
        self.is_over = True
        if node == FOLD:
            winner = 1 - player
            chips = ANTE
        else:
            self.showdown = True
            winner = 0 if self.cards[0] > self.cards[1] else 1
            chips = self.pot // 2
        self.winner = winner
        return _PAY[winner][chips]

    # ---- rendering ---------------------------------------------------------------------

    def _card_shown(self, seat: int, viewer: int | None) -> str:
        """A card as ``viewer`` sees it (None: a spectator): its holder always, anyone after a showdown."""
        return CARDS[self.cards[seat]] if seat == viewer or self.showdown else HIDDEN

    def _history_text(self) -> str:
        if not self.actions:
            return "no actions yet"
        return ", ".join(f"seat {i % 2} {action}s" for i, action in enumerate(self.actions))

    def _status(self) -> str:
        if not self.is_over:
            return f"Seat {self.player} to act: {' or '.join(_LEGAL[self.node])}."
        winner = self.winner
        assert winner is not None
        if not self.showdown:
            return f"Seat {1 - winner} folded; seat {winner} wins {ANTE} chip."
        chips = self.pot // 2
        return (
            f"Showdown: seat 0 has {CARDS[self.cards[0]]}, seat 1 has {CARDS[self.cards[1]]}; "
            f"seat {winner} wins {chips} chip{'s' if chips > 1 else ''}."
        )

    def private_info(self, seat: int) -> str:
        return CARDS[self.cards[seat]]

    def observe(self, seat: int) -> Observation:
        other = 1 - seat
        text = (
            f"You are seat {seat} ({'first' if seat == 0 else 'second'} to act). Your card: {CARDS[self.cards[seat]]}. "
            f"Opponent's card: {'unknown' if self._card_shown(other, seat) == HIDDEN else CARDS[self.cards[other]]}.\n"
            f"Pot: {self.pot} chips. Betting so far: {self._history_text()}.\n{self._status()}"
        )
        return Observation(
            text=text,
            data={
                "card": CARDS[self.cards[seat]],
                "opponent_card": self._card_shown(other, seat),
                "history": list(self.actions),
                "pot": self.pot,
                "to_move": None if self.is_over else self.player,
            },
        )

    def _view(self, viewer_sees_all: bool) -> View:
        shown = [CARDS[c] if viewer_sees_all else self._card_shown(seat, None) for seat, c in enumerate(self.cards)]
        summary = f"Seat 0: {shown[0]}, seat 1: {shown[1]}. Pot: {self.pot}. Betting: {self._history_text()}.\n{self._status()}"
        return render.view(
            summary,
            render.cards([(f"seat {seat}", [card]) for seat, card in enumerate(shown)]),
            render.facts({"pot": self.pot, "betting": " ".join(self.actions) or "-"}),
            render.text(self._status()),
        )

    def public_view(self) -> View:
        return self._view(viewer_sees_all=False)

    def full_view(self) -> View:
        return self._view(viewer_sees_all=True)
