"""The classic prisoner's dilemma strategies, played through the game API as seats would."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.prisoners_dilemma import AlwaysCooperate, AlwaysDefect, Grim, TitForTat, WinStayLoseShift
from bots.registry import make_bot
from games.iterated_prisoners_dilemma import IteratedPrisonersDilemma

GAME = IteratedPrisonersDilemma.spec.name
BOTS: tuple[type[Bot], ...] = (TitForTat, Grim, WinStayLoseShift, AlwaysDefect, AlwaysCooperate)
Policy = Callable[[Turn], str]


def turn_for(state: IteratedPrisonersDilemma, seat: int) -> Turn:
    return Turn.of(state, seat)


def play(first: Policy, second: Policy, config: Mapping[str, object] | None = None) -> IteratedPrisonersDilemma:
    state = IteratedPrisonersDilemma.new(config)
    while not state.is_over:
        state.step({0: first(turn_for(state, 0)), 1: second(turn_for(state, 1))})
    return state


def scripted(moves: Sequence[str]) -> Policy:
    """An opponent playing a fixed sequence of moves (and saying nothing)."""

    def policy(turn: Turn) -> str:
        data = turn.observation.data
        return "" if data["phase"] == "talk" else moves[data["round"] - 1]

    return policy


def moves_of(state: IteratedPrisonersDilemma, seat: int) -> list[str]:
    return ["C" if move == "cooperate" else "D" for move in state.observe(seat).data["my_moves"]]


def bot(cls: type[Bot]) -> Policy:
    return cls(GAME, 0).act


C, D = "cooperate", "defect"


def test_tit_for_tat_against_always_defect_scores_9_to_14() -> None:
    state = play(bot(TitForTat), bot(AlwaysDefect))
    assert state.returns() == (9.0, 14.0)
    assert moves_of(state, 0) == list("CDDDDDDDDD")


def test_nice_strategies_cooperate_with_each_other_throughout() -> None:
    for first in (TitForTat, Grim, WinStayLoseShift, AlwaysCooperate):
        for second in (TitForTat, Grim, WinStayLoseShift, AlwaysCooperate):
            assert play(bot(first), bot(second)).returns() == (30.0, 30.0)


def test_tit_for_tat_copies_the_previous_move() -> None:
    state = play(bot(TitForTat), scripted([C, D, C, C, D, D, C, C, C, C]))
    assert moves_of(state, 0) == list("CCDCCDDCCC")


def test_grim_never_forgives_a_single_defection() -> None:
    state = play(bot(Grim), scripted([C, C, D, C, C, C, C, C, C, C]))
    assert moves_of(state, 0) == list("CCCDDDDDDD")


def test_win_stay_lose_shift_switches_after_a_bad_outcome_and_stays_after_a_good_one() -> None:
    # Round 1 C/D (sucker): switch to D. Round 2 D/C (temptation): stay D. Round 3 D/D (punishment): switch to C.
    # Round 4 C/C (reward): stay C. Round 5 C/D: switch to D. Round 6 D/D: switch to C.
    state = play(bot(WinStayLoseShift), scripted([D, C, D, C, D, D, C, C, C, C]))
    assert moves_of(state, 0) == list("CDDCCDCCCC")


def test_always_defect_and_always_cooperate_never_change() -> None:
    opponent = scripted([C, D, C, D, D, C, C, D, C, D])
    assert moves_of(play(bot(AlwaysDefect), opponent), 0) == list("D" * 10)
    assert moves_of(play(bot(AlwaysCooperate), opponent), 0) == list("C" * 10)


def test_with_cheap_talk_the_bots_announce_their_rule_and_play_the_same() -> None:
    state = play(bot(TitForTat), bot(AlwaysDefect), {"cheap_talk": True})
    assert state.returns() == (9.0, 14.0)
    messages = state.observe(0).data["messages"]
    assert len(messages) == 20
    assert {m["text"] for m in messages if m["seat"] == 0} == {TitForTat.message.format(nice="cooperate", nasty="defect")}
    assert {m["text"] for m in messages if m["seat"] == 1} == {AlwaysDefect.message.format(nice="cooperate", nasty="defect")}


@pytest.mark.parametrize("cls", BOTS, ids=lambda cls: cls.name)
def test_every_bot_talks_within_the_limit_and_is_found_by_name(cls: type[Bot]) -> None:
    assert GAME in cls.games
    assert cls.description and "\n" not in cls.description
    assert 0 < len(cls.message) <= IteratedPrisonersDilemma.Config().message_chars
    assert isinstance(make_bot(cls.name, GAME), cls)
    state = play(bot(cls), bot(cls), {"cheap_talk": True, "rounds": 3})
    assert state.is_over
