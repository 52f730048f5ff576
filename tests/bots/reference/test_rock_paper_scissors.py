"""The rock-paper-scissors pattern players."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from arena.seats import Turn
from bots.reference.rock_paper_scissors import RpsCycle, RpsFrequency
from bots.registry import BotSpecError, make_bot
from games.iterated_rock_paper_scissors import IteratedRockPaperScissors

GAME = IteratedRockPaperScissors.spec.name
Policy = Callable[[Turn], str]


def play(first: Policy, second: Policy, rounds: int = 10, cheap_talk: bool = False) -> IteratedRockPaperScissors:
    state = IteratedRockPaperScissors.new({"rounds": rounds, "cheap_talk": cheap_talk})
    while not state.is_over:
        state.step({0: first(Turn.of(state, 0)), 1: second(Turn.of(state, 1))})
    return state


def scripted(hands: Sequence[str]) -> Policy:
    def policy(turn: Turn) -> str:
        data = turn.observation.data
        return "" if data["phase"] == "talk" else hands[data["round"] - 1]

    return policy


def test_frequency_counters_the_most_frequent_hand_preferring_the_most_recent_on_ties() -> None:
    state = play(make_bot("rps-frequency", GAME, seed=3).act, scripted(["rock", "rock", "paper", "paper", "paper"]), rounds=5)
    mine = state.observe(0).data["my_moves"]
    # After rock: paper. After rock, rock: paper. After r, r, p (rock most frequent): paper.
    # After r, r, p, p (tie; paper most recent): scissors.
    assert mine[1:] == ["paper", "paper", "paper", "scissors"]


def test_frequency_with_a_window_forgets_old_hands() -> None:
    opponent = scripted(["rock"] * 5 + ["scissors"] * 3)
    everything = play(RpsFrequency(GAME, 0).act, opponent, rounds=8).observe(0).data["my_moves"]
    recent = play(RpsFrequency(GAME, 0, window=2).act, opponent, rounds=8).observe(0).data["my_moves"]
    assert everything[-1] == "paper" and recent[-1] == "rock"


def test_frequency_beats_a_player_with_a_favourite_hand() -> None:
    state = play(make_bot("rps-frequency", GAME).act, scripted(["scissors"] * 10))
    assert state.observe(0).data["my_moves"][1:] == ["rock"] * 9
    assert state.returns()[0] >= 8.0


def test_the_cycle_is_rock_paper_scissors_in_turn_and_frequency_exploits_it_only_so_far() -> None:
    state = play(make_bot("rps-cycle", GAME).act, make_bot("rps-frequency", GAME).act, rounds=6, cheap_talk=True)
    assert state.observe(0).data["my_moves"] == ["rock", "paper", "scissors"] * 2
    assert state.step_count == 12 and {m["text"] for m in state.observe(0).data["messages"]} == {""}


def test_a_negative_window_is_refused() -> None:
    with pytest.raises(BotSpecError, match="'window'"):
        make_bot("rps-frequency:window=-1", GAME)


def test_both_are_registered_and_frequency_is_the_showcase() -> None:
    assert RpsFrequency.showcase and not RpsCycle.showcase
    assert isinstance(make_bot("rps-cycle", GAME), RpsCycle)
