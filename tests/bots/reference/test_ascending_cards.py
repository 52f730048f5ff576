"""The mind-timer bot: waits in proportion to its lowest card, and so far outplays chance."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.ascending_cards import MindTimer
from bots.reference.random_bot import RandomBot
from bots.registry import BotSpecError, make_bot
from games.ascending_cards import AscendingCards


def at_tick(tick: int, hand: list[int], **config: Any) -> Turn:
    """Seat 0's turn at ``tick`` holding ``hand``, everyone having waited so far."""
    game = AscendingCards.new({"cards_per_player": len(hand), **config}, 0)
    game.hands[0] = list(hand)
    game.tick = tick
    return Turn.of(game, 0)


def test_waits_until_the_card_share_of_the_clock_then_plays() -> None:
    bot = MindTimer("ascending-cards", 0)  # 37 of 100 on a 20-tick clock: due at tick 8 (7.4 rounded up)
    assert [bot.act(at_tick(t, [37, 80])) for t in (1, 7, 8, 9)] == ["wait", "wait", "play", "play"]
    assert bot.act(at_tick(1, [5, 80])) == "play"
    assert bot.act(at_tick(19, [96])) == "wait" and bot.act(at_tick(20, [96])) == "play"


def test_the_wait_scales_with_the_clock_and_the_highest_card() -> None:
    bot = MindTimer("ascending-cards", 0)
    assert bot.act(at_tick(7, [37], ticks=40)) == "wait"
    assert bot.act(at_tick(15, [37], ticks=40)) == "play"
    assert bot.act(at_tick(4, [37], max_card=50)) == "wait"
    assert bot.act(at_tick(15, [37], max_card=50)) == "play"


def test_pace_plays_earlier_and_is_an_option_of_the_spec() -> None:
    bot = make_bot("mind-timer:pace=0.5", "ascending-cards")
    assert isinstance(bot, MindTimer) and bot.pace == 0.5
    assert bot.act(at_tick(4, [37])) == "play"  # due at tick 4 (3.7 rounded up)
    assert bot.act(at_tick(3, [37])) == "wait"


@pytest.mark.parametrize("pace", ["nan", "inf", "-1", "1.5"])
def test_a_pace_outside_0_to_1_is_refused_when_the_bot_is_made(pace: str) -> None:
    # nan and inf used to be accepted and crash on the first turn; a negative pace is
    # meaningless, and above 1 the highest cards fall due after the last tick.
    with pytest.raises(BotSpecError, match=r"option 'pace' must be (between 0 and 1|a finite number)"):
        make_bot(f"mind-timer:pace={pace}", "ascending-cards")


def team_scores(make: type[Bot], players: int, seeds: range) -> list[float]:
    scores = []
    for seed in seeds:
        game = AscendingCards.new({"players": players}, seed)
        bots = [make("ascending-cards", players * seed + i) for i in range(players)]
        while not game.is_over:
            game.step({seat: bots[seat].act(Turn.of(game, seat)) for seat in game.to_move()})
        scores.append(game.returns()[0])
    return scores


@pytest.mark.parametrize(("players", "timer_mean", "random_mean"), [(2, 3.5, 2.2), (4, 6.0, 2.0)])
def test_the_timer_convention_clearly_beats_random_play(players: int, timer_mean: float, random_mean: float) -> None:
    timer = team_scores(MindTimer, players, range(100))
    chance = team_scores(RandomBot, players, range(100))
    assert statistics.mean(timer) >= timer_mean
    assert statistics.mean(chance) <= random_mean
    assert sum(t > r for t, r in zip(timer, chance, strict=True)) >= 75
