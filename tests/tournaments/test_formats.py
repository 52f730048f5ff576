"""Schedules: every pairing covered, seats balanced, no repeated Swiss pairing, shared duplicate seeds."""

from __future__ import annotations

import itertools
import zlib
from collections import Counter
from collections.abc import Callable

import pytest

from tournaments.formats import (
    ScheduledMatch,
    Slot,
    duplicate,
    gauntlet,
    points,
    round_robin,
    seed_of,
    swiss_pairings,
    swiss_round,
    tables,
)

SLOT = Slot("cup", "tic-tac-toe")
PEOPLE = ["a", "b", "c", "d", "e"]


def test_round_robin_covers_every_pairing_with_seats_swapped_in_pairs() -> None:
    matches = round_robin(SLOT, PEOPLE, games_per_pairing=4)
    by_pair = Counter(frozenset(m.seats) for m in matches)
    assert set(by_pair) == {frozenset(p) for p in itertools.combinations(PEOPLE, 2)}
    assert set(by_pair.values()) == {4}
    firsts = Counter(m.seats[0] for m in matches)
    assert set(firsts.values()) == {8}  # each plays 4 opponents x 2 games from seat 0
    assert len({m.key for m in matches}) == len(matches)
    assert matches == round_robin(SLOT, PEOPLE, games_per_pairing=4)  # deterministic, seeds included


def test_round_robin_rounds_never_seat_a_participant_twice() -> None:
    rounds: dict[int, list[str]] = {}
    for m in round_robin(SLOT, PEOPLE, games_per_pairing=1):
        rounds.setdefault(m.round, []).extend(m.seats)
    assert all(len(people) == len(set(people)) for people in rounds.values())


def test_swiss_never_repeats_a_pairing_and_gives_one_bye_each_for_an_odd_count() -> None:
    standings = dict.fromkeys(PEOPLE, 0.0)
    played: set[frozenset[str]] = set()
    byes: list[str] = []
    for r in range(5):
        pairs, bye = swiss_pairings(standings, played, byes)
        assert bye is not None and bye not in byes
        assert sorted([p for pair in pairs for p in pair] + [bye]) == PEOPLE
        for a, b in pairs:
            assert frozenset((a, b)) not in played
            played.add(frozenset((a, b)))
            standings[min(a, b)] += 1  # the first by name wins
        byes.append(bye)
        standings[bye] += 1 + r * 0.01
    assert len(played) == 10  # all pairings met, none twice
    with pytest.raises(ValueError, match="without a repeat"):
        swiss_pairings(standings, played, byes)


def test_swiss_pairs_so_that_every_round_asked_for_can_still_be_paired() -> None:
    """Six players may play five rounds; pairing each round top down alone (the later name
    always winning) left two triangles of unmet players after round 3, and round 4 failed."""
    people = ["a", "b", "c", "d", "e", "f"]
    standings = dict.fromkeys(people, 0.0)
    played: set[frozenset[str]] = set()
    for r in range(5):
        pairs, bye = swiss_pairings(standings, played, rounds_left=5 - r)
        assert bye is None and not played & {frozenset(pair) for pair in pairs}
        played |= {frozenset(pair) for pair in pairs}
        for a, b in pairs:
            standings[max(a, b)] += 1
    assert len(played) == 15


def test_swiss_pairs_by_score() -> None:
    pairs, bye = swiss_pairings({"a": 0, "b": 3, "c": 2, "d": 1})
    assert bye is None and pairs == [("b", "c"), ("d", "a")]


def test_duplicate_plays_identical_seeds_across_pairings_in_both_seat_orders() -> None:
    matches = duplicate(SLOT, ["a", "b", "c"], deals=2)
    for deal in (1, 2):
        group = [m for m in matches if m.round == deal]
        assert len({m.seed for m in group}) == 1 and len(group) == 6
        assert {m.group_size for m in group} == {6} and len({m.group_id for m in group}) == 1
        assert {m.seats for m in group} == {p for pair in itertools.combinations("abc", 2) for p in (pair, pair[::-1])}
    assert len({m.seed for m in matches}) == 2


PAIRED: list[Callable[[Slot, int], list[ScheduledMatch]]] = [
    lambda slot, games: round_robin(slot, PEOPLE, games_per_pairing=games),
    lambda slot, games: gauntlet(slot, "champ", ["x", "y"], games_per_pairing=games),
    lambda slot, games: swiss_round(slot, 1, [("a", "b"), ("c", "d")], games_per_pairing=games),
]
"""The formats whose pairings play their games in pairs, seats swapped."""


@pytest.mark.parametrize("schedule", PAIRED)
def test_the_games_of_a_pair_sharing_a_seed_form_a_group_so_the_server_withholds_the_deal(
    schedule: Callable[[Slot, int], list[ScheduledMatch]],
) -> None:
    """Both games of a pair deal the same cards with seats swapped: the first one's seed must not
    be public before the second is played. Five games a pairing: two pairs and a lone fifth game."""
    matches = schedule(Slot("cup", "kuhn-poker", salt="00" * 16), 5)
    by_group: dict[str | None, list[ScheduledMatch]] = {}
    for m in matches:
        by_group.setdefault(m.group_id, []).append(m)
    assert None not in by_group
    for group in by_group.values():
        assert len({m.seed for m in group}) == 1 and {m.group_size for m in group} == {len(group)}
        assert len({frozenset(m.seats) for m in group}) == 1 and len({m.seats for m in group}) == len(group)
    assert sorted(len(group) for group in by_group.values()) == sorted([2, 2, 1] * (len(matches) // 5))
    assert len({m.seed for m in matches}) == len(by_group)  # no deal is shared across groups
    unsalted = schedule(Slot("cup", "kuhn-poker"), 5)  # a tournament begun before salts goes on without groups
    assert {(m.group_id, m.group_size) for m in unsalted} == {(None, None)}


@pytest.mark.parametrize("schedule", PAIRED)
def test_fresh_deals_give_every_game_of_a_pair_its_own_seed_and_no_group(
    schedule: Callable[[Slot, int], list[ScheduledMatch]],
) -> None:
    """A bot that remembers its cards of a pair's first game knew its opponent's in the second
    (found by QA); the keys, seats and rounds stay those of shared deals."""
    shared = schedule(Slot("cup", "kuhn-poker", salt="00" * 16), 4)
    fresh = schedule(Slot("cup", "kuhn-poker", salt="00" * 16, fresh=True), 4)
    assert [(m.key, m.seats, m.round) for m in fresh] == [(m.key, m.seats, m.round) for m in shared]
    assert len({m.seed for m in fresh}) == len(fresh)
    assert {(m.group_id, m.group_size) for m in fresh} == {(None, None)}


def test_gauntlet_plays_the_challenger_against_each_of_the_field() -> None:
    matches = gauntlet(SLOT, "champ", ["x", "y"], games_per_pairing=2)
    assert all("champ" in m.seats for m in matches)
    assert Counter(m.seats[0] for m in matches) == Counter({"champ": 2, "x": 1, "y": 1})


def test_tables_rotate_participants_over_seats() -> None:
    matches = tables(Slot("cup", "public-goods"), ["a", "b", "c", "d"], table_size=4, rounds=4)
    assert all(len(m.seats) == 4 and len(set(m.seats)) == 4 for m in matches)
    assert {m.seats[0] for m in matches} == {"a", "b", "c", "d"}


@pytest.mark.parametrize(
    ("returns", "forfeit_seat", "expected"),
    [
        ([3.0, 1.0], None, [1.0, 0.0]),
        ([2.0, 2.0], None, [0.5, 0.5]),
        ([0.0, 0.0], 0, [0.0, 1.0]),  # a forfeit whose minimum return ties the other's still loses
        ([5.0, 0.0], 0, [0.0, 1.0]),
        ([1.0, 0.0, 1.0], 2, [1.0, 0.0, 0.0]),
        ([1.0, 1.0, 0.0], 2, [0.5, 0.5, 0.0]),
    ],
)
def test_swiss_points_share_ties_and_give_a_forfeit_nothing(
    returns: list[float], forfeit_seat: int | None, expected: list[float]
) -> None:
    assert points(returns, forfeit_seat) == expected


def test_a_salted_seed_is_fixed_by_the_salt_and_not_computable_from_the_names() -> None:
    """Every name a seed is made from is public (a live match shows its tournament); the
    salt is what keeps a player from dealing the cards itself."""
    salt, other = "00" * 16, "ff" * 16
    seed = seed_of("cup", "tic-tac-toe/dup/deal0", salt)
    assert seed == seed_of("cup", "tic-tac-toe/dup/deal0", salt) and 0 <= seed < 2**62
    assert seed != seed_of("cup", "tic-tac-toe/dup/deal0", other) != zlib.crc32(b"cup/tic-tac-toe/dup/deal0")
    assert seed_of("cup", "tic-tac-toe/dup/deal0") == zlib.crc32(b"cup/tic-tac-toe/dup/deal0")  # a tournament begun unsalted
    salted = duplicate(Slot("cup", "tic-tac-toe", salt=salt), ["a", "b", "c"], deals=2)
    plain = duplicate(SLOT, ["a", "b", "c"], deals=2)
    assert [m.key for m in salted] == [m.key for m in plain] and not {m.seed for m in salted} & {m.seed for m in plain}
    assert len({m.seed for m in salted}) == 2  # the matches of a deal still share it
