"""Pairing in one pass: every table the seeks allow is formed, within each bot's capacity."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.lobby import Lobby

PLAYERS = {"duel": 2, "trio": 3}
BOTS = ("ann", "bob", "cy", "dee", "eve")

seek_lists = st.lists(
    st.tuples(
        st.sampled_from(BOTS),
        st.lists(st.sampled_from(sorted(PLAYERS)), min_size=1, max_size=2, unique=True),
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
        assert all(table.game in seek.games and seek.config_key == table.seeks[0].config_key for seek in table.seeks)
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
