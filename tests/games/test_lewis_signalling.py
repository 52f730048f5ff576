"""Rules of the Lewis signalling game: signal then act, shared payoff, states revealed after
each round, the end after the last round, canonical actions, config, hidden state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from games.api import HISTORY_SHOWN, ConfigError, GameOver, IllegalAction
from games.chance import ChanceRng
from games.lewis_signalling import LewisSignalling, LewisSignallingConfig


def states_of(game: LewisSignalling) -> list[int]:
    """The states (from 1) of every round of a game like ``game``, played to the end."""
    copy = LewisSignalling.new(game.config, game.seed)
    states = []
    while not copy.is_over:
        states.append(copy.state + 1)
        copy.step({0: "signal a"})
        copy.step({1: "act 1"})
    return states


# ---- rounds and payoffs -----------------------------------------------------------------


def test_the_sender_signals_then_the_receiver_acts() -> None:
    game = LewisSignalling.new(None, 0)
    assert game.to_move() == (0,)
    assert game.legal_actions(0) == ("signal a", "signal b", "signal c")
    assert game.legal_actions(1) == ()
    assert game.step({0: "signal b"}) is None
    assert game.to_move() == (1,)
    assert game.legal_actions(1) == ("act 1", "act 2", "act 3")
    assert game.legal_actions(0) == ()
    game.step({1: "act 1"})
    assert game.to_move() == (0,)
    assert game.observe(0).data["round"] == 2


def test_a_matching_act_pays_both_one_and_a_wrong_act_pays_nothing() -> None:
    game = LewisSignalling.new(None, 0)  # the first states are 3, 1
    game.step({0: "signal a"})
    assert game.step({1: "act 3"}) == (1.0, 1.0)
    game.step({0: "signal a"})
    assert game.step({1: "act 3"}) is None
    assert game.returns() == (1.0, 1.0)


def test_a_full_match_with_hand_checked_returns() -> None:
    """Seed 2 draws states 1, 2, 3, 3; the receiver answers 1, 3, 3, 1: rounds 1 and 3 match."""
    game = LewisSignalling.new({"rounds": 4}, 2)
    assert states_of(game) == [1, 2, 3, 3]
    rewards = []
    for signal, act in [("a", "1"), ("b", "3"), ("c", "3"), ("c", "1")]:
        rewards.append(game.step({0: f"signal {signal}"}))
        rewards.append(game.step({1: f"act {act}"}))
    assert rewards == [None, (1.0, 1.0), None, None, None, (1.0, 1.0), None, None]
    assert game.is_over and game.to_move() == ()
    assert game.returns() == (2.0, 2.0)
    assert game.observe(1).data["history"] == [
        {"round": 1, "state": 1, "signal": "a", "act": 1, "success": True},
        {"round": 2, "state": 2, "signal": "b", "act": 3, "success": False},
        {"round": 3, "state": 3, "signal": "c", "act": 3, "success": True},
        {"round": 4, "state": 3, "signal": "c", "act": 1, "success": False},
    ]
    assert "The game is over: 2 of 4 rounds won." in game.observe(0).text
    with pytest.raises(GameOver):
        game.step({0: "signal a"})


def test_the_game_ends_after_the_configured_rounds() -> None:
    game = LewisSignalling.new({"rounds": 1}, 5)
    game.step({0: "signal a"})
    assert not game.is_over
    game.step({1: "act 2"})
    assert game.is_over
    assert game.observe(0).data["state"] is None
    assert game.observe(0).data["round"] == 1


def test_each_round_draws_its_state_in_its_own_chance_event() -> None:
    game = LewisSignalling.new({"rounds": 6, "states": 5}, 9)
    assert game._chance_index == 1
    assert states_of(game) == [ChanceRng(9, k).randrange(5) + 1 for k in range(6)]
    assert len({tuple(states_of(LewisSignalling.new(None, seed))) for seed in range(10)}) > 5


# ---- actions ----------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "canonical"), [("B", "signal b"), ("  Signal   b ", "signal b"), ("signal c", "signal c")])
def test_signals_are_canonicalised(action: str, canonical: str) -> None:
    assert LewisSignalling.new(None, 0).validate(0, action) == canonical


@pytest.mark.parametrize(("action", "canonical"), [("2", "act 2"), ("Act 02", "act 2"), (" ACT 3", "act 3")])
def test_acts_are_canonicalised(action: str, canonical: str) -> None:
    game = LewisSignalling.new(None, 0)
    game.step({0: "a"})
    assert game.validate(1, action) == canonical
    assert game.history == [{0: "signal a"}]


@pytest.mark.parametrize("action", ["signal d", "signal", "d", "hello there", "act 1", "signal a b"])
def test_a_bad_signal_is_rejected_listing_the_signals(action: str) -> None:
    game = LewisSignalling.new(None, 0)
    with pytest.raises(IllegalAction, match="not a signal; send one of: signal a, signal b, signal c"):
        game.step({0: action})


@pytest.mark.parametrize("action", ["act 4", "act 0", "0", "signal a", "act", "state 1"])
def test_a_bad_act_is_rejected_listing_the_acts(action: str) -> None:
    game = LewisSignalling.new(None, 0)
    game.step({0: "signal a"})
    with pytest.raises(IllegalAction, match="not an act; choose one of: act 1, act 2, act 3"):
        game.step({1: action})


def test_only_the_seat_to_move_may_act() -> None:
    game = LewisSignalling.new(None, 0)
    with pytest.raises(IllegalAction, match="sender's"):
        game.validate(1, "act 1")
    game.step({0: "signal a"})
    with pytest.raises(IllegalAction, match="receiver's"):
        game.validate(0, "signal b")


def test_the_action_space_holds_every_signal_and_act() -> None:
    config = LewisSignallingConfig(states=4, signals=2)
    assert config.action_space() == ("signal a", "signal b", "act 1", "act 2", "act 3", "act 4")
    assert LewisSignalling.spec.action_space == ("signal a", "signal b", "signal c", "act 1", "act 2", "act 3")


# ---- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"states": 1}, "states"),
        ({"states": 27}, "states"),
        ({"signals": 1}, "signals"),
        ({"signals": 27}, "signals"),
        ({"rounds": 0}, "rounds"),
        ({"rounds": "ten"}, "rounds"),
        ({"signal": 2}, "signal"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=f"'{key}'"):
        LewisSignalling.new(config)


def test_two_players_only() -> None:
    with pytest.raises(ConfigError, match="2 players"):
        LewisSignalling.new({"players": 3})


def test_return_bounds_are_zero_to_the_rounds() -> None:
    assert (LewisSignalling.spec.min_return, LewisSignalling.spec.max_return) == (0.0, 10.0)
    assert LewisSignallingConfig(rounds=3).return_bounds() == (0.0, 3.0)


def test_fewer_signals_than_states_is_a_valid_harder_game() -> None:
    game = LewisSignalling.new({"states": 4, "signals": 2}, 0)
    assert game.legal_actions(0) == ("signal a", "signal b")
    game.step({0: "signal b"})
    assert len(game.legal_actions(1)) == 4


# ---- what each seat sees ----------------------------------------------------------------


def first_state_games() -> dict[int, LewisSignalling]:
    """A new game for each first state, found by searching seeds."""
    found: dict[int, LewisSignalling] = {}
    for seed in range(50):
        game = LewisSignalling.new(None, seed)
        found.setdefault(game.state, game)
    assert len(found) == 3
    return found


def test_only_the_sender_sees_the_state_while_the_round_is_live() -> None:
    games = list(first_state_games().values())
    for game in games:
        game.step({0: "signal a"})
    receiver = {json.dumps(g.observe(1).data) + g.observe(1).text for g in games}
    sender = {json.dumps(g.observe(0).data) + g.observe(0).text for g in games}
    assert len(receiver) == 1
    assert len(sender) == 3
    assert [g.observe(0).data["state"] for g in games] == [g.state + 1 for g in games]
    assert {g.observe(1).data["state"] for g in games} == {None}
    assert {json.dumps(g.public_view()) for g in games} == {json.dumps(games[0].public_view())}
    assert len({json.dumps(g.full_view()) for g in games}) == 3


def test_the_state_is_revealed_to_both_once_the_round_ends() -> None:
    game = LewisSignalling.new(None, 0)
    game.step({0: "signal c"})
    game.step({1: "act 2"})
    assert "round 1: state 3, signal c, act 2: no match, 0" in game.observe(1).text
    assert game.public_view()["render"][1]["rows"] == [["3", "c", "2", "miss"]]


def test_observations_tell_each_role_what_to_do() -> None:
    game = LewisSignalling.new(None, 0)
    sender = game.observe(0)
    assert "You are seat 0, the sender" in sender.text
    assert "This round's state is state 3. Send a signal: one of signal a, signal b, signal c." in sender.text
    assert "Waiting for the sender's signal." in game.observe(1).text
    game.step({0: "signal b"})
    receiver = game.observe(1)
    assert "You are seat 1, the receiver" in receiver.text
    assert "The sender sent signal b. Choose an act: one of act 1, act 2, act 3." in receiver.text
    assert receiver.data == {
        "seat": 1,
        "role": "receiver",
        "round": 1,
        "rounds": 10,
        "phase": "act",
        "states": 3,
        "signals": ["a", "b", "c"],
        "state": None,
        "signal": "b",
        "history": [],
        "score": 0,
    }
    assert game.private_info(0) == 3 and game.private_info(1) is None


def test_a_long_match_shows_its_latest_rounds_one_by_one_and_sums_up_the_rest() -> None:
    """Every round at every turn made one 1,000-round match's text 53 MB (found by QA)."""
    game = LewisSignalling.new({"rounds": 1000}, 0)
    for number in range(1, 31):
        game.step({0: "signal a"})
        right = game.state + 1
        game.step({1: f"act {right if number <= 10 else right % 3 + 1}"})  # the first 10 won, then none
    text = game.observe(1).text
    first = 30 - HISTORY_SHOWN
    assert f"  rounds 1 to {first}, not shown one by one (the observation's data lists every round): 10 won" in text
    assert f"  round {first + 1}: state " in text and f"  round {first}: " not in text and "Rounds won so far: 10 of 30." in text
    assert len(game.observe(1).data["history"]) == 30
    grid = next(block for block in game.full_view()["render"] if block["type"] == "grid")
    assert grid["row_labels"] == [str(n) for n in range(first + 1, 31)]
    assert grid["title"] == f"rounds; rounds before {first + 1} not shown"
    lengths = []
    for number in range(31, 1001):
        game.step({0: "signal b"})
        game.step({1: "act 2"})
        if number in (100, 999):
            lengths.append(len(game.observe(0).text))
    assert max(lengths) < 2_500
