"""Liar's dice: players bid on how many dice show a face among everyone's hidden dice.

A single round of the bluffing game, as OpenSpiel's ``liars_dice`` plays it but with no
wild face by default (OpenSpiel's counts every 6 for any face; ``wild_ones`` here counts
every 1) and for up to 6 players: everyone rolls, then players take turns raising a claim
about all the dice until one calls the last claim a lie. It tests probabilistic reasoning from private evidence (one's own dice
and what the others' bids reveal) and bluffing. All dice are rolled in one chance event
at setup.

Payoffs: the loser of the challenge gets -1 and the others share +1 equally, so the game
is zero-sum for any number of players and the loser is ranked last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from games import render
from games.api import ConfigError, Game, GameConfig, GameSpec, IllegalAction, Observation, View, read_number

LIAR = "liar"
MAX_PLAYERS = 6
MAX_DICE = 10
MAX_FACES = 12
FACE_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_BID_PATTERN = re.compile(r"^(?:bid\s+)?(\d+)(?:\s*[x*,-]\s*|\s+)(\w+)$")


def _face(word: str) -> int:
    """The face a word names ("5", "5s", "five", "fives", "sixes"), or -1."""
    for stem in (word, word.removesuffix("s"), word.removesuffix("es")):
        number = read_number(stem)
        if number is not None:
            return number
        if stem in FACE_WORDS:
            return FACE_WORDS[stem]
    return -1


@dataclass(frozen=True)
class LiarsDiceConfig(GameConfig):
    dice: int = 5
    """Dice per player."""
    faces: int = 6
    wild_ones: bool = False
    """When on, ones count as every face (a bid on ones counts only ones)."""

    def check(self) -> None:
        super().check()
        if not 1 <= self.dice <= MAX_DICE:
            raise ConfigError(f"config key 'dice' must be 1 to {MAX_DICE}, got {self.dice}")
        if not 2 <= self.faces <= MAX_FACES:
            raise ConfigError(f"config key 'faces' must be 2 to {MAX_FACES}, got {self.faces}")

    def return_bounds(self) -> tuple[float, float]:
        return (-1.0, 1.0 / max(self.players - 1, 1))

    def action_space(self) -> tuple[str, ...]:
        return (*bids(self.players * self.dice, self.faces), LIAR)


@lru_cache(maxsize=64)
def bids(total: int, faces: int) -> tuple[str, ...]:
    """Every bid with ``total`` dice in play, weakest first: by quantity, then by face."""
    return tuple(f"{quantity} {face}" for quantity in range(1, total + 1) for face in range(1, faces + 1))


@lru_cache(maxsize=64)
def bid_index(total: int, faces: int) -> dict[str, int]:
    return {bid: i for i, bid in enumerate(bids(total, faces))}


@lru_cache(maxsize=1 << 12)
def legal_after(total: int, faces: int, index: int) -> tuple[str, ...]:
    """The legal actions after the bid at ``index`` (-1: no bid yet): every stronger bid, then liar once a bid stands."""
    stronger = bids(total, faces)[index + 1 :]
    return stronger if index < 0 else (*stronger, LIAR)


def parse_bid(bid: str) -> tuple[int, int]:
    """(quantity, face) of a canonical bid."""
    quantity, face = bid.split()
    return int(quantity), int(face)


def ones_count_for(face: int, wild_ones: bool) -> bool:
    """Whether a 1 counts towards a bid on ``face``: wild ones stand for every other face."""
    return wild_ones and face != 1


def count_matching(dice: Sequence[int], face: int, wild_ones: bool) -> int:
    """How many of ``dice`` count towards a bid on ``face``."""
    if ones_count_for(face, wild_ones):
        return sum(1 for d in dice if d == face or d == 1)
    return sum(1 for d in dice if d == face)


RULES = """\
Liar's dice, one round. Every player has a cup of dice (5 six-sided dice each by \
default) and rolls them in secret: you see only your own dice. Players then take turns \
in seat order (seat 0 first, then 1, 2, ... and round again), each making a claim about \
ALL the dice on the table, everyone's together.

A bid "<quantity> <face>", e.g. "3 5", claims that at least 3 of all the dice show a 5. \
Each bid must be higher than the previous one: either a higher quantity (any face), or \
the same quantity of a higher face. So after "3 5" you may bid "3 6", "4 1", "4 2", ... \
but not "3 4" or "2 6". The first player must bid.

Instead of bidding you may answer "liar" to challenge the last bid. Then all dice are \
shown and the dice showing the bid's face are counted. If there are at least as many as \
the bid claimed, the bid holds and the challenger loses; otherwise the bidder loses. The \
game ends there.

Ones are not wild by default (with the wild_ones option on, every 1 also counts as the \
bid face, except in bids on 1s themselves).

Payoff: the loser gets -1; every other player gets an equal share of +1 (with two players \
the winner gets +1). Answer with a bid such as "3 5" or with "liar"."""


class LiarsDice(Game):
    spec = GameSpec(
        name="liars-dice",
        title="Liar's dice",
        category="competitive",
        description="Bid on everyone's hidden dice or call the last bid a lie: probabilistic reasoning and bluffing.",
        rules=RULES,
        default_config=LiarsDiceConfig(),
        max_players=MAX_PLAYERS,
        chance=True,
        hidden_information=True,
        zero_sum=True,
    )
    Config = LiarsDiceConfig

    config: LiarsDiceConfig
    dice: tuple[tuple[int, ...], ...]
    """Each seat's dice, sorted: private to its holder until the challenge."""
    bid_log: list[tuple[int, int]]
    """(seat, bid index) of every bid, public."""
    current: int
    """The index of the standing bid in ``bids(total, faces)``; -1 before the first."""
    player: int
    challenger: int | None
    loser: int | None
    _total: int
    _movers: tuple[tuple[int, ...], ...]

    def _setup(self) -> None:
        cfg = self.config
        rng = self.chance()
        self.dice = tuple(tuple(sorted(1 + rng.randrange(cfg.faces) for _ in range(cfg.dice))) for _ in range(self.num_players))
        self._total = self.num_players * cfg.dice
        self._movers = tuple((seat,) for seat in range(self.num_players))
        self.bid_log = []
        self.current = -1
        self.player = 0
        self.challenger = None
        self.loser = None

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else self._movers[self.player]

    def legal_actions(self, seat: int) -> Sequence[str]:
        if self.is_over or seat != self.player:
            return ()
        return legal_after(self._total, self.config.faces, self.current)

    def validate(self, seat: int, action: str) -> str:
        faces = self.config.faces
        index = bid_index(self._total, faces).get(action)
        if index is None and action != LIAR:
            action = self._canonical(action)
            index = bid_index(self._total, faces).get(action)
        if self.is_over:
            raise IllegalAction("the game is over")
        if seat != self.player:
            raise IllegalAction(f"it is seat {self.player}'s turn, not seat {seat}'s")
        if action == LIAR:
            if self.current < 0:
                raise IllegalAction(f"there is no bid to challenge yet: make the first bid, e.g. '1 {faces}'")
            return LIAR
        assert index is not None
        if index <= self.current:
            last = bids(self._total, faces)[self.current]
            raise IllegalAction(
                f"'{action}' does not beat the last bid '{last}': bid a higher quantity, "
                "or the same quantity of a higher face, or answer liar"
            )
        return action

    def _canonical(self, action: str) -> str:
        """The canonical form of a loosely written bid ("bid 3 5", "3x5", "3 fives"), or IllegalAction saying what is wrong."""
        text = action.strip().lower()
        if text in ("liar", "challenge", "call", "lie", "liar!"):
            return LIAR
        match = _BID_PATTERN.match(text)
        if match is None:
            raise IllegalAction(f"'{action}' is not a bid or 'liar'; write a bid as '<quantity> <face>', e.g. '3 5'")
        face = _face(match.group(2))
        quantity = read_number(match.group(1))
        if not 1 <= face <= self.config.faces:
            raise IllegalAction(f"'{action}': faces run from 1 to {self.config.faces}")
        if quantity is None or not 1 <= quantity <= self._total:
            raise IllegalAction(f"'{action}': the quantity must be 1 to {self._total}, the number of dice in play")
        return f"{quantity} {face}"

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        player = self.player
        action = actions[player]
        if action != LIAR:
            index = bid_index(self._total, self.config.faces)[action]
            self.bid_log.append((player, index))
            self.current = index
            self.player = (player + 1) % self.num_players
            return None
        bidder = self.bid_log[-1][0]
        self.challenger = player
        self.loser = player if self._bid_holds() else bidder
        self.is_over = True
        share = 1.0 / (self.num_players - 1)
        return tuple(-1.0 if seat == self.loser else share for seat in range(self.num_players))

    def matching_count(self) -> int:
        """How many of all the dice count towards the standing bid's face."""
        _, face = parse_bid(bids(self._total, self.config.faces)[self.current])
        return sum(count_matching(d, face, self.config.wild_ones) for d in self.dice)

    def _bid_holds(self) -> bool:
        quantity, _ = parse_bid(bids(self._total, self.config.faces)[self.current])
        return self.matching_count() >= quantity

    # ---- rendering ---------------------------------------------------------------------

    def _bid_text(self, index: int) -> str:
        return bids(self._total, self.config.faces)[index]

    def _history_text(self) -> str:
        said = [f"seat {seat} bids {self._bid_text(index)}" for seat, index in self.bid_log]
        if self.challenger is not None:
            said.append(f"seat {self.challenger} calls liar")
        return ", ".join(said) or "no bids yet"

    def _status(self) -> str:
        if not self.is_over:
            return f"Seat {self.player} to {'bid or call liar' if self.current >= 0 else 'make the first bid'}."
        assert self.loser is not None and self.challenger is not None
        bid = self._bid_text(self.current)
        verdict = "holds" if self.loser == self.challenger else "fails"
        count = self.matching_count()
        counted = f"{count} {'die counts' if count == 1 else 'dice count'} towards the bid {bid}"
        return f"{counted}, so it {verdict}: seat {self.loser} loses."

    def _dice_text(self, dice: Sequence[int]) -> str:
        return " ".join(str(d) for d in dice)

    def _bid_data(self, index: int) -> dict[str, int]:
        quantity, face = parse_bid(bids(self._total, self.config.faces)[index])
        return {"quantity": quantity, "face": face}

    def private_info(self, seat: int) -> list[int]:
        return list(self.dice[seat])

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        lines = [
            f"Liar's dice with {self.num_players} players, {cfg.dice} dice each ({self._total} in play), faces 1 to {cfg.faces}; "
            f"ones are {'wild' if cfg.wild_ones else 'not wild'}. You are seat {seat}.",
            f"Your dice: {self._dice_text(self.dice[seat])}.",
            f"Bids: {self._history_text()}.",
        ]
        if self.is_over:
            lines.append("All dice: " + "; ".join(f"seat {s}: {self._dice_text(d)}" for s, d in enumerate(self.dice)) + ".")
        elif self.current >= 0:
            quantity, face = parse_bid(self._bid_text(self.current))
            wild = " or a wild 1" if ones_count_for(face, cfg.wild_ones) else ""
            lines.append(
                f"The bid to beat: {quantity} {face} (at least {quantity} of all the dice show {face}{wild}), "
                f"by seat {self.bid_log[-1][0]}."
            )
        lines.append(self._status())
        if not self.is_over and self.player == seat:
            if self.current >= 0:
                lines.append('Answer with a higher bid "<quantity> <face>", e.g. "3 5", or "liar" to challenge the last bid.')
            else:
                lines.append('Answer with your bid "<quantity> <face>", e.g. "3 5".')
        return Observation(
            text="\n".join(lines),
            data={
                "seat": seat,
                "dice": list(self.dice[seat]),
                "dice_per_player": cfg.dice,
                "total_dice": self._total,
                "faces": cfg.faces,
                "wild_ones": cfg.wild_ones,
                "bids": [{"seat": s, **self._bid_data(index)} for s, index in self.bid_log],
                "current_bid": None if self.current < 0 else {"seat": self.bid_log[-1][0], **self._bid_data(self.current)},
                "to_move": None if self.is_over else self.player,
                "all_dice": [list(d) for d in self.dice] if self.is_over else None,
                "loser": self.loser,
            },
        )

    def _view(self, sees_all: bool) -> View:
        shown = [[str(d) for d in dice] if sees_all or self.is_over else ["?"] * len(dice) for dice in self.dice]
        facts: dict[str, object] = {"dice in play": self._total}
        if self.current >= 0:
            facts["bid to beat"] = f"{self._bid_text(self.current)} (seat {self.bid_log[-1][0]})"
        return render.view(
            f"Bids: {self._history_text()}.\n{self._status()}",
            render.cards([(f"seat {seat}", cards) for seat, cards in enumerate(shown)], title="dice"),
            render.facts(facts),
            render.chat([(seat, self._bid_text(index)) for seat, index in self.bid_log], title="bids"),
            render.text(self._status()),
        )

    def public_view(self) -> View:
        return self._view(sees_all=False)

    def full_view(self) -> View:
        return self._view(sees_all=True)
