"""Lewis signalling bots: the fixed convention is perfect, the learner learns a code from the record."""

from __future__ import annotations

import statistics
from typing import Any

from arena.seats import Turn
from bots.base import Bot
from bots.reference.lewis_signalling import LewisConvention, LewisLearner
from bots.reference.random_bot import RandomBot
from games.api import Observation
from games.lewis_signalling import LewisSignalling


def rounds(*records: tuple[int, str, int]) -> list[dict[str, Any]]:
    """History entries from (state, signal, act) triples."""
    return [
        {"round": n, "state": state, "signal": signal, "act": act, "success": state == act}
        for n, (state, signal, act) in enumerate(records, start=1)
    ]


def turn(seat: int, history: list[dict[str, Any]], *, state: int | None = None, signal: str | None = None) -> Turn:
    """A turn of the default game (3 states, 3 signals) with a made-up history."""
    data = {
        "seat": seat,
        "role": "sender" if seat == 0 else "receiver",
        "round": len(history) + 1,
        "rounds": 10,
        "phase": "signal" if seat == 0 else "act",
        "states": 3,
        "signals": ["a", "b", "c"],
        "state": state,
        "signal": signal,
        "history": history,
        "score": sum(h["success"] for h in history),
    }
    legal = ("signal a", "signal b", "signal c") if seat == 0 else ("act 1", "act 2", "act 3")
    return Turn("test", "lewis-signalling", seat, 2 * len(history), 0, Observation("", data), legal, None, None)


def test_the_convention_maps_state_i_to_signal_i_to_act_i() -> None:
    bot = LewisConvention("lewis-signalling", 0)
    assert [bot.act(turn(0, [], state=s)) for s in (1, 2, 3)] == ["signal a", "signal b", "signal c"]
    assert [bot.act(turn(1, [], signal=s)) for s in "abc"] == ["act 1", "act 2", "act 3"]


def test_the_convention_wraps_when_signals_and_states_differ() -> None:
    game = LewisSignalling.new({"states": 4, "signals": 2}, 0)
    game.state = 3
    bot = LewisConvention("lewis-signalling", 0)
    assert bot.act(Turn.of(game, 0)) == "signal b"
    game.step({0: "signal b"})
    assert bot.act(Turn.of(game, 1)) == "act 2"


def test_the_learning_receiver_answers_with_what_the_signal_most_often_meant() -> None:
    history = rounds((2, "a", 1), (3, "b", 1), (2, "a", 2), (1, "a", 2))
    assert LewisLearner("lewis-signalling", 0).act(turn(1, history, signal="a")) == "act 2"
    assert LewisLearner("lewis-signalling", 0).act(turn(1, history, signal="b")) == "act 3"


def test_the_learning_receiver_gives_a_new_signal_a_state_no_signal_stood_for() -> None:
    history = rounds((2, "a", 1), (3, "b", 1))
    assert {LewisLearner("lewis-signalling", seed).act(turn(1, history, signal="c")) for seed in range(20)} == {"act 1"}


def test_the_learning_sender_repeats_a_signal_the_receiver_answered_with_this_state() -> None:
    history = rounds((1, "a", 2), (3, "c", 1))
    assert LewisLearner("lewis-signalling", 0).act(turn(0, history, state=2)) == "signal a"


def test_the_learning_sender_keeps_its_own_meaning_until_the_receiver_contradicts_it() -> None:
    kept = rounds((2, "b", 3))
    assert LewisLearner("lewis-signalling", 0).act(turn(0, kept, state=2)) == "signal b"
    contradicted = rounds((2, "b", 3), (2, "b", 3))
    chosen = {LewisLearner("lewis-signalling", seed).act(turn(0, contradicted, state=2)) for seed in range(20)}
    assert chosen == {"signal a", "signal c"}


def test_the_learning_sender_proposes_an_unused_signal_for_a_new_state() -> None:
    history = rounds((1, "a", 1), (2, "c", 2))
    assert {LewisLearner("lewis-signalling", seed).act(turn(0, history, state=3)) for seed in range(20)} == {"signal b"}


def mean_return(sender: type[Bot], receiver: type[Bot], seeds: range) -> float:
    scores = []
    for seed in seeds:
        game = LewisSignalling.new(None, seed)
        bots = [sender("lewis-signalling", 2 * seed), receiver("lewis-signalling", 2 * seed + 1)]
        while not game.is_over:
            seat = game.to_move()[0]
            game.step({seat: bots[seat].act(Turn.of(game, seat))})
        scores.append(game.returns()[0])
    return statistics.mean(scores)


def test_two_convention_bots_win_every_round() -> None:
    assert mean_return(LewisConvention, LewisConvention, range(10)) == 10.0


def test_the_learner_learns_a_code_far_better_than_chance() -> None:
    chance = mean_return(RandomBot, RandomBot, range(60))
    assert 2.5 < chance < 4.5  # one round in three
    assert mean_return(LewisLearner, LewisLearner, range(60)) >= chance + 3.0
    assert mean_return(LewisLearner, LewisConvention, range(60)) >= 7.5
    assert mean_return(LewisConvention, LewisLearner, range(60)) >= 8.0
