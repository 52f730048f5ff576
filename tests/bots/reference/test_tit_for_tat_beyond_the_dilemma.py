"""Tit-for-tat beyond the prisoner's dilemma: in the stag hunt and chicken,
and the prisoner's dilemma strategies reading any game's (nice, nasty) moves."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from arena.seats import Turn
from bots.registry import make_bot
from games.iterated import MatrixGame
from games.iterated_chicken import IteratedChicken
from games.iterated_stag_hunt import IteratedStagHunt

Policy = Callable[[Turn], str]


def play(game: type[MatrixGame], first: Policy, second: Policy, config: Mapping[str, object] | None = None) -> MatrixGame:
    state = game.new(config)
    while not state.is_over:
        state.step({0: first(Turn.of(state, 0)), 1: second(Turn.of(state, 1))})
    return state


def scripted(moves: Sequence[str]) -> Policy:
    def policy(turn: Turn) -> str:
        data = turn.observation.data
        return "" if data["phase"] == "talk" else moves[data["round"] - 1]

    return policy


def tit_for_tat(game: type[MatrixGame]) -> Policy:
    return make_bot("tit-for-tat", game.spec.name).act


def test_the_tit_for_tat_hunts_stag_first_then_mirrors() -> None:
    state = play(
        IteratedStagHunt, tit_for_tat(IteratedStagHunt), scripted(["hare", "stag", "stag", "hare", "stag"]), {"rounds": 5}
    )
    assert state.observe(0).data["my_moves"] == ["stag", "hare", "stag", "stag", "hare"]
    # Rounds stag/hare, hare/stag, stag/stag, stag/hare, hare/stag: 0 + 3 + 4 + 0 + 3 each way.
    assert state.returns() == (10.0, 10.0)


def test_two_tit_for_tats_hunt_the_stag_every_round() -> None:
    policy = tit_for_tat(IteratedStagHunt)
    assert play(IteratedStagHunt, policy, policy).returns() == (40.0, 40.0)


def test_the_tit_for_tat_swerves_first_then_stands_up_to_a_bully() -> None:
    state = play(IteratedChicken, tit_for_tat(IteratedChicken), scripted(["straight"] * 3), {"rounds": 3})
    assert state.observe(0).data["my_moves"] == ["swerve", "straight", "straight"]
    assert state.returns() == (-21.0, -19.0)


def test_the_tit_for_tat_announces_its_rule_in_the_games_own_words() -> None:
    policy = tit_for_tat(IteratedChicken)
    state = play(IteratedChicken, policy, policy, {"rounds": 2, "cheap_talk": True})
    said = {m["text"] for m in state.observe(1).data["messages"]}
    assert said == {"I will play swerve as long as you do, and answer straight with straight."}
    assert state.returns() == (0.0, 0.0)
