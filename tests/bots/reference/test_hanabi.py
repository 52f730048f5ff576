"""The Hanabi convention bot: sound single decisions, and far better than chance in both variants at every size."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.reference.hanabi import HanabiHeuristic
from bots.reference.random_bot import RandomBot
from games.api import Observation
from games.hanabi import Hanabi
from games.hanabi_rules import CardKnowledge
from games.mini_hanabi import MiniHanabi

UNKNOWN = {"colours": "RY", "ranks": "123", "touched": False}


def known(colours: str = "RY", ranks: str = "123") -> dict[str, Any]:
    return {"colours": colours, "ranks": ranks, "touched": colours != "RY" or ranks != "123"}


def table_turn(
    *,
    partner_hand: list[str],
    my_knowledge: list[dict[str, Any]] | None = None,
    partner_knowledge: list[dict[str, Any]] | None = None,
    fireworks: dict[str, int] | None = None,
    hints: int = 2,
    discards: list[str] | None = None,
) -> Turn:
    """A turn of the default game (2 colours, 3 ranks, 3 hint tokens) at a made-up table."""
    mine = my_knowledge or [UNKNOWN, UNKNOWN]
    data = {
        "seat": 0,
        "partner_hand": partner_hand,
        "my_knowledge": mine,
        "partner_knowledge": partner_knowledge or [UNKNOWN] * len(partner_hand),
        "fireworks": fireworks or {"R": 0, "Y": 0},
        "top_rank": 3,
        "hints": hints,
        "max_hints": 3,
        "lives": 1,
        "deck_size": 4,
        "discards": discards or [],
        "score": 0,
        "turn": 3,
        "to_move": 0,
        "final_turns": None,
        "last_action": None,
    }
    slots = range(1, len(mine) + 1)
    legal = [f"play {i}" for i in slots]
    if hints < 3:
        legal += [f"discard {i}" for i in slots]
    if hints > 0:
        legal += sorted({f"hint {c[0].lower()}" for c in partner_hand} | {f"hint {c[1]}" for c in partner_hand})
    return Turn("test", "mini-hanabi", 0, 3, 0, Observation("", data), tuple(legal), None, None)


def bot() -> HanabiHeuristic:
    return HanabiHeuristic("mini-hanabi", seed=0)


def test_plays_a_card_hinted_to_be_playable() -> None:
    turn = table_turn(partner_hand=["R3", "Y3"], my_knowledge=[UNKNOWN, known(ranks="1")])
    assert bot().act(turn) == "play 2"


def test_plays_a_card_whose_every_possibility_is_playable() -> None:
    turn = table_turn(partner_hand=["R3", "Y3"], my_knowledge=[known(ranks="2"), UNKNOWN], fireworks={"R": 1, "Y": 1})
    assert bot().act(turn) == "play 1"


def test_counts_visible_copies_to_rule_out_possibilities() -> None:
    """A 2 that could be red or yellow is surely red when both yellow 2s are in sight."""
    mine = [UNKNOWN, known(ranks="2")]
    playable = table_turn(partner_hand=["Y2", "R3"], my_knowledge=mine, fireworks={"R": 1, "Y": 0}, discards=["Y2"])
    assert bot().act(playable) == "play 2"
    unsure = table_turn(partner_hand=["R3", "R3"], my_knowledge=mine, fireworks={"R": 1, "Y": 0}, discards=["Y2"])
    assert bot().act(unsure) != "play 2"


def test_never_plays_a_card_it_is_unsure_of_and_hints_instead() -> None:
    turn = table_turn(partner_hand=["R2", "Y1"])
    assert bot().act(turn) == "hint 1"  # every 1 is playable on empty fireworks; "hint y" would leave Y2, Y3


def test_gives_the_hint_that_completes_what_the_partner_knows() -> None:
    """With three colours, only the red hint (not the green one) pins the red 3 down."""
    rank_three = {"colours": "RYG", "ranks": "3", "touched": True}
    turn = table_turn(
        partner_hand=["R3", "G3"],
        my_knowledge=[{"colours": "RYG", "ranks": "123", "touched": False}] * 2,
        partner_knowledge=[rank_three, rank_three],
        fireworks={"R": 2, "Y": 0, "G": 0},
    )
    assert turn.legal_actions is not None and "hint g" in turn.legal_actions
    assert bot().act(turn) == "hint r"


def test_does_not_hint_a_card_the_partner_already_knows_is_playable() -> None:
    turn = table_turn(partner_hand=["R1", "Y3"], partner_knowledge=[known(ranks="1"), UNKNOWN])
    assert bot().act(turn) == "discard 1"


def test_discards_a_card_known_to_be_useless() -> None:
    turn = table_turn(partner_hand=["Y3", "R3"], my_knowledge=[UNKNOWN, known("R", "1")], fireworks={"R": 1, "Y": 0})
    assert bot().act(turn) == "discard 2"


def test_discards_the_oldest_card_no_hint_named() -> None:
    mine = [{"colours": "R", "ranks": "123", "touched": True}, UNKNOWN]
    turn = table_turn(partner_hand=["Y3", "R3"], my_knowledge=mine, hints=0)
    assert bot().act(turn) == "discard 2"


def test_hints_when_discarding_is_not_allowed() -> None:
    turn = table_turn(partner_hand=["Y3", "R3"], hints=3)
    assert bot().act(turn).startswith("hint ")


def test_plays_when_no_hint_or_discard_is_left() -> None:
    # One-card hands at the end: the others hold nothing to hint, all hint tokens are
    # back so discarding is not allowed, and playing is the only legal move.
    turn = table_turn(partner_hand=[], my_knowledge=[UNKNOWN], hints=3)
    assert turn.legal_actions == ("play 1",)
    assert bot().act(turn) == "play 1"


def mean_score(make: type[Bot], seeds: range) -> float:
    scores = []
    for seed in seeds:
        game = MiniHanabi.new(None, seed)
        bots = [make("mini-hanabi", 2 * seed), make("mini-hanabi", 2 * seed + 1)]
        while not game.is_over:
            seat = game.to_move()[0]
            turn = Turn(
                "m", "mini-hanabi", seat, game.step_count, 0, game.observe(seat), tuple(game.legal_actions(seat)), None, None
            )
            game.step({seat: bots[seat].act(turn)})
        assert game.returns()[0] == game.returns()[1]
        scores.append(game.returns()[0])
    return statistics.mean(scores)


def test_self_play_scores_far_better_than_random_play() -> None:
    heuristic = mean_score(HanabiHeuristic, range(50))
    random = mean_score(RandomBot, range(50))
    assert heuristic > 2.0
    assert heuristic >= 2 * random


# ---- Hanabi at every player count -------------------------------------------------------


def three_player_game(hands: list[list[str]], hints: int = 8) -> Hanabi:
    """A three-player game of three colours and three ranks dealt ``hands``, seat 0 to move."""
    game = Hanabi.new({"players": 3, "colours": 3, "ranks": 3, "hand_size": 2}, 0)
    game.hands = [[("RYG".index(c[0]), int(c[1])) for c in hand] for hand in hands]
    game.knowledge = [[game._blank() for _ in hand] for hand in hands]
    game.hints = hints
    return game


def test_a_hint_names_the_seat_and_goes_to_the_player_who_acts_sooner() -> None:
    game = three_player_game([["G3", "G3"], ["R1", "G2"], ["Y1", "G2"]])
    assert HanabiHeuristic("hanabi", seed=0).act(Turn.of(game, 0)) == "hint 1 1"


def test_does_not_hint_a_second_copy_of_a_card_another_player_knows_to_play() -> None:
    game = three_player_game([["G3", "G3"], ["R1", "G2"], ["R1", "G2"]], hints=7)
    game.knowledge[1][0] = CardKnowledge(colours=0b111, ranks=0b001, touched=True)
    assert HanabiHeuristic("hanabi", seed=0).act(Turn.of(game, 0)) == "discard 1"


def hanabi_mean(make: type[Bot], players: int, seeds: range) -> float:
    scores = []
    for seed in seeds:
        game = Hanabi.new({"players": players}, seed)
        bots = [make("hanabi", players * seed + i) for i in range(players)]
        while not game.is_over:
            seat = game.to_move()[0]
            game.step({seat: bots[seat].act(Turn.of(game, seat))})
        assert len(set(game.returns())) == 1
        scores.append(game.returns()[0])
    return statistics.mean(scores)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_hanabi_self_play_scores_far_better_than_random_play(players: int) -> None:
    heuristic = hanabi_mean(HanabiHeuristic, players, range(6))
    assert heuristic >= 14.0
    assert heuristic >= 10 * max(hanabi_mean(RandomBot, players, range(6)), 1.0)
