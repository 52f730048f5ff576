"""Pairing in one pass: every table the seeks allow is formed, within each bot's capacity."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.lobby import Lobby, Pairing

PLAYERS = {"duel": 2, "trio": 3}
BOTS = ("ann", "bob", "cy", "dee", "eve")

seek_lists = st.lists(
    st.tuples(
        st.sampled_from(BOTS),
        st.lists(st.sampled_from(sorted(PLAYERS)), min_size=1, max_size=3),  # a game may be named twice
        st.sampled_from([{}, {"size": 4}]),
        st.booleans(),
    ),
    max_size=24,
)


def lobby_with(seeks: list[tuple[str, list[str], dict[str, int], bool]], capacity: dict[str, int]) -> Lobby:
    lobby = Lobby(players=lambda game, config: PLAYERS[game], capacity=lambda bot: capacity[bot])
    for bot, games, config, self_play in seeks:
        lobby.seek(bot, games, config, self_play)
    return lobby


@settings(max_examples=300, deadline=None)
@given(seek_lists, st.fixed_dictionaries({bot: st.integers(0, 3) for bot in BOTS}))
def test_one_pass_forms_every_table_within_capacity(
    seeks: list[tuple[str, list[str], dict[str, int], bool]], capacity: dict[str, int]
) -> None:
    lobby = lobby_with(seeks, capacity)
    before = list(lobby.seeks)
    tables = lobby.pair()

    used = [seek for table in tables for seek in table.seeks]
    assert len({seek.id for seek in used}) == len(used)
    assert [s for s in before if s not in used] == lobby.seeks
    per_bot: Counter[str] = Counter()
    for table in tables:
        assert len(table.bots) == PLAYERS[table.game]
        assert all(table.game in seek.games and seek.keys[table.game] == table.seeks[0].keys[table.game] for seek in table.seeks)
        for bot, count in Counter(table.bots).items():
            assert count == 1 or all(seek.self_play for seek in table.seeks if seek.bot == bot)
        per_bot.update(set(table.bots))
    assert all(per_bot[bot] <= capacity[bot] for bot in BOTS)

    left = {bot: capacity[bot] - per_bot[bot] for bot in BOTS}
    again = Lobby(players=lobby.players, capacity=lambda bot: left[bot], seeks=list(lobby.seeks))
    assert again.pair() == []  # nothing the pass missed


def test_the_oldest_seeks_are_seated_first() -> None:
    lobby = lobby_with(
        [("ann", ["duel"], {}, False), ("bob", ["duel"], {}, False), ("cy", ["duel"], {}, False)], dict.fromkeys(BOTS, 1)
    )
    (table,) = lobby.pair()
    assert set(table.bots) == {"ann", "bob"}
    assert [seek.bot for seek in lobby.seeks] == ["cy"]


def plain_pair(lobby: Lobby) -> list[Pairing]:
    """The pairing rule written the plain way, as the oracle: for each waiting seek, oldest
    first, sort every other compatible seek by (distance of rating, age) and seat the first."""
    formed: list[Pairing] = []
    seated: Counter[str] = Counter()
    waiting = list(lobby.seeks)
    for first in list(waiting):
        if first not in waiting or lobby.capacity(first.bot) <= seated[first.bot]:
            continue
        for game in first.games:
            mine = lobby.rating(first.bot, game)

            def distance(seek: object, game: str = game, mine: float | None = mine) -> float:
                theirs = lobby.rating(seek.bot, game)  # type: ignore[attr-defined]
                return 0.0 if mine is None or theirs is None else abs(mine - theirs)

            candidates = sorted(
                (
                    s
                    for s in waiting
                    if s is not first
                    and game in s.games
                    and s.keys[game] == first.keys[game]
                    and (s.bot != first.bot or (s.self_play and first.self_play))
                    and lobby.capacity(s.bot) > seated[s.bot]
                ),
                key=lambda s: (distance(s), s.id),
            )
            table = [first]
            for candidate in candidates:
                if len(table) == lobby.players(game, first.config_of(game)):
                    break
                here = [s for s in table if s.bot == candidate.bot]
                if here and not (candidate.self_play and all(s.self_play for s in here)):
                    continue
                table.append(candidate)
            if len(table) == lobby.players(game, first.config_of(game)):
                lobby.rng.shuffle(table)
                formed.append(Pairing(game, tuple(s.bot for s in table), dict(first.config), tuple(table)))
                waiting = [s for s in waiting if s not in table]
                seated.update({s.bot for s in table})
                break
    return formed


@settings(max_examples=300, deadline=None)
@given(
    seek_lists,
    st.fixed_dictionaries({bot: st.integers(0, 3) for bot in BOTS}),
    st.fixed_dictionaries({bot: st.sampled_from([None, 10.0, 20.0, 25.0, 30.0, 40.0]) for bot in BOTS}),
)
def test_pairing_seats_the_nearest_rating_then_the_oldest(
    seeks: list[tuple[str, list[str], dict[str, int], bool]], capacity: dict[str, int], skill: dict[str, float | None]
) -> None:
    """The walk outwards from a seek's rating finds the tables the plain sort finds, in the
    same seats: ratings tie on both sides (20 and 30 around 25) and some bots are unrated."""
    made = [
        Lobby(
            players=lambda game, config: PLAYERS[game],
            capacity=lambda bot: capacity[bot],
            rating=lambda bot, game: skill[bot],
            rng=random.Random(7),
        )
        for _ in range(2)
    ]
    for lobby in made:
        for bot, games, config, self_play in seeks:
            lobby.seek(bot, games, config, self_play)
    fast, plain = made
    expected = plain_pair(plain)
    assert fast.pair() == expected
    assert [s.id for s in fast.seeks] == [s.id for s in plain.seeks if all(s not in t.seeks for t in expected)]


def test_a_tie_in_rating_distance_goes_to_the_oldest_seek_on_either_side() -> None:
    skill = {"ann": 25.0, "bob": 20.0, "cy": 30.0, "dee": 20.0, "eve": 30.0}
    lobby = Lobby(players=lambda game, config: 2, capacity=lambda bot: 1, rating=lambda bot, game: skill[bot])
    for bot in ("eve", "dee", "cy", "bob", "ann"):  # eve waits longest; ann comes last
        lobby.seek(bot, ["duel"], {})
    tables = lobby.pair()
    assert [set(table.bots) for table in tables] == [{"eve", "cy"}, {"dee", "bob"}]
    for bot in ("cy", "dee", "bob"):  # ann (25) is as far from cy's 30 as from dee's and bob's 20
        lobby.seek(bot, ["duel"], {})
    lobby.capacity = lambda bot: 2
    assert [set(table.bots) for table in lobby.pair()] == [{"ann", "cy"}, {"dee", "bob"}]


def test_a_challenge_takes_the_bots_oldest_seek_of_that_game_and_config_as_sent() -> None:
    lobby = lobby_with(
        [("ann", ["trio"], {}, False), ("ann", ["trio", "duel"], {"size": 4}, False), ("ann", ["duel"], {"size": 4}, True)],
        {bot: 1 for bot in BOTS},
    )
    oldest, middle, newest = lobby.seeks
    assert lobby.take("bob", "duel", {"size": 4}) is None  # another bot's seek
    assert lobby.take("ann", "duel", {}) is None  # {} was not sent with a duel
    assert lobby.take("ann", "duel", {"size": 4}) is middle
    assert lobby.take("ann", "duel", {"size": 4}) is newest
    assert lobby.take("ann", "duel", {"size": 4}) is None and lobby.seeks == [oldest]


def test_a_standing_seek_comes_back_behind_the_seeks_waiting_now() -> None:
    lobby = Lobby(players=lambda game, config: PLAYERS[game])
    standing = lobby.seek("ann", ["duel", "trio"], {"size": 4}, True, {"duel": {"size": 4}}, standing=True)
    later = lobby.seek("bob", ["duel"], {})
    lobby.seeks.remove(standing)  # paired, and its match played
    back = lobby.again(standing)
    assert lobby.seeks == [later, back] and back.id > later.id
    assert (back.bot, back.games, back.config, back.self_play, back.read, back.standing) == (
        "ann",
        ("duel", "trio"),
        {"size": 4},
        True,
        {"duel": {"size": 4}},
        True,
    )
