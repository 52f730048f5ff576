"""Every reference bot keeps to a match's message limit in the talk step of the iterated
games: an over-long message is an illegal answer, repeated on every retry, so a bot that
ignored ``message_chars`` forfeited every match with a short limit."""

from __future__ import annotations

import random

import pytest

import games
from arena.seats import Turn
from bots.registry import all_bots, make_bot
from games.iterated import TALK, IteratedGame

TALKERS = [game for game in games.all() if issubclass(game, IteratedGame)]
NOT_SCRIPTED = {"human", "llm", "openai"}


def _bots(game: type[IteratedGame]) -> list[str]:
    return [bot.name for bot in all_bots(game.spec.name) if bot.name not in NOT_SCRIPTED]


@pytest.mark.parametrize(
    ("game", "bot"),
    [(game, bot) for game in TALKERS for bot in _bots(game)],
    ids=lambda value: value if isinstance(value, str) else value.spec.name,
)
@pytest.mark.parametrize("limit", [1, 12])
def test_talk_messages_fit_the_match_limit(game: type[IteratedGame], bot: str, limit: int) -> None:
    state = game.new({"cheap_talk": True, "message_chars": limit, "rounds": 3}, seed=4)
    seats = [make_bot(bot, game.spec.name, seed) for seed in range(state.num_players)]
    while not state.is_over:
        talking = state.phase == TALK
        joint = {seat: seats[seat].act(Turn.of(state, seat)) for seat in state.to_move()}
        if talking:
            assert all(len(str(message)) <= limit for message in joint.values()), joint
        state.step(joint)


@pytest.mark.parametrize("game", TALKERS, ids=lambda game: game.spec.name)
def test_a_random_message_fits_the_match_limit(game: type[IteratedGame]) -> None:
    state = game.new({"cheap_talk": True, "message_chars": 3}, seed=0)
    rng = random.Random(0)
    for seat in state.to_move():
        message = game.random_free_action(state.observe(seat), rng)
        state.validate(seat, message)
