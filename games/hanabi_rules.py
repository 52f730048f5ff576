"""The rules of Hanabi, written once for every variant the catalog registers.

Hanabi is the benchmark of cooperation under hidden information: each player sees every
hand but its own and learns about its own cards only from hints, paid for with a scarce
token. ``mini-hanabi`` (two players, a small deck) and ``hanabi`` (two to five players,
the full deck by default) are both subclasses of ``HanabiRules``; they differ only in
their spec and default config. The deck is shuffled once at setup (one chance event).

With two players a hint needs no target ("hint r": the partner); with more, it names
the seat ("hint 2 r"). Observation data keeps the two-player keys (``partner_hand``,
``partner_knowledge``: the next seat's) at every player count, and adds ``others``, every
other seat's hand and knowledge in turn order from the next seat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, Game, GameConfig, IllegalAction, Observation, View, read_number

COLOURS = "RYGBW"
"""Colour letters in deck order; a config with ``colours=k`` uses the first k."""
COLOUR_NAMES = ("red", "yellow", "green", "blue", "white")
MAX_COLOURS = len(COLOURS)
MAX_RANKS = 5
MAX_HINTS = 100
"""The most hint tokens. Every hint is a turn that each observation retells, and a match lasts
at most the tokens plus two turns per card (a discard regains a token), so 100 keeps a full
deck's match near 200 turns. Unbounded, a billion tokens never ran out: hints alone could fill
the server's step limit, and the tokens no longer made hints scarce."""

Card = tuple[int, int]
"""(colour index, rank from 1)."""

_MASK_COLOURS = tuple("".join(COLOURS[c] for c in range(MAX_COLOURS) if mask >> c & 1) for mask in range(1 << MAX_COLOURS))
"""The colour letters a knowledge bit mask allows, by mask: observations are built often."""
_MASK_RANKS = tuple("".join(str(r + 1) for r in range(MAX_RANKS) if mask >> r & 1) for mask in range(1 << MAX_RANKS))
"""The rank digits a knowledge bit mask allows, by mask."""


def copies(rank: int, ranks: int) -> int:
    """How many copies of each card of ``rank`` the deck holds: as in Hanabi, three of
    rank 1, one of the top rank and two of every rank between (rank 1 wins when it is
    also the top rank)."""
    if rank == 1:
        return 3
    return 1 if rank == ranks else 2


def deck_size(colours: int, ranks: int) -> int:
    return colours * sum(copies(r, ranks) for r in range(1, ranks + 1))


def card_name(card: Card) -> str:
    """A card as written in observations: colour letter then rank, like ``R2``."""
    return f"{COLOURS[card[0]]}{card[1]}"


@dataclass(frozen=True)
class HanabiRulesConfig(GameConfig):
    """The keys every Hanabi variant has; variants redeclare them with their own defaults."""

    colours: int = 2
    ranks: int = 3
    hand_size: int = 2
    hints: int = 3
    lives: int = 1

    def standard_hand_size(self) -> int | None:
        """The hand size ``hand_size=0`` stands for, or None where 0 is not allowed."""
        return None

    def cards_in_hand(self) -> int:
        """The number of cards each player is dealt."""
        return self.hand_size or self.standard_hand_size() or 0

    def check(self) -> None:
        super().check()
        if not 1 <= self.colours <= MAX_COLOURS:
            raise ConfigError(f"config key 'colours' must be 1 to {MAX_COLOURS}, got {self.colours}")
        if not 1 <= self.ranks <= MAX_RANKS:
            raise ConfigError(f"config key 'ranks' must be 1 to {MAX_RANKS}, got {self.ranks}")
        if self.hand_size < 0 or self.cards_in_hand() < 1:
            allowed = "at least 1" if self.standard_hand_size() is None else "at least 1, or 0 for the standard size"
            raise ConfigError(f"config key 'hand_size' must be {allowed}, got {self.hand_size}")
        size = deck_size(self.colours, self.ranks)
        if self.players * self.cards_in_hand() >= size:
            raise ConfigError(
                f"config key 'hand_size' is too large: {self.players} hands of {self.cards_in_hand()} "
                f"must leave cards in the deck of {size}"
            )
        self.at_least("hints", 1)
        self.at_most("hints", MAX_HINTS)
        self.at_least("lives", 1)

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.colours * self.ranks))

    def action_space(self) -> tuple[str, ...]:
        slots = range(1, self.cards_in_hand() + 1)
        values = [c.lower() for c in COLOURS[: self.colours]] + [str(r) for r in range(1, self.ranks + 1)]
        targets = [""] if self.players == 2 else [f"{seat} " for seat in range(self.players)]
        return (
            tuple(f"play {i}" for i in slots)
            + tuple(f"discard {i}" for i in slots)
            + tuple(f"hint {target}{value}" for target in targets for value in values)
        )


@dataclass(slots=True)
class CardKnowledge:
    """What a card's holder has learnt from hints: the colours and ranks it can still be
    (bit masks, bit i for colour i and for rank i + 1) and whether a hint named it."""

    colours: int
    ranks: int
    touched: bool = False


def rules_text(intro: str, config: HanabiRulesConfig, hand: str) -> str:
    """The rules an LLM reads: ``intro`` names the variant and its seats, the rest is filled
    in from its default config (``hand`` says how many cards a hand holds)."""
    return f"""\
{intro} All players are on the same team and share one score.

The deck: cards have a colour (R red, Y yellow, G green, B blue, W white; the game uses \
the first {config.colours} colours by default) and a rank from 1 up to the top rank \
({config.ranks} by default). Each colour has three 1s, one card of the top rank and two \
of every rank in between. The deck is shuffled and each player is dealt a hand ({hand} \
by default). Cards are written colour letter then rank, e.g. R2.

What you see: you see every other player's hand but NOT your own. You learn about your \
own cards only from the other players' hints; for each of your cards you are told which \
colours and ranks it can still be, given every hint so far (a hint also tells you which \
cards are NOT of the hinted colour or rank).

The goal: build one firework per colour, playing its cards in rank order 1, 2, 3, ... up \
to the top rank. The score is the sum of the fireworks' heights (the number of cards \
played correctly); the maximum is colours times ranks ({config.colours * config.ranks} by \
default).

Turns: seat 0 starts; players take turns in seat order (0, 1, ..., then 0 again). On your \
turn do exactly one of:
- "play <slot>": play your card in that slot (slots are numbered 1, 2, ... from the \
left). If its rank is exactly one above its colour's firework, it extends that firework \
(+1 score); completing a firework (playing its top rank) also regains one hint token. \
Otherwise it is a misplay: the card is discarded and the team loses a life.
- "discard <slot>": discard that card and regain one hint token. Not allowed when all \
hint tokens are available ({config.hints} by default).
- "hint <seat> <colour letter>" or "hint <seat> <rank>" (e.g. "hint 1 r", "hint 2 3"): \
tell that player which of their cards have that colour or rank. With two players the \
seat may be left out ("hint r", "hint 2": a hint to your partner). Costs one hint token \
(you need one), and the hint must touch at least one of their cards.
After a play or discard you draw a new card, if the deck has any: your remaining cards \
keep their order and shift left to fill the gap, and the new card goes to the rightmost \
slot.

The end: the game ends when the team has lost all its lives ({config.lives} by default; \
the score then drops to 0), when every firework is complete, or when the deck runs out: \
after the last card is drawn each player takes one more turn (the player who drew it \
included), then the game ends. Every player receives the final score; each step's reward \
is the change of the shared score.

Answer with one action, e.g. "play 1", "discard 2", "hint 1 y" or "hint 1 3"."""


class HanabiRules(Game):
    """Hanabi for any player count and deck; subclasses add the spec and the config."""

    config: HanabiRulesConfig
    hands: list[list[Card]]
    knowledge: list[list[CardKnowledge]]
    deck: list[Card]
    fireworks: list[int]
    discards: list[Card]
    hints: int
    lives: int
    player: int
    final_turns: int | None
    events: list[dict[str, Any]]

    def _setup(self) -> None:
        cfg = self.config
        self.deck = [
            (colour, rank)
            for colour in range(cfg.colours)
            for rank in range(1, cfg.ranks + 1)
            for _ in range(copies(rank, cfg.ranks))
        ]
        self.chance().shuffle(self.deck)
        size = cfg.cards_in_hand()
        self.hands = [[self.deck.pop() for _ in range(size)] for _ in range(self.num_players)]
        self.knowledge = [[self._blank() for _ in range(size)] for _ in range(self.num_players)]
        self.fireworks = [0] * cfg.colours
        self.discards = []
        self.hints = cfg.hints
        self.lives = cfg.lives
        self.player = 0
        self.final_turns = None
        self.events = []

    def _blank(self) -> CardKnowledge:
        return CardKnowledge((1 << self.config.colours) - 1, (1 << self.config.ranks) - 1)

    def partner(self, seat: int) -> int:
        """The seat that plays after ``seat``: with two players, the one a bare hint is for."""
        return (seat + 1) % self.num_players

    def others(self, seat: int) -> list[int]:
        """Every other seat, in turn order from the next one."""
        return [(seat + k) % self.num_players for k in range(1, self.num_players)]

    def score(self) -> int:
        """The shared score: the fireworks' heights, or 0 once every life is lost."""
        return sum(self.fireworks) if self.lives > 0 else 0

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else (self.player,)

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        slots = range(1, len(self.hands[seat]) + 1)
        actions = [f"play {i}" for i in slots]
        if self.hints < self.config.hints:
            actions += [f"discard {i}" for i in slots]
        if self.hints > 0:
            for target in self.others(seat):
                prefix = "" if self.num_players == 2 else f"{target} "
                hand = self.hands[target]
                actions += [f"hint {prefix}{COLOURS[c].lower()}" for c in sorted({c for c, _ in hand})]
                actions += [f"hint {prefix}{r}" for r in sorted({r for _, r in hand})]
        return tuple(actions)

    def _hint_syntax(self) -> str:
        if self.num_players == 2:
            return "'hint <colour letter>' or 'hint <rank>', e.g. 'play 1' or 'hint r'"
        return "'hint <seat> <colour letter>' or 'hint <seat> <rank>', e.g. 'play 1' or 'hint 1 r'"

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        words = action.strip().lower().split()
        verb = words[0] if words else ""
        arity = len(words) == 2 or (verb == "hint" and len(words) == 3)
        if verb not in ("play", "discard", "hint") or not arity:
            raise IllegalAction(f"'{action}' is not an action; write 'play <slot>', 'discard <slot>', {self._hint_syntax()}")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if verb == "hint":
            return self._validate_hint(seat, words[1:])
        arg = words[1]
        size = len(self.hands[seat])
        slot = read_number(arg)
        if slot is None or not 1 <= slot <= size:
            raise IllegalAction(f"'{arg}' is not a slot of your hand; slots are 1 to {size}")
        if verb == "discard" and self.hints == self.config.hints:
            raise IllegalAction(
                f"you cannot discard while all {self.config.hints} hint tokens are available; play or hint instead"
            )
        return f"{verb} {slot}"

    def _validate_hint(self, seat: int, args: list[str]) -> str:
        if len(args) == 1:
            if self.num_players != 2:
                raise IllegalAction(f"name the player the hint is for: {self._hint_syntax()}")
            target = self.partner(seat)
        else:
            word = args[0]
            number = read_number(word)
            if number is None or number >= self.num_players:
                raise IllegalAction(f"'{word}' is not a seat; seats are 0 to {self.num_players - 1}")
            target = number
            if target == seat:
                raise IllegalAction("you cannot hint yourself; name another player's seat")
        cfg = self.config
        arg = args[-1]
        colour = _colour_index(arg)
        rank = read_number(arg)
        if colour is not None and colour < cfg.colours:
            touched = any(c == colour for c, _ in self.hands[target])
            what, value = f"{COLOUR_NAMES[colour]} ({COLOURS[colour]}) card", COLOURS[colour].lower()
        elif rank is not None and 1 <= rank <= cfg.ranks:
            touched = any(r == rank for _, r in self.hands[target])
            what, value = f"card of rank {rank}", str(rank)
        else:
            letters = ", ".join(COLOURS[: cfg.colours].lower())
            raise IllegalAction(f"'{arg}' is neither a colour ({letters}) nor a rank (1 to {cfg.ranks})")
        if self.hints == 0:
            raise IllegalAction("no hint tokens are left; play or discard a card instead")
        if not touched:
            holder = "your partner holds" if self.num_players == 2 else f"seat {target} holds"
            raise IllegalAction(f"{holder} no {what}; a hint must touch at least one card")
        return f"hint {value}" if self.num_players == 2 else f"hint {target} {value}"

    def hint_parts(self, seat: int, action: str) -> tuple[int, str]:
        """The target seat and the hinted value of a canonical hint by ``seat``."""
        words = action.split(" ")
        return (int(words[1]), words[2]) if len(words) == 3 else (self.partner(seat), words[1])

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        seat = self.player
        action = actions[seat]
        verb, arg = action.split(" ", 1)
        before = self.score()
        event: dict[str, Any] = {"seat": seat, "action": action}
        if verb == "hint":
            event["touched"] = self._hint(*self.hint_parts(seat, action))
        else:
            slot = int(arg) - 1
            card = self.hands[seat].pop(slot)
            del self.knowledge[seat][slot]
            event["card"] = card_name(card)
            if verb == "play":
                event["result"] = self._play(card)
            else:
                self.discards.append(card)
                self.hints += 1
            self._draw(seat)
        self.events.append(event)
        if self.final_turns is not None:
            self.final_turns -= 1
        if self.lives == 0 or sum(self.fireworks) == self.config.colours * self.config.ranks or self.final_turns == 0:
            self.is_over = True
        else:
            self.player = self.partner(seat)
        delta = float(self.score() - before)
        return (delta,) * self.num_players if delta else None

    def _hint(self, target: int, arg: str) -> list[int]:
        """Apply a hint to ``target``'s knowledge; return the slots (from 1) it touched."""
        touched = []
        for slot, (card, known) in enumerate(zip(self.hands[target], self.knowledge[target], strict=True), start=1):
            if arg.isdigit():
                bit, matches = 1 << (int(arg) - 1), card[1] == int(arg)
                known.ranks = bit if matches else known.ranks & ~bit
            else:
                bit, matches = 1 << COLOURS.index(arg.upper()), COLOURS[card[0]].lower() == arg
                known.colours = bit if matches else known.colours & ~bit
            if matches:
                known.touched = True
                touched.append(slot)
        self.hints -= 1
        return touched

    def _play(self, card: Card) -> str:
        colour, rank = card
        if self.fireworks[colour] + 1 != rank:
            self.discards.append(card)
            self.lives -= 1
            return "misplay"
        self.fireworks[colour] = rank
        if rank == self.config.ranks and self.hints < self.config.hints:
            self.hints += 1
        return "played"

    def _draw(self, seat: int) -> None:
        if not self.deck:
            return
        self.hands[seat].append(self.deck.pop())
        self.knowledge[seat].append(self._blank())
        if not self.deck:
            # The drawer's own turn is counted off at once, leaving one turn per player.
            self.final_turns = self.num_players + 1

    # ---- rendering ---------------------------------------------------------------------

    def _knowledge_data(self, seat: int) -> list[dict[str, Any]]:
        return [
            {"colours": _MASK_COLOURS[k.colours], "ranks": _MASK_RANKS[k.ranks], "touched": k.touched}
            for k in self.knowledge[seat]
        ]

    def _knowledge_text(self, known: dict[str, Any]) -> str:
        colours = "/".join(known["colours"])
        ranks = "/".join(known["ranks"])
        hinted = "named by a hint" if known["touched"] else "not yet named by a hint"
        return f"colour {colours}, rank {ranks}; {hinted}"

    def _fireworks_text(self) -> str:
        return ", ".join(f"{COLOURS[c]} {h}/{self.config.ranks}" for c, h in enumerate(self.fireworks))

    def _event_text(self, event: dict[str, Any]) -> str:
        who = f"seat {event['seat']}"
        verb, arg = event["action"].split(" ", 1)
        if verb == "hint":
            target, value = self.hint_parts(event["seat"], event["action"])
            slots = ", ".join(str(s) for s in event["touched"])
            what = f"colour {value.upper()}" if not value.isdigit() else f"rank {value}"
            return f"{who} hinted {what} to seat {target}, touching slot(s) {slots}"
        if verb == "discard":
            return f"{who} discarded slot {arg}: {event['card']}"
        outcome = "it extended the firework" if event["result"] == "played" else "a misplay, losing a life"
        return f"{who} played slot {arg}: {event['card']}, {outcome}"

    def _status(self) -> str:
        if self.is_over:
            if self.lives == 0:
                return "Game over: every life is lost, so the score is 0."
            return f"Game over. Final score: {self.score()} of {self.config.colours * self.config.ranks}."
        turns = "" if self.final_turns is None else f" The deck is empty: {self.final_turns} final turn(s) left."
        return f"Seat {self.player} to move.{turns}"

    def _table_text(self) -> str:
        cfg = self.config
        discards = " ".join(card_name(c) for c in self.discards) or "none"
        return (
            f"Fireworks: {self._fireworks_text()} (score {self.score()} of {cfg.colours * cfg.ranks}).\n"
            f"Hint tokens: {self.hints} of {cfg.hints}. Lives: {self.lives} of {cfg.lives}. "
            f"Deck: {len(self.deck)} card(s) left.\n"
            f"Discards: {discards}."
        )

    def _history_text(self) -> str:
        if not self.events:
            return "No actions yet."
        return "Actions so far:\n" + "\n".join(f"  {i}. {self._event_text(e)}" for i, e in enumerate(self.events, start=1))

    def private_info(self, seat: int) -> list[list[str]]:
        """The hands ``seat`` can see: every hand but its own."""
        return [[card_name(card) for card in hand] for other, hand in enumerate(self.hands) if other != seat]

    def _intro(self, seat: int) -> str:
        if self.is_over:
            whose = ""
        elif self.player == seat:
            whose = " It is your turn."
        else:
            whose = f" It is seat {self.player}'s turn."
        title = self.spec.title
        if self.num_players == 2:
            return f"You are seat {seat} in {title}; your partner is seat {self.partner(seat)}.{whose}"
        return (
            f"You are seat {seat} in {title}, one of {self.num_players} players (seats 0 to {self.num_players - 1}); "
            f"seat {self.partner(seat)} plays after you.{whose}"
        )

    def observe(self, seat: int) -> Observation:
        others = [
            {"seat": other, "hand": [card_name(c) for c in self.hands[other]], "knowledge": self._knowledge_data(other)}
            for other in self.others(seat)
        ]
        mine = self._knowledge_data(seat)
        lines = [
            self._intro(seat),
            self._table_text(),
            "Your hand (you cannot see it; what the hints told you):",
            *(f"  slot {i}: {self._knowledge_text(k)}" for i, k in enumerate(mine, start=1)),
        ]
        for other in others:
            whose = f"Your partner's hand (seat {other['seat']})" if self.num_players == 2 else f"Seat {other['seat']}'s hand"
            lines.append(f"{whose}, with what they know of each card:")
            lines += [
                f"  slot {i}: {card}; they know: {self._knowledge_text(k)}"
                for i, (card, k) in enumerate(zip(other["hand"], other["knowledge"], strict=True), start=1)
            ]
        lines += [self._history_text(), self._status()]
        data = {
            "seat": seat,
            "players": self.num_players,
            "partner_hand": list(others[0]["hand"]),
            "my_knowledge": mine,
            "partner_knowledge": [dict(k) for k in others[0]["knowledge"]],
            "others": others,
            "fireworks": {COLOURS[c]: h for c, h in enumerate(self.fireworks)},
            "top_rank": self.config.ranks,
            "hints": self.hints,
            "max_hints": self.config.hints,
            "lives": self.lives,
            "deck_size": len(self.deck),
            "discards": [card_name(c) for c in self.discards],
            "score": self.score(),
            "turn": len(self.events),
            "to_move": None if self.is_over else self.player,
            "final_turns": self.final_turns,
            "last_action": _copy_event(self.events[-1]) if self.events else None,
        }
        return Observation(text="\n".join(lines), data=data)

    def _view(self, face_up: bool) -> View:
        hands = [(f"Seat {seat}", [card_name(c) if face_up else "?" for c in hand]) for seat, hand in enumerate(self.hands)]
        knowledge = "\n".join(
            f"Seat {seat} slot {i}: {self._knowledge_text(k)}"
            for seat in range(self.num_players)
            for i, k in enumerate(self._knowledge_data(seat), start=1)
        )
        last = self._event_text(self.events[-1]) if self.events else "No actions yet."
        return render.view(
            f"{self._table_text()}\nLast action: {last}\n{self._status()}",  # what a step changed, printed at each
            render.cards([*hands, ("Discards", [card_name(c) for c in self.discards])], title="Hands"),
            render.facts(
                {
                    "Fireworks": self._fireworks_text(),
                    "Score": self.score(),
                    "Hint tokens": f"{self.hints}/{self.config.hints}",
                    "Lives": f"{self.lives}/{self.config.lives}",
                    "Deck": len(self.deck),
                }
            ),
            render.text(f"What each seat knows of its hand:\n{knowledge}"),
            # The whole log, not the last action: a spectator who comes in late learns every
            # hint given, as the seats' observations retell them.
            render.text(f"{self._history_text()}\n{self._status()}"),
        )

    def public_view(self) -> View:
        return self._view(face_up=self.is_over)

    def full_view(self) -> View:
        return self._view(face_up=True)


def _copy_event(event: dict[str, Any]) -> dict[str, Any]:
    """A copy a bot may keep or change without touching the game's record."""
    return {k: list(v) if isinstance(v, list) else v for k, v in event.items()}


def _colour_index(word: str) -> int | None:
    """The colour a hint argument names, by letter or full name, or None."""
    if len(word) == 1 and word.upper() in COLOURS:
        return COLOURS.index(word.upper())
    return COLOUR_NAMES.index(word) if word in COLOUR_NAMES else None
