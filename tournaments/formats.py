"""Tournament formats: pure functions from participants to scheduled matches.

Every scheduled match has a stable key (the tournament, the game, the format, who plays,
which game of the pairing), so that a run stopped at any point and started again can
tell what is missing. Seeds come from the tournament name and the deal, keyed by the
tournament's secret salt (kept in the store), never from a random generator: a run
started again deals the same cards, and no player can compute them from the names.

- round robin: every pairing plays ``games_per_pairing`` games, seats swapped in pairs
  (the two games of a pair share a seed, so each side sees the same deals from each seat);
- Swiss: round by round, players paired by score, never twice the same pairing, a bye
  for an odd count (``swiss_pairings``; the runner calls it with the standings);
- gauntlet: one challenger against each member of a field;
- duplicate: every pairing plays the same seeds, in both seat orders;
- tables: for games of more than two seats, participants rotated over tables.
"""

from __future__ import annotations

import hmac
import itertools
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("round-robin", "swiss", "gauntlet", "duplicate", "tables")


@dataclass(frozen=True)
class ScheduledMatch:
    """One match of a schedule: who sits where, with which seed, under which key."""

    key: str
    round: int
    game: str
    config: Mapping[str, Any]
    seats: tuple[str, ...]
    seed: int
    group_id: str | None = None
    group_size: int | None = None


def seed_of(tournament: str, key: str, salt: str = "") -> int:
    """The seed of a match (or of a deal shared by several matches): fixed by the names and
    the tournament's salt (hex), 62 bits as the server's own. Every name is public, so
    only the secret salt keeps a player from dealing the cards itself; without one (a
    tournament begun before salts) the seed is the crc32 it always was."""
    name = f"{tournament}/{key}".encode()
    if not salt:
        return zlib.crc32(name)
    return int.from_bytes(hmac.digest(bytes.fromhex(salt), name, "sha256")[:8], "big") >> 2


@dataclass(frozen=True)
class Slot:
    """One game (and config) of a tournament: what every key and seed is made from."""

    tournament: str
    game: str
    config: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""  # distinguishes two configs of one game; the game name by default
    salt: str = ""  # the tournament's secret (see seed_of)
    fresh: bool = False  # each game of a pair dealt apart: its players cannot know the deal from the other

    @property
    def prefix(self) -> str:
        return f"{self.tournament}/{self.label or self.game}"

    def match(self, tail: str, round_: int, seats: Sequence[str], deal: str, **group: Any) -> ScheduledMatch:
        return ScheduledMatch(
            key=f"{self.prefix}/{tail}",
            round=round_,
            game=self.game,
            config=dict(self.config),
            seats=tuple(seats),
            seed=seed_of(self.tournament, f"{self.label or self.game}/{deal}", self.salt),
            **group,
        )


def _check(participants: Sequence[str], least: int = 2) -> None:
    if len(set(participants)) != len(participants):
        raise ValueError(f"participants are listed twice: {sorted({p for p in participants if participants.count(p) > 1})}")
    if len(participants) < least:
        raise ValueError(f"this format needs at least {least} participants, got {len(participants)}")


def _pair_games(slot: Slot, tail: str, round_: int, a: str, b: str, games: int) -> list[ScheduledMatch]:
    """``games`` games of a against b, seats swapped in pairs; the two games of a pair share a seed.

    The games of a pair form a group, so that the server keeps the first one's seed, final view
    and turns back until the second has been played: with them, either player could deal the
    second game's cards itself (the opponent's hand, the deck). A tournament begun before salts
    (``Slot.salt`` empty) made its pairs without groups and goes on so.

    With ``Slot.fresh`` every game has a deal of its own, and no group: a bot that remembers
    its cards of the first game of a pair knew its opponent's in the second."""
    out = []
    for g in range(games):
        deal = f"{tail}/{a}~{b}/g{g}" if slot.fresh else f"{tail}/{a}~{b}/pair{g // 2}"
        grouped = slot.salt and not slot.fresh
        group = {"group_id": f"{slot.prefix}/{deal}", "group_size": min(2, games - g // 2 * 2)} if grouped else {}
        out.append(slot.match(f"{tail}/{a}~{b}/g{g}", round_, (a, b) if g % 2 == 0 else (b, a), deal, **group))
    return out


def circle_rounds(participants: Sequence[str]) -> list[list[tuple[str, str]]]:
    """The circle method: rounds in which everyone plays at most once, every pairing once."""
    players: list[str | None] = list(participants)
    if len(players) % 2:
        players.append(None)
    rounds = []
    for _ in range(len(players) - 1):
        half = len(players) // 2
        pairs = [(players[i], players[-1 - i]) for i in range(half)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def round_robin(slot: Slot, participants: Sequence[str], games_per_pairing: int = 2) -> list[ScheduledMatch]:
    """Every pairing plays ``games_per_pairing`` games, seats swapped in pairs."""
    _check(participants)
    out = []
    for r, pairs in enumerate(circle_rounds(participants), start=1):
        for a, b in pairs:
            a, b = sorted((a, b))
            out += _pair_games(slot, "rr", r, a, b, games_per_pairing)
    return out


def gauntlet(slot: Slot, challenger: str, field_: Sequence[str], games_per_pairing: int = 2) -> list[ScheduledMatch]:
    """The challenger plays each member of the field, seats swapped in pairs; round n is the n-th opponent."""
    _check([challenger, *field_])
    out = []
    for r, opponent in enumerate(field_, start=1):
        out += _pair_games(slot, "gauntlet", r, challenger, opponent, games_per_pairing)
    return out


def duplicate(slot: Slot, participants: Sequence[str], deals: int = 1) -> list[ScheduledMatch]:
    """Every pairing plays the same ``deals`` seeds, each in both seat orders.

    The matches of one deal form a group (id and size recorded with each match), so luck
    cancels out: every participant is judged on the same cards as every other one."""
    _check(participants)
    pairs = [tuple(sorted(p)) for p in itertools.combinations(participants, 2)]
    out = []
    for d in range(deals):
        group = {"group_id": f"{slot.prefix}/dup/deal{d}", "group_size": 2 * len(pairs)}
        for a, b in pairs:
            for order, seats in (("ab", (a, b)), ("ba", (b, a))):
                out.append(slot.match(f"dup/deal{d}/{a}~{b}/{order}", d + 1, seats, f"dup/deal{d}", **group))
    return out


def tables(
    slot: Slot, participants: Sequence[str], table_size: int, rounds: int, *, one_deal: bool = False
) -> list[ScheduledMatch]:
    """Games of ``table_size`` seats: each round, the participants (rotated by one seat
    a round, so everyone visits every seat) are dealt over ``ceil(n / table_size)`` tables;
    when n is not a multiple of the table size the last table is filled from the first seats.

    ``one_deal``: the tables of a round play one deal, as a group: duplicate comparison, how
    a cooperative game is rated (its tables are its teams, which have no opponent inside a match)."""
    _check(participants, least=1)
    n = len(participants)
    count = -(-n // table_size)
    out = []
    for r in range(rounds):
        order = [participants[(i + r) % n] for i in range(n)]
        for t in range(count):
            seats = [order[(t * table_size + s) % n] for s in range(table_size)]
            deal = f"tables/r{r + 1}" if one_deal else f"tables/r{r + 1}/t{t}"
            group = {"group_id": f"{slot.prefix}/{deal}", "group_size": count} if one_deal else {}
            out.append(slot.match(f"tables/r{r + 1}/t{t}", r + 1, seats, deal, **group))
    return out


# ---- Swiss ---------------------------------------------------------------------------


def _pairings(
    order: Sequence[str], played: AbstractSet[frozenset[str]], tick: Callable[[], bool] = lambda: True
) -> Iterator[list[tuple[str, str]]]:
    """Every pairing of ``order`` without a repeat, best first: the best-placed player with
    the next one not met yet, and so on down. ``tick`` is asked at every partial pairing
    and stops the walk when it says no (the lookahead's budget)."""
    if not order:
        yield []
        return
    if not tick():
        return
    first, rest = order[0], order[1:]
    for other in rest:
        if frozenset((first, other)) not in played:
            for tail in _pairings([p for p in rest if p != other], played, tick):
                yield [(first, other), *tail]


def _bye_candidates(order: Sequence[str], had_bye: set[str]) -> list[str | None]:
    """Who may sit out, lowest-placed first: nobody for an even count, else those without a bye yet."""
    if len(order) % 2 == 0:
        return [None]
    return [p for p in reversed(order) if p not in had_bye] or list(reversed(order))


class _Lookahead:
    """Whether the rounds after this one can still be paired without a repeat, whatever the
    results. Exact for the fields people run; once ``steps`` partial pairings have been
    tried it answers yes, as pairing round by round alone did, so that a huge field cannot
    hang the run. The answer depends on the arguments alone: a resumed run pairs the same."""

    def __init__(self, players: Sequence[str], steps: int = 20_000) -> None:
        self.players = sorted(players)
        self.steps = steps
        self.known: dict[tuple[frozenset[frozenset[str]], frozenset[str], int], bool] = {}

    def __call__(self, met: frozenset[frozenset[str]], had_bye: frozenset[str], rounds: int) -> bool:
        if rounds <= 0 or self.steps <= 0:
            return True
        n = len(self.players)
        meetings = Counter(p for pair in met for p in pair)
        fewest = n - 1 - max(meetings[p] for p in self.players)
        if fewest >= n // 2 + rounds - (n % 2 == 0):
            return True  # Dirac: each round's unmet graph (the bye set aside) keeps a Hamiltonian cycle
        key = (met, had_bye, rounds)
        if key not in self.known:
            self.known[key] = self._search(met, had_bye, rounds)
        return self.known[key]

    def _search(self, met: frozenset[frozenset[str]], had_bye: frozenset[str], rounds: int) -> bool:
        for bye in _bye_candidates(self.players, set(had_bye)):
            for pairs in _pairings([p for p in self.players if p != bye], met, self._tick):
                later_byes = had_bye if bye is None else had_bye | {bye}
                if self(met | {frozenset(pair) for pair in pairs}, later_byes, rounds - 1):
                    return True
        return self.steps <= 0

    def _tick(self) -> bool:
        self.steps -= 1
        return self.steps > 0


def swiss_pairings(
    standings: Mapping[str, float], played: Iterable[frozenset[str]] = (), byes: Iterable[str] = (), rounds_left: int = 1
) -> tuple[list[tuple[str, str]], str | None]:
    """The pairs of the next Swiss round, and who sits out (None for an even count).

    Players are ordered by score (ties by name) and paired top down, never twice the same
    pairing; the bye goes to the lowest-placed player who has not had one yet. A pairing
    is kept only if the ``rounds_left - 1`` rounds after it can still be paired without a
    repeat: pairing top down alone can leave players whose unmet opponents form odd cycles
    (six players, the later name always winning, had no fourth round). Raises ValueError
    when no pairing without a repeat exists (more rounds than opponents)."""
    met = set(played)
    had_bye = set(byes)
    order = sorted(standings, key=lambda p: (-standings[p], p))
    completable = _Lookahead(order)
    for bye in _bye_candidates(order, had_bye):
        for pairs in _pairings([p for p in order if p != bye], met):
            later = frozenset(met | {frozenset(pair) for pair in pairs})
            later_byes = frozenset(had_bye if bye is None else had_bye | {bye})
            if completable(later, later_byes, rounds_left - 1):
                return pairs, bye
    raise ValueError(f"no Swiss pairing of {len(order)} players without a repeat is left")


def swiss_round(slot: Slot, round_: int, pairs: Sequence[tuple[str, str]], games_per_pairing: int) -> list[ScheduledMatch]:
    """The matches of one Swiss round: the higher-placed player of each pair sits first in game 0."""
    out = []
    for a, b in pairs:
        out += _pair_games(slot, f"swiss/r{round_}", round_, a, b, games_per_pairing)
    return out


def points(returns: Sequence[float], forfeit_seat: int | None = None) -> list[float]:
    """Swiss points of the seats of one finished match: 1 for the best return, 0.5 each for a
    tie, 0 else. A seat that forfeited scores 0 and wins no tie: in a game that is not
    zero-sum its minimum return may equal the other's (TrueSkill ranks it last too)."""
    best = max(r for seat, r in enumerate(returns) if seat != forfeit_seat)
    winners = [seat != forfeit_seat and r == best for seat, r in enumerate(returns)]
    share = 1.0 if winners.count(True) == 1 else 0.5
    return [share if w else 0.0 for w in winners]
