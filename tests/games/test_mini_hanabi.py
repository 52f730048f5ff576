"""Rules of Mini Hanabi: plays, misplays, hints and tokens, every end, knowledge, hidden hands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.mini_hanabi import MiniHanabi, MiniHanabiConfig, copies, deck_size


def card(name: str) -> tuple[int, int]:
    return "RYGBW".index(name[0]), int(name[1])


def arranged(hands: list[list[str]], draws: list[str], **config: Any) -> MiniHanabi:
    """A game dealt the given hands, whose deck yields ``draws`` in that order."""
    game = MiniHanabi.new(config, 0)
    game.hands = [[card(c) for c in hand] for hand in hands]
    game.knowledge = [[game._blank() for _ in hand] for hand in hands]
    game.deck = [card(c) for c in reversed(draws)]
    return game


def hand(game: MiniHanabi, seat: int) -> list[str]:
    return game.observe(1 - seat).data["partner_hand"]


# ---- plays and misplays -----------------------------------------------------------------


def test_a_playable_card_extends_its_firework_and_pays_both_seats() -> None:
    game = arranged([["R1", "Y2"], ["Y1", "R2"]], ["R3", "Y3"])
    assert game.step({0: "play 1"}) == (1.0, 1.0)
    data = game.observe(1).data
    assert data["fireworks"] == {"R": 1, "Y": 0}
    assert data["score"] == 1
    assert data["discards"] == []
    assert data["last_action"] == {"seat": 0, "action": "play 1", "card": "R1", "result": "played"}
    assert game.to_move() == (1,)


def test_after_a_play_the_rest_of_the_hand_shifts_left_and_the_new_card_goes_right() -> None:
    game = arranged([["R1", "Y2", "Y3"], ["Y1", "R2", "R1"]], ["R3", "Y1"], hand_size=3)
    game.step({0: "hint 1"})
    game.step({1: "hint y"})
    assert game.observe(0).data["my_knowledge"][1] == {"colours": "Y", "ranks": "123", "touched": True}
    game.step({0: "play 1"})
    assert hand(game, 0) == ["Y2", "Y3", "R3"]
    assert game.observe(0).data["my_knowledge"] == [
        {"colours": "Y", "ranks": "123", "touched": True},
        {"colours": "Y", "ranks": "123", "touched": True},
        {"colours": "RY", "ranks": "123", "touched": False},
    ]


def test_a_misplay_costs_a_life_and_discards_the_card() -> None:
    game = arranged([["R2", "Y1"], ["Y2", "R1"]], ["R3", "Y3"], lives=2)
    assert game.step({0: "play 1"}) is None
    data = game.observe(1).data
    assert data["lives"] == 1
    assert data["discards"] == ["R2"]
    assert data["fireworks"] == {"R": 0, "Y": 0}
    assert data["last_action"]["result"] == "misplay"
    assert not game.is_over
    assert hand(game, 0) == ["Y1", "R3"]


def test_losing_the_last_life_ends_the_game_with_score_zero() -> None:
    game = arranged([["R1", "Y1"], ["Y1", "R3"]], ["Y2", "R2"], lives=2)
    game.step({0: "play 1"})
    game.step({1: "play 1"})
    assert game.returns() == (2.0, 2.0)
    game.step({0: "play 1"})  # Y1 again: misplay
    assert not game.is_over
    assert game.step({1: "play 1"}) == (-2.0, -2.0)  # R3 on R1: the last life
    assert game.is_over
    assert game.returns() == (0.0, 0.0)
    assert game.observe(0).data["score"] == 0
    assert game.to_move() == ()
    assert "every life is lost" in game.observe(0).text
    with pytest.raises(GameOver):
        game.step({0: "play 1"})


# ---- hints and tokens -------------------------------------------------------------------


def test_a_colour_hint_gives_positive_and_negative_knowledge() -> None:
    game = arranged([["R1", "G1"], ["R2", "Y1", "G3"]], ["G1"], colours=3)
    game.step({0: "hint r"})
    assert game.observe(1).data["my_knowledge"] == [
        {"colours": "R", "ranks": "123", "touched": True},
        {"colours": "YG", "ranks": "123", "touched": False},
        {"colours": "YG", "ranks": "123", "touched": False},
    ]
    assert game.observe(0).data["partner_knowledge"] == game.observe(1).data["my_knowledge"]
    assert game.observe(0).data["last_action"] == {"seat": 0, "action": "hint r", "touched": [1]}


def test_a_rank_hint_gives_positive_and_negative_knowledge_and_combines_with_colour() -> None:
    game = arranged([["R1", "Y2"], ["Y1", "R1"]], ["R3", "Y3"])
    game.step({0: "hint 1"})
    game.step({1: "hint y"})
    game.step({0: "discard 1"})
    assert game.observe(0).data["partner_knowledge"] == [
        {"colours": "RY", "ranks": "1", "touched": True},
        {"colours": "RY", "ranks": "1", "touched": True},
    ]
    assert game.observe(1).data["partner_knowledge"] == [
        {"colours": "Y", "ranks": "123", "touched": True},
        {"colours": "RY", "ranks": "123", "touched": False},
    ]
    game.step({1: "hint 2"})
    assert game.observe(0).data["last_action"]["touched"] == [1]
    assert game.observe(0).data["my_knowledge"] == [
        {"colours": "Y", "ranks": "2", "touched": True},
        {"colours": "RY", "ranks": "13", "touched": False},
    ]


def test_a_hint_spends_a_token_and_needs_one() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"], hints=1)
    game.step({0: "hint r"})
    assert game.observe(0).data["hints"] == 0
    assert not any(a.startswith("hint") for a in game.legal_actions(1))
    with pytest.raises(IllegalAction, match="no hint tokens"):
        game.step({1: "hint r"})


def test_a_hint_must_touch_a_card() -> None:
    game = arranged([["R1", "Y1"], ["R2", "R3"]], ["Y2", "Y3"])
    assert game.legal_actions(0) == ("play 1", "play 2", "hint r", "hint 2", "hint 3")
    with pytest.raises(IllegalAction, match="no yellow"):
        game.step({0: "hint y"})
    with pytest.raises(IllegalAction, match="no card of rank 1"):
        game.step({0: "hint 1"})
    assert game.observe(0).data["hints"] == 3


def test_hints_name_only_colours_and_ranks_in_play() -> None:
    game = arranged([["R1", "Y1"], ["R2", "R3"]], ["Y2", "Y3"])
    with pytest.raises(IllegalAction, match="neither a colour"):
        game.step({0: "hint g"})
    with pytest.raises(IllegalAction, match="neither a colour"):
        game.step({0: "hint 4"})


def test_discarding_regains_a_token_and_is_illegal_at_the_maximum() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3", "R1"])
    assert not any(a.startswith("discard") for a in game.legal_actions(0))
    with pytest.raises(IllegalAction, match="all 3 hint tokens"):
        game.step({0: "discard 1"})
    game.step({0: "hint r"})
    assert "discard 2" in game.legal_actions(1)
    game.step({1: "discard 2"})
    data = game.observe(0).data
    assert data["hints"] == 3
    assert data["discards"] == ["Y2"]
    assert data["last_action"] == {"seat": 1, "action": "discard 2", "card": "Y2"}
    assert data["partner_hand"] == ["R2", "R3"]


def test_completing_a_firework_regains_a_token_up_to_the_maximum() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3", "R1", "Y1"], ranks=2, colours=2)
    game.step({0: "hint r"})
    game.step({1: "hint r"})
    game.step({0: "play 1"})
    assert game.observe(0).data["hints"] == 1
    game.step({1: "play 1"})  # R2 completes red at rank 2
    assert game.observe(0).data["hints"] == 2
    game.step({0: "play 1"})  # Y1
    game.step({1: "play 1"})  # Y2 completes yellow: all fireworks done
    assert game.is_over
    assert game.returns() == (4.0, 4.0)


def test_completing_a_firework_at_the_maximum_keeps_the_maximum() -> None:
    game = arranged([["R1", "Y1"], ["Y2", "R2"]], ["R2", "Y3"], ranks=1, colours=2)
    game.step({0: "play 1"})
    assert game.observe(0).data["hints"] == 3
    assert game.observe(0).data["fireworks"] == {"R": 1, "Y": 0}


# ---- the end ----------------------------------------------------------------------------


def test_completing_every_firework_ends_with_the_perfect_score() -> None:
    game = arranged([["R1"], ["R2"]], ["R1", "R1"], colours=1, ranks=2, hand_size=1)
    game.step({0: "play 1"})
    assert not game.is_over
    assert game.step({1: "play 1"}) == (1.0, 1.0)
    assert game.is_over
    assert game.returns() == (2.0, 2.0)
    assert game.observe(0).data["score"] == 2
    assert "Final score: 2 of 2" in game.observe(1).text


def test_after_the_last_card_is_drawn_each_player_has_one_final_turn() -> None:
    game = arranged([["R2", "R3"], ["R2", "R1"]], ["R1", "R1"], colours=1, ranks=3)
    game.step({0: "hint 2"})
    game.step({1: "hint 3"})
    game.step({0: "discard 1"})  # draws R1; one card left
    assert game.observe(0).data["final_turns"] is None
    game.step({1: "discard 1"})  # draws the last card
    data = game.observe(0).data
    assert data["deck_size"] == 0
    assert data["final_turns"] == 2
    assert "2 final turn(s) left" in game.observe(0).text
    assert game.step({0: "play 2"}) == (1.0, 1.0)  # seat 0's final turn: R1
    assert not game.is_over
    assert game.legal_actions(1)[:2] == ("play 1", "play 2")
    game.step({1: "hint 3"})  # seat 1's final turn, its hand full
    assert game.is_over
    assert game.returns() == (1.0, 1.0)
    assert game.lives == 1


def test_the_deck_running_out_ends_the_game_keeping_the_score() -> None:
    game = arranged([["R1", "R3"], ["R2", "R1"]], ["R1", "R2"], colours=1, ranks=3, lives=2)
    game.step({0: "play 1"})  # R1; draws R1
    game.step({1: "play 1"})  # R2; draws the last card, R2
    game.step({0: "hint 2"})
    assert not game.is_over
    game.step({1: "discard 1"})  # no card to draw: the hand shrinks
    assert game.is_over
    assert game.returns() == (2.0, 2.0)
    assert len(game.hands[1]) == 1


# ---- actions ----------------------------------------------------------------------------


def test_actions_are_canonicalised() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"])
    assert game.validate(0, "  HINT   Red ") == "hint r"
    assert game.validate(0, "hint Y") == "hint y"
    assert game.validate(0, "Play 02") == "play 2"
    game.step({0: "Hint 2"})
    assert game.history == [{0: "hint 2"}]


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("jump", "not an action"),
        ("play", "not an action"),
        ("play 1 2", "not an action"),
        ("play 3", "slots are 1 to 2"),
        ("play 0", "slots are 1 to 2"),
        ("play x", "slots are 1 to 2"),
        ("play ²", "slots are 1 to 2"),
        ("hint ²", "neither a colour"),
        ("hint purple", "neither a colour"),
    ],
)
def test_malformed_actions_are_rejected_with_a_reason(action: str, reason: str) -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"])
    with pytest.raises(IllegalAction, match=reason):
        game.step({0: action})


def test_only_the_seat_to_move_may_act() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"])
    assert game.legal_actions(1) == ()
    with pytest.raises(IllegalAction, match="seat 0's turn"):
        game.validate(1, "play 1")


def test_every_legal_action_is_in_the_action_space() -> None:
    config = MiniHanabiConfig(colours=3, ranks=4, hand_size=3)
    space = config.action_space()
    assert len(space) == 3 + 3 + 3 + 4
    assert "hint g" in space and "hint 4" in space and "discard 3" in space
    for seed in range(20):
        game = MiniHanabi.new(config, seed)
        game.step({0: "hint " + game.legal_actions(0)[-1].split()[1]})
        assert set(game.legal_actions(1)) <= set(space)


# ---- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"colours": 0}, "colours"),
        ({"colours": 6}, "colours"),
        ({"ranks": 0}, "ranks"),
        ({"ranks": 6}, "ranks"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": 6}, "hand_size"),
        ({"hints": 0}, "hints"),
        ({"lives": 0}, "lives"),
        ({"lives": "many"}, "lives"),
        ({"colour": 2}, "colour"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        MiniHanabi.new(config)


def test_only_two_players_for_now() -> None:
    with pytest.raises(ConfigError, match="2 players"):
        MiniHanabi.new({"players": 3})


def test_deck_composition_follows_hanabi() -> None:
    assert [copies(r, 5) for r in range(1, 6)] == [3, 2, 2, 2, 1]
    assert deck_size(2, 3) == 12
    assert deck_size(5, 5) == 50
    game = MiniHanabi.new({"colours": 3}, 7)
    cards = sorted(game.deck + [c for h in game.hands for c in h])
    assert cards == sorted((c, r) for c in range(3) for r in (1, 1, 1, 2, 2, 3))


def test_return_bounds_span_zero_to_the_perfect_score() -> None:
    assert MiniHanabi.spec.min_return == 0.0
    assert MiniHanabi.spec.max_return == 6.0
    assert MiniHanabiConfig(colours=5, ranks=5).return_bounds() == (0.0, 25.0)


# ---- chance and hidden information ------------------------------------------------------


def test_the_deal_is_one_chance_event_fixed_by_the_seed() -> None:
    game = MiniHanabi.new(None, 11)
    assert game._chance_index == 1
    assert MiniHanabi.new(None, 11).hands == game.hands
    assert MiniHanabi.new(None, 11).deck == game.deck
    assert len({str(MiniHanabi.new(None, s).hands) for s in range(20)}) > 10


def seeds_by_hands() -> dict[str, list[MiniHanabi]]:
    """Games of many seeds grouped by seat 1's hand."""
    groups: dict[str, list[MiniHanabi]] = {}
    for seed in range(300):
        game = MiniHanabi.new(None, seed)
        groups.setdefault(str(game.hands[1]), []).append(game)
    return groups


def test_a_seat_observation_does_not_depend_on_its_own_hand() -> None:
    pairs = [(a, b) for games in seeds_by_hands().values() for a in games for b in games if a.hands[0] != b.hands[0]]
    assert pairs
    for a, b in pairs[:20]:
        assert a.observe(0) == b.observe(0)
        assert a.observe(1) != b.observe(1)
        assert a.public_view() == b.public_view()


def test_a_seat_observation_shows_its_partner_hand() -> None:
    a = MiniHanabi.new(None, 0)
    b = next(game for game in (MiniHanabi.new(None, s) for s in range(1, 100)) if game.hands[1] != a.hands[1])
    assert a.observe(0) != b.observe(0)
    shown = a.observe(0)
    assert shown.data["partner_hand"] == [f"{'RY'[c]}{r}" for c, r in a.hands[1]]
    for name in shown.data["partner_hand"]:
        assert name in shown.text


def test_own_cards_appear_only_once_known_through_play_or_discard() -> None:
    game = arranged([["G3", "G2"], ["R2", "Y2"]], ["R3", "Y3"], colours=3)
    assert "G3" not in game.observe(0).text
    assert "G2" not in json.dumps(game.observe(0).data)


def test_observation_data_is_json_serialisable_throughout_a_game() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3", "R1"])
    for action in ["hint r", "discard 1", "play 1", "hint 3"]:
        game.step({game.to_move()[0]: action})
        for seat in (0, 1):
            data = game.observe(seat).data
            assert json.loads(json.dumps(data)) == data


def test_last_action_is_a_copy_the_reader_may_change() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"])
    game.step({0: "hint r"})
    game.observe(1).data["last_action"]["touched"].append(9)
    assert game.observe(1).data["last_action"]["touched"] == [1]


def test_observation_text_tells_an_llm_the_whole_table() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y2"]], ["R3", "Y3"])
    game.step({0: "hint 2"})
    text = game.observe(1).text
    assert "You are seat 1" in text and "It is your turn" in text
    assert "Fireworks: R 0/3, Y 0/3" in text
    assert "Hint tokens: 2 of 3" in text and "Lives: 1 of 1" in text and "Deck: 2 card(s) left" in text
    assert "slot 1: colour R/Y, rank 2; named by a hint" in text
    assert "slot 1: R1; they know: colour R/Y, rank 1/2/3; not yet named by a hint" in text
    assert "seat 0 hinted rank 2 to seat 1, touching slot(s) 1, 2" in text


def test_the_public_view_hides_both_hands_while_live_and_the_full_view_shows_them() -> None:
    game = arranged([["R1", "Y1"], ["R2", "Y3"]], ["R3", "Y2"])
    game.step({0: "hint 2"})
    public = game.public_view()
    groups = {g["label"]: g["cards"] for g in public["render"][0]["groups"]}
    assert groups["Seat 0"] == ["?", "?"] and groups["Seat 1"] == ["?", "?"]
    assert "R2" not in json.dumps(public) and "Y3" not in json.dumps(public)
    full = {g["label"]: g["cards"] for g in game.full_view()["render"][0]["groups"]}
    assert full["Seat 0"] == ["R1", "Y1"] and full["Seat 1"] == ["R2", "Y3"]


def test_the_public_view_shows_the_hands_once_the_game_is_over() -> None:
    game = arranged([["R2", "Y1"], ["R2", "Y3"]], ["R3", "Y2"])
    game.step({0: "play 1"})
    groups = {g["label"]: g["cards"] for g in game.public_view()["render"][0]["groups"]}
    assert groups["Seat 1"] == ["R2", "Y3"]
    assert groups["Discards"] == ["R2"]
