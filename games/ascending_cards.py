"""Ascending cards: play every hidden number in rising order without a word, as in The Mind.

In Wolfgang Warsch's The Mind (2018) players hold numbered cards and must lay them all on
one pile in ascending order with no communication at all; the only signal is time, how
long each player waits. Here time is a shared clock of ``ticks`` steps. At every tick each
player still holding cards plays its lowest card or waits; a card played while a lower
card is still in some hand (or lands in the same tick as a lower one: nobody waited for
it) is a mistake that costs a shared life and discards every lower card still held. It
tests tacit coordination: settling on how long a number means, and trusting others to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View

PLAY, WAIT = "play", "wait"
ACTIONS: tuple[str, ...] = (PLAY, WAIT)
_CANONICAL = {"play": PLAY, "p": PLAY, "wait": WAIT, "w": WAIT}
MAX_PLAYERS = 8
MAX_CARD = 1000


@dataclass(frozen=True)
class AscendingCardsConfig(GameConfig):
    cards_per_player: int = 2
    max_card: int = 100
    lives: int = 3
    ticks: int = 20

    def check(self) -> None:
        super().check()
        self.at_least("cards_per_player", 1)
        if not self.players * self.cards_per_player <= self.max_card <= MAX_CARD:
            raise ConfigError(
                f"config key 'max_card' must be from {self.players * self.cards_per_player} (one number per card dealt) "
                f"to {MAX_CARD}, got {self.max_card}"
            )
        self.at_least("lives", 1)
        if self.ticks < self.cards_per_player:
            raise ConfigError(
                f"config key 'ticks' must be at least cards_per_player ({self.cards_per_player}): "
                f"a player plays one card per tick, got {self.ticks}"
            )
        # a match lasts as many steps as ticks when players wait their turn (as mind-timer does):
        # unbounded, a seek for a million ticks was accepted, then voided at the server's max_steps
        self.bound_history("ticks")

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.players * self.cards_per_player))

    def action_space(self) -> tuple[str, ...]:
        return ACTIONS


RULES = """\
Ascending cards, a cooperative game in the spirit of The Mind, for 2 to 8 players (2 by \
default), all on one team. Each player is dealt a few cards (2 by default), numbers from \
1 to the highest card (100 by default), all different; you see only your own. Together \
you must lay every card on one shared pile in ascending order, without any communication.

Time is a shared clock: tick 1, tick 2, ... up to the last tick (20 by default). At every \
tick, each player who still holds cards chooses at the same time: "play" (lay your lowest \
card on the pile now) or "wait". Cards played in the same tick go down lowest first. A \
card is played correctly when no lower card is still in anyone's hand and no lower card \
was played in the same tick (playing at the same moment as a lower card means nobody \
waited for it). Otherwise it is a mistake: the card still goes on the pile but does not \
score, the team loses one life (3 by default), and every card lower than it still held \
by anyone is discarded (shown to all; it cannot score any more).

The end: when no cards are left in any hand, when the last life is lost, or after the \
last tick (cards still held then are lost). Every player scores 1 for each card played \
correctly; the maximum is the number of cards dealt (4 by default). Everyone sees the \
clock, the pile, the discards, how many cards each player holds and the lives left.

There is no talking, so use time: a common convention is to wait longer the higher your \
lowest card is, e.g. play a card numbered c at about tick c / highest card * last tick. \
Answer "play" or "wait"."""


class AscendingCards(Game):
    spec = GameSpec(
        name="ascending-cards",
        title="Ascending cards",
        category="cooperative",
        description="The Mind as a turn game: play hidden numbers in rising order with no talk, only timing.",
        rules=RULES,
        default_config=AscendingCardsConfig(),
        min_players=2,
        max_players=MAX_PLAYERS,
        simultaneous=True,
        chance=True,
        hidden_information=True,
        teams="all",
    )
    Config = AscendingCardsConfig

    config: AscendingCardsConfig
    hands: list[list[int]]
    """Each seat's cards, lowest first; a seat plays from the front."""
    tick: int
    """The tick being played now, from 1."""
    lives: int
    events: list[dict[str, Any]]
    """Each tick where cards were played: ``{"tick", "played": [{"seat", "card", "correct"}],
    "discarded": [{"seat", "card"}]}``, the cards laid in order and those lost to mistakes."""

    def _setup(self) -> None:
        cfg = self.config
        numbers = list(range(1, cfg.max_card + 1))
        rng = self.chance()
        dealt = cfg.players * cfg.cards_per_player
        for i in range(dealt):  # a partial Fisher-Yates shuffle: only the dealt prefix is drawn
            j = i + rng.randrange(cfg.max_card - i)
            numbers[i], numbers[j] = numbers[j], numbers[i]
        k = cfg.cards_per_player
        self.hands = [sorted(numbers[seat * k : (seat + 1) * k]) for seat in range(cfg.players)]
        self.tick = 1
        self.lives = cfg.lives
        self.events = []

    def to_move(self) -> tuple[int, ...]:
        if self.is_over:
            return ()
        return tuple(seat for seat, hand in enumerate(self.hands) if hand)

    def legal_actions(self, seat: int) -> Sequence[str]:
        return ACTIONS if not self.is_over and self.hands[seat] else ()

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        if not self.hands[seat]:
            raise IllegalAction("you have no cards left; the others play on without you")
        move = _CANONICAL.get(action.strip().lower())
        if move is None:
            raise IllegalAction(f"'{action}' is not an action; answer play (your lowest card now) or wait")
        return move

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        played = sorted((self.hands[seat].pop(0), seat) for seat, action in actions.items() if action == PLAY)
        scored = 0
        event: dict[str, Any] = {"tick": self.tick, "played": [], "discarded": []}
        for order, (card, seat) in enumerate(played):
            lower_held = [(other, c) for other, hand in enumerate(self.hands) for c in hand if c < card]
            correct = order == 0 and not lower_held  # a later card of this tick landed with a lower one
            event["played"].append({"seat": seat, "card": card, "correct": correct})
            if correct:
                scored += 1
                continue
            self.lives = max(self.lives - 1, 0)
            for other, c in lower_held:
                self.hands[other].remove(c)
                event["discarded"].append({"seat": other, "card": c})
        if played:
            self.events.append(event)
        if self.lives == 0 or not any(self.hands) or self.tick == self.config.ticks:
            self.is_over = True
        else:
            self.tick += 1
        return (float(scored),) * self.num_players if scored else None

    def private_info(self, seat: int) -> list[int]:
        """A player knows its own cards."""
        return list(self.hands[seat])

    # ---- rendering ---------------------------------------------------------------------

    def score(self) -> int:
        return sum(p["correct"] for e in self.events for p in e["played"])

    def pile(self) -> list[dict[str, Any]]:
        """Every card laid, in the order laid: ``{"seat", "card", "correct"}``."""
        return [p for e in self.events for p in e["played"]]

    def discarded(self) -> list[dict[str, Any]]:
        """Every card lost to a mistake: ``{"seat", "card"}``."""
        return [d for e in self.events for d in e["discarded"]]

    def _event_text(self, event: dict[str, Any]) -> str:
        plays = "; ".join(
            f"seat {p['seat']} played {p['card']}" + ("" if p["correct"] else " (a mistake: -1 life)") for p in event["played"]
        )
        lost = ", ".join(f"{d['card']} (seat {d['seat']})" for d in event["discarded"])
        return f"  tick {event['tick']}: {plays}" + (f"; discarded: {lost}" if lost else "")

    def _status(self) -> str:
        cfg = self.config
        if not self.is_over:
            return f"Tick {self.tick} of {cfg.ticks}. Lives: {self.lives} of {cfg.lives}. Score: {self.score()}."
        if self.lives == 0:
            why = "every life is lost"
        elif any(self.hands):
            why = "the clock ran out"
        else:
            why = "every card has left the hands"
        total = cfg.players * cfg.cards_per_player
        return f"Game over: {why}. Score: {self.score()} of {total} cards played correctly."

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        hand = self.hands[seat]
        counts = ", ".join(f"seat {s} {len(h)}" for s, h in enumerate(self.hands) if s != seat)
        pile = [p["card"] for p in self.pile()]
        lost = [d["card"] for d in self.discarded()]
        mine = " ".join(str(c) for c in hand) or "none left"
        if self.is_over:
            prompt = ""
        elif hand:
            prompt = f"Now: answer play (lay your lowest card, {hand[0]}, now) or wait."
        else:
            prompt = "You have no cards left; the others play on."
        events = [self._event_text(e) for e in self.events]
        lines = [
            f"You are seat {seat} of {self.num_players} in Ascending cards (numbers 1 to {cfg.max_card}; "
            "lay every card on one pile in ascending order, no talking).",
            self._status(),
            f"Your cards: {mine}. Cards the others hold: {counts}.",
            f"Pile (lowest first): {' '.join(map(str, pile)) or 'empty'}. Discarded: {' '.join(map(str, lost)) or 'none'}.",
            "What happened (ticks where nothing was played are not shown):",
            *(events or ["  nothing played yet"]),
            prompt,
        ]
        data: dict[str, Any] = {
            "seat": seat,
            "players": self.num_players,
            "tick": self.tick,
            "ticks": cfg.ticks,
            "max_card": cfg.max_card,
            "lives": self.lives,
            "max_lives": cfg.lives,
            "hand": list(hand),
            "hand_sizes": [len(h) for h in self.hands],
            "pile": pile,
            "discarded": lost,
            "events": [_copy_event(e) for e in self.events],
            "score": self.score(),
        }
        return Observation(text="\n".join(line for line in lines if line), data=data)

    def _view(self, face_up: bool) -> View:
        cfg = self.config
        hands = [(f"Seat {s}", [str(c) if face_up else "?" for c in hand]) for s, hand in enumerate(self.hands)]
        return render.view(
            self._status(),
            render.facts(
                {
                    "Tick": f"{self.tick} of {cfg.ticks}",
                    "Lives": f"{self.lives}/{cfg.lives}",
                    "Score": self.score(),
                    "Top of pile": self.events[-1]["played"][-1]["card"] if self.events else "none",
                }
            ),
            render.cards(
                [
                    *hands,
                    ("Pile", [str(p["card"]) if p["correct"] else f"{p['card']}!" for p in self.pile()]),
                    ("Discarded", [str(d["card"]) for d in self.discarded()]),
                ],
                title="Cards (a pile card marked ! was a mistake)",
            ),
            render.text("\n".join(self._event_text(e) for e in self.events) or "Nothing played yet."),
        )

    def public_view(self) -> View:
        return self._view(face_up=self.is_over)

    def full_view(self) -> View:
        return self._view(face_up=True)


def _copy_event(event: dict[str, Any]) -> dict[str, Any]:
    """A copy a bot may keep or change without touching the game's record."""
    return {
        "tick": event["tick"],
        "played": [dict(p) for p in event["played"]],
        "discarded": [dict(d) for d in event["discarded"]],
    }
