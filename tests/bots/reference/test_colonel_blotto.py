"""The spreading Colonel Blotto bot: legal splits of every size, majorities, and results
against random and against the even split (margins measured on these seeds)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from arena.seats import Turn
from bots.reference.colonel_blotto import BlottoSpread
from bots.reference.random_bot import RandomBot
from bots.registry import BotSpecError, make_bot
from games.colonel_blotto import ColonelBlotto

GAME = "colonel-blotto"
Policy = Callable[[Turn], str]


def play(first: Policy, second: Policy, seed: int, config: Mapping[str, object] | None = None) -> ColonelBlotto:
    state = ColonelBlotto.new(config, seed)
    while not state.is_over:
        state.step({0: first(Turn.of(state, 0)), 1: second(Turn.of(state, 1))})
    return state


def mean_result(opponent: Callable[[int], Policy], config: Mapping[str, object] | None = None, games: int = 400) -> float:
    """blotto-spread's mean return over seeded games, half of them in each seat."""
    total = 0.0
    for seed in range(games):
        bot = BlottoSpread(GAME, seed).act
        if seed % 2 == 0:
            total += play(bot, opponent(seed), seed, config).returns()[0]
        else:
            total += play(opponent(seed), bot, seed, config).returns()[1]
    return total / games


def random_policy(seed: int) -> Policy:
    return RandomBot(GAME, seed + 1_000_000).act


@pytest.mark.parametrize(
    ("config", "margin"),
    [
        (None, 0.1),  # measured 0.14
        ({"troops": 20, "fields": 4}, 0.12),  # free-form allocations; measured 0.19
        ({"troops": 10, "fields": 5}, 0.25),  # measured 0.36
    ],
)
def test_it_beats_uniformly_random_allocations(config: Mapping[str, object] | None, margin: float) -> None:
    assert mean_result(random_policy, config) > margin


def test_it_beats_the_even_split() -> None:
    assert mean_result(lambda seed: lambda turn: "4,3,3") > 0.3  # measured 0.45


@pytest.mark.parametrize(("troops", "fields"), [(10, 3), (1, 3), (2, 2), (100, 10), (7, 20), (1000, 20)])
def test_its_allocations_are_always_legal(troops: int, fields: int) -> None:
    bot = BlottoSpread(GAME, 1)
    state = ColonelBlotto.new({"troops": troops, "fields": fields})
    for _ in range(40):
        action = bot.act(Turn.of(state, 0))
        assert state.validate(0, action) == action


def test_it_contests_a_majority_of_the_fields() -> None:
    bot = BlottoSpread(GAME, 2)
    state = ColonelBlotto.new({"troops": 100, "fields": 7})
    contested = set()
    for _ in range(200):
        counts = [int(n) for n in bot.act(Turn.of(state, 0)).split(",")]
        contested.add(sum(n > 0 for n in counts))
    assert contested == {4, 5, 6, 7}


def test_without_jitter_it_splits_evenly_over_the_chosen_fields() -> None:
    bot = make_bot("blotto-spread:jitter=0", GAME)
    state = ColonelBlotto.new({"troops": 12, "fields": 3})
    splits = {bot.act(Turn.of(state, 0)) for _ in range(100)}
    assert splits == {"6,6,0", "6,0,6", "0,6,6", "4,4,4"}


def test_it_varies_its_splits() -> None:
    bot = BlottoSpread(GAME, 5)
    state = ColonelBlotto.new()
    assert len({bot.act(Turn.of(state, 0)) for _ in range(100)}) > 10


def test_in_a_talk_step_it_states_its_rule() -> None:
    bot = BlottoSpread(GAME, 0)
    state = play(bot.act, RandomBot(GAME, 1).act, 0, {"cheap_talk": True, "rounds": 2})
    assert {m["text"] for m in state.observe(1).data["messages"] if m["seat"] == 0} == {BlottoSpread.message}
    assert state.is_over


def test_jitter_is_an_option_within_bounds() -> None:
    bot = make_bot("blotto-spread:jitter=0.2", GAME)
    assert isinstance(bot, BlottoSpread) and bot.jitter == 0.2
    with pytest.raises(BotSpecError, match=r"'jitter' must be between 0 and 1, got 1\.5"):
        make_bot("blotto-spread:jitter=1.5", GAME)
    assert BlottoSpread.showcase and BlottoSpread.games == (GAME,)
