"""Rules of Hanabi beyond Mini Hanabi's: standard hands per player count, hints naming a
seat, turn order and the end with more than two players, observation data for N seats."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.api import ConfigError, IllegalAction
from games.hanabi import Hanabi, HanabiConfig
from games.hanabi_rules import HanabiRules, deck_size
from games.mini_hanabi import MiniHanabi


def card(name: str) -> tuple[int, int]:
    return "RYGBW".index(name[0]), int(name[1])


def arranged(hands: list[list[str]], draws: list[str], **config: Any) -> Hanabi:
    """A game of ``len(hands)`` players dealt the given hands, whose deck yields ``draws`` in that order."""
    game = Hanabi.new({"players": len(hands), **config}, 0)
    game.hands = [[card(c) for c in hand] for hand in hands]
    game.knowledge = [[game._blank() for _ in hand] for hand in hands]
    game.deck = [card(c) for c in reversed(draws)]
    return game


THREE = [["R1", "Y1"], ["R2", "Y2"], ["R1", "G3"]]
"""Three hands of two cards for games of three colours."""


def three_players(**config: Any) -> Hanabi:
    return arranged(THREE, ["G1", "G2", "Y3"], colours=3, ranks=3, hand_size=2, **config)


# ---- config -----------------------------------------------------------------------------


def test_the_default_is_the_published_game() -> None:
    config = HanabiConfig()
    assert (config.colours, config.ranks, config.hints, config.lives) == (5, 5, 8, 3)
    assert Hanabi.spec.min_players == 2 and Hanabi.spec.max_players == 5
    assert Hanabi.spec.min_return == 0.0 and Hanabi.spec.max_return == 25.0
    game = Hanabi.new(None, 4)
    assert len(game.deck) + sum(len(h) for h in game.hands) == deck_size(5, 5) == 50
    assert (game.hints, game.lives) == (8, 3)


@pytest.mark.parametrize(("players", "size"), [(2, 5), (3, 5), (4, 4), (5, 4)])
def test_hand_size_zero_deals_the_standard_hand_for_the_player_count(players: int, size: int) -> None:
    game = Hanabi.new({"players": players}, 1)
    assert [len(h) for h in game.hands] == [size] * players
    assert len(game.deck) == 50 - size * players
    assert game.legal_actions(0)[:size] == tuple(f"play {i}" for i in range(1, size + 1))


def test_an_explicit_hand_size_overrides_the_standard_one() -> None:
    game = Hanabi.new({"players": 4, "hand_size": 3}, 1)
    assert [len(h) for h in game.hands] == [3, 3, 3, 3]


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"colours": 0}, "colours"),
        ({"colours": 6}, "colours"),
        ({"ranks": 6}, "ranks"),
        ({"hand_size": -1}, "hand_size"),
        ({"colours": 1, "ranks": 2, "hand_size": 3}, "hand_size"),
        ({"hints": 0}, "hints"),
        ({"lives": 0}, "lives"),
        ({"lifes": 2}, "lifes"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        Hanabi.new(config)


@pytest.mark.parametrize("game", [Hanabi, MiniHanabi])
def test_hint_tokens_are_at_most_100(game: type[HanabiRules]) -> None:
    """A billion tokens were accepted: they never ran out, and hints alone ran a match past
    the server's 10,000 steps."""
    assert game.new({"hints": 100}).hints == 100
    with pytest.raises(ConfigError, match="'hints' must be at most 100, got 101"):
        game.new({"hints": 101})


def test_a_negative_hand_size_error_says_zero_means_standard() -> None:
    with pytest.raises(ConfigError, match="0 for the standard size"):
        HanabiConfig(hand_size=-1)
    with pytest.raises(ConfigError, match="'hand_size' must be at least 1, got 0"):
        MiniHanabi.new({"hand_size": 0})


def test_the_standard_hand_must_still_leave_a_deck() -> None:
    with pytest.raises(ConfigError, match="5 hands of 4 must leave cards in the deck of 12"):
        Hanabi.new({"players": 5, "colours": 2, "ranks": 3})


@pytest.mark.parametrize("players", [1, 6])
def test_two_to_five_players(players: int) -> None:
    with pytest.raises(ConfigError, match="2 to 5 players"):
        Hanabi.new({"players": players})


def test_both_variants_share_one_implementation() -> None:
    assert issubclass(Hanabi, HanabiRules) and issubclass(MiniHanabi, HanabiRules)
    assert Hanabi.spec.name == "hanabi" and MiniHanabi.spec.name == "mini-hanabi"
    assert "hint 1 r" in Hanabi.spec.rules and "4 with four or five" in Hanabi.spec.rules
    assert "two players" in MiniHanabi.spec.rules and "(2 cards by default)" in MiniHanabi.spec.rules


# ---- hints with more than two players ---------------------------------------------------


def test_a_hint_names_its_target_seat() -> None:
    game = three_players()
    game.step({0: "hint 2 r"})
    assert game.observe(2).data["my_knowledge"] == [
        {"colours": "R", "ranks": "123", "touched": True},
        {"colours": "YG", "ranks": "123", "touched": False},
    ]
    assert game.observe(1).data["my_knowledge"][0]["touched"] is False
    assert game.observe(1).data["last_action"] == {"seat": 0, "action": "hint 2 r", "touched": [1]}
    assert "seat 0 hinted colour R to seat 2, touching slot(s) 1" in game.observe(1).text
    assert game.hints == 7


def test_legal_hints_cover_every_other_seat_in_turn_order() -> None:
    game = three_players()
    assert game.legal_actions(0) == (
        "play 1",
        "play 2",
        "hint 1 r",
        "hint 1 y",
        "hint 1 2",
        "hint 2 r",
        "hint 2 g",
        "hint 2 1",
        "hint 2 3",
    )
    game.step({0: "hint 1 2"})
    assert [a for a in game.legal_actions(1) if a.startswith("hint")][:2] == ["hint 2 r", "hint 2 g"]


def test_hints_are_canonicalised_with_the_seat() -> None:
    game = three_players()
    assert game.validate(0, "  HINT 2   Red ") == "hint 2 r"
    assert game.validate(0, "hint 1 02") == "hint 1 2"
    two = arranged([["R1", "Y1"], ["R2", "Y2"]], ["G1"], colours=3, ranks=3, hand_size=2)
    assert two.validate(0, "hint 1 R") == "hint r"
    assert two.validate(0, "hint y") == "hint y"


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("hint r", "name the player the hint is for"),
        ("hint 0 r", "cannot hint yourself"),
        ("hint 3 r", "'3' is not a seat; seats are 0 to 2"),
        ("hint x r", "'x' is not a seat"),
        ("hint 1 g", "seat 1 holds no green"),
        ("hint 2 2", "seat 2 holds no card of rank 2"),
        ("hint 1 2 3", "not an action"),
        ("play 1 2", "not an action"),
    ],
)
def test_bad_hints_are_rejected_with_a_reason(action: str, reason: str) -> None:
    game = three_players()
    with pytest.raises(IllegalAction, match=reason):
        game.step({0: action})
    assert game.hints == 8 and game.history == []


def test_two_player_hanabi_rejects_hinting_yourself_by_seat() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["G1"], colours=3, ranks=3, hand_size=2)
    with pytest.raises(IllegalAction, match="cannot hint yourself"):
        game.step({0: "hint 0 r"})


def test_every_legal_action_of_a_large_table_is_in_the_action_space() -> None:
    config = HanabiConfig(players=4)
    space = config.action_space()
    assert len(space) == 4 + 4 + 4 * 10
    assert "hint 3 w" in space and "hint 0 5" in space and "hint r" not in space
    for seed in range(10):
        game = Hanabi.new(config, seed)
        for _ in range(4):
            seat = game.to_move()[0]
            legal = game.legal_actions(seat)
            assert set(legal) <= set(space)
            game.step({seat: next(a for a in legal if a.startswith("hint"))})


def test_the_two_player_action_space_keeps_bare_hints() -> None:
    space = HanabiConfig().action_space()
    assert "hint r" in space and "hint 1 r" not in space and len(space) == 5 + 5 + 10


# ---- turns and the end with three players -----------------------------------------------


def test_turns_pass_in_seat_order() -> None:
    game = three_players()
    order = []
    for action in ("hint 1 r", "hint 2 g", "hint 0 y"):
        order.append(game.to_move())
        game.step({game.to_move()[0]: action})
    assert order == [(0,), (1,), (2,)]
    assert game.to_move() == (0,)


def test_after_the_last_card_each_of_three_players_has_one_final_turn() -> None:
    game = arranged([["R2"], ["R3"], ["R2"]], ["R1"], colours=1, ranks=3, hand_size=1, hints=2)
    game.step({0: "hint 1 3"})
    game.step({1: "discard 1"})  # draws the last card, R1
    assert game.observe(0).data["final_turns"] == 3
    game.step({2: "hint 1 1"})
    game.step({0: "hint 2 2"})
    assert not game.is_over
    assert game.step({1: "play 1"}) == (1.0, 1.0, 1.0)  # the drawer's own final turn
    assert game.is_over
    assert game.returns() == (1.0, 1.0, 1.0)


def test_a_full_three_player_match_with_hand_checked_returns() -> None:
    """1 colour, ranks 1-3: a hint each, a 1 played, a misplayed second 1, then 2 and 3."""
    game = arranged([["R1"], ["R2"], ["R1"]], ["R3", "R1", "R2"], colours=1, ranks=3, hand_size=1, hints=2, lives=2)
    rewards = [
        game.step({0: "hint 1 2"}),  # seat 1 learns its card is a 2
        game.step({1: "hint 0 1"}),  # seat 0 learns its card is a 1; no tokens left
        game.step({2: "play 1"}),  # R1: +1; draws R3
        game.step({0: "play 1"}),  # R1 again: a misplay, one life left; draws R1
        game.step({1: "play 1"}),  # R2: +1; draws the last card, R2
        game.step({2: "play 1"}),  # R3 completes the only firework: +1, the perfect score
    ]
    assert rewards == [None, None, (1.0,) * 3, None, (1.0,) * 3, (1.0,) * 3]
    assert game.is_over
    assert game.returns() == (3.0, 3.0, 3.0)
    assert (game.lives, game.hints) == (1, 1)
    assert [e.get("result") for e in game.events] == [None, None, "played", "misplay", "played", "played"]
    assert "Final score: 3 of 3" in game.observe(0).text


def test_losing_every_life_with_four_players_scores_zero_for_all() -> None:
    game = arranged([["R1"], ["R1"], ["R3"], ["R2"]], ["R2", "R1", "R1"], colours=1, ranks=3, hand_size=1, lives=2)
    game.step({0: "play 1"})
    game.step({1: "play 1"})  # a second R1: misplay
    assert game.returns() == (1.0,) * 4
    assert game.step({2: "play 1"}) == (-1.0,) * 4  # R3 on R1: the last life
    assert game.is_over and game.returns() == (0.0,) * 4


# ---- what a seat sees -------------------------------------------------------------------


def test_observation_data_lists_every_other_hand_in_turn_order() -> None:
    game = three_players()
    game.step({0: "hint 2 1"})
    data = game.observe(1).data
    assert data["players"] == 3
    assert [o["seat"] for o in data["others"]] == [2, 0]
    assert data["others"][0]["hand"] == ["R1", "G3"]
    assert data["others"][1]["hand"] == ["R1", "Y1"]
    assert data["others"][0]["knowledge"][0] == {"colours": "RYG", "ranks": "1", "touched": True}
    assert data["partner_hand"] == ["R1", "G3"]
    assert data["partner_knowledge"] == data["others"][0]["knowledge"]
    assert json.loads(json.dumps(data)) == data


def test_observation_text_names_each_hand_by_seat() -> None:
    text = three_players().observe(0).text
    assert "You are seat 0 in Hanabi, one of 3 players (seats 0 to 2); seat 1 plays after you. It is your turn." in text
    assert "Seat 1's hand, with what they know of each card:\n  slot 1: R2;" in text
    assert "Seat 2's hand" in text and "partner" not in text
    assert "Hint tokens: 8 of 8. Lives: 3 of 3." in text


def test_a_seat_observation_does_not_depend_on_its_own_hand() -> None:
    game = three_players()
    other = arranged([["Y2", "G1"], *THREE[1:]], ["G1", "G2", "Y3"], colours=3, ranks=3, hand_size=2)
    assert game.observe(0) == other.observe(0)
    assert game.observe(1) != other.observe(1) and game.observe(2) != other.observe(2)
    assert game.private_info(1) == [["R1", "Y1"], ["R1", "G3"]]
    assert game.public_view() == other.public_view()
    assert game.full_view() != other.full_view()


def test_the_public_view_hides_every_hand_while_live() -> None:
    groups = {g["label"]: g["cards"] for g in three_players().public_view()["render"][0]["groups"]}
    assert groups["Seat 0"] == groups["Seat 1"] == groups["Seat 2"] == ["?", "?"]


def test_the_public_view_retells_every_hint_not_only_the_last_action() -> None:
    """Which value a hint named is public; a spectator who came in after it could not learn it
    from a view that showed only the last action."""
    game = three_players()
    for action in ("hint 1 r", "hint 2 3", "play 1"):
        game.step({game.player: action})
    view = game.public_view()
    log = "seat 0 hinted colour R to seat 1, touching slot(s) 1\n  2. seat 1 hinted rank 3 to seat 2, touching slot(s) 2"
    assert log in view["render"][-1]["text"] and "Last action: seat 2 played slot 1" in view["text"]  # printed every step
    assert "seat 2 played slot 1: R1, it extended the firework" in view["render"][-1]["text"]
