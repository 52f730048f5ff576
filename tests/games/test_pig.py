"""Pig: rolling, busting on a 1, holding, winning at the target, N-player payoffs, configs.

The dice come from the seed: seed 0's rolls, in order, are written out below (and
checked against the chance generator), so each match here is checked by hand.
"""

from __future__ import annotations

import json

import pytest

from games.api import ConfigError, GameOver, IllegalAction
from games.chance import ChanceRng
from games.pig import Pig, win_rewards

SEED_0_ROLLS = (6, 1, 1, 4, 3, 3, 2, 3, 1, 3, 4)


def play(state: Pig, *actions: str) -> Pig:
    for action in actions:
        state.step({state.to_move()[0]: action})
    return state


def test_seed_0_rolls_these_dice() -> None:
    assert tuple(ChanceRng(0, i).randrange(6) + 1 for i in range(len(SEED_0_ROLLS))) == SEED_0_ROLLS


def test_spec_is_a_two_to_four_player_zero_sum_dice_game() -> None:
    spec = Pig.spec
    assert (spec.name, spec.category) == ("pig", "competitive")
    assert spec.chance and spec.zero_sum and not spec.simultaneous and not spec.hidden_information
    assert (spec.min_players, spec.max_players) == (2, 4)
    assert spec.action_space == ("roll", "hold")
    assert (spec.min_return, spec.max_return) == (-1.0, 1.0)


def test_full_two_player_match_to_10() -> None:
    state = Pig.new({"target": 10}, seed=0)
    play(state, "roll")  # seat 0 rolls 6
    assert (state.turn_total, state.to_move()) == (6, (0,))
    play(state, "roll")  # seat 0 rolls 1: the 6 is lost
    assert (state.scores, state.turn_total, state.to_move()) == ([0, 0], 0, (1,))
    play(state, "roll")  # seat 1 rolls 1 at once
    assert (state.scores, state.to_move()) == ([0, 0], (0,))
    play(state, "roll", "hold")  # seat 0 rolls 4 and banks it
    assert (state.scores, state.to_move()) == ([4, 0], (1,))
    play(state, "roll", "roll", "roll", "hold")  # seat 1 rolls 3, 3, 2 and banks 8
    assert state.scores == [4, 8]
    play(state, "roll", "roll")  # seat 0 rolls 3, then 1
    assert (state.scores, state.to_move()) == ([4, 8], (1,))
    play(state, "roll")  # seat 1 rolls 3: 8 + 3 reaches 10 if it holds
    assert not state.is_over
    play(state, "hold")
    assert state.is_over and state.winner == 1
    assert state.scores == [4, 11]
    assert state.returns() == (-1.0, 1.0)
    assert state.step_count == 13
    assert state.to_move() == () and state.legal_actions(1) == ()
    assert "Seat 1 reached 11 and wins." in state.observe(0).text
    with pytest.raises(GameOver):
        state.step({0: "roll"})


def test_full_three_player_match_the_losers_share_the_loss() -> None:
    state = Pig.new({"target": 10, "players": 3}, seed=0)
    play(state, "roll", "roll")  # seat 0: 6, 1
    play(state, "roll")  # seat 1: 1
    play(state, "roll", "hold")  # seat 2: 4, banks 4
    play(state, "roll", "roll", "roll", "hold")  # seat 0: 3, 3, 2, banks 8
    play(state, "roll", "roll")  # seat 1: 3, 1
    assert state.scores == [8, 0, 4] and state.to_move() == (2,)
    play(state, "roll", "roll", "hold")  # seat 2: 3, 4, banks 7: 11
    assert state.is_over and state.winner == 2
    assert state.returns() == (-0.5, -0.5, 1.0)


def test_four_players_losers_get_a_third_each() -> None:
    assert win_rewards(3, 4) == pytest.approx((-1 / 3, -1 / 3, -1 / 3, 1.0))
    assert sum(win_rewards(0, 4)) == pytest.approx(0.0)
    assert win_rewards(0, 2) == (1.0, -1.0)


def test_a_turn_starts_with_a_roll_and_hold_needs_a_turn_total() -> None:
    state = Pig.new()
    assert state.legal_actions(0) == ("roll",)
    assert state.legal_actions(1) == ()
    with pytest.raises(IllegalAction, match="nothing to hold: answer roll"):
        state.step({0: "hold"})
    play(state, "roll")  # 6
    assert state.legal_actions(0) == ("roll", "hold")


def test_holding_below_the_target_passes_the_die() -> None:
    state = play(Pig.new({"target": 7}, seed=0), "roll", "roll", "roll", "roll", "hold")  # 6, 1 | 1 | 4, hold
    assert state.scores == [4, 0] and not state.is_over and state.to_move() == (1,)


def test_a_two_sided_die_busts_half_the_time() -> None:
    state = Pig.new({"die": 2, "target": 3}, seed=0)
    faces = {ChanceRng(0, i).randrange(2) + 1 for i in range(20)}
    assert faces == {1, 2}
    while not state.is_over:
        seat = state.to_move()[0]
        state.step({seat: "hold" if state.turn_total >= 3 else "roll"})
        assert all(face == 2 for face in state.rolls)
    assert max(state.scores) >= 3


@pytest.mark.parametrize(
    ("spelling", "canonical"), [("ROLL", "roll"), (" r ", "roll"), ("Hold", "hold"), ("h", "hold"), ("bank", "hold")]
)
def test_actions_are_canonicalised(spelling: str, canonical: str) -> None:
    state = play(Pig.new(seed=0), "roll")
    assert state.validate(0, spelling) == canonical


def test_bad_actions_are_rejected_with_the_reason() -> None:
    state = Pig.new()
    with pytest.raises(IllegalAction, match="'pass' is not a Pig action; answer roll or hold"):
        state.validate(0, "pass")
    with pytest.raises(IllegalAction, match="seat 0's turn, not seat 1's"):
        state.validate(1, "roll")


def test_observation_shows_scores_turn_and_recent_turns() -> None:
    state = play(Pig.new({"target": 10}, seed=0), "roll", "roll", "roll", "roll")  # 6, 1 | 1 | seat 0 rolls 4
    obs = state.observe(0)
    assert obs.data == {
        "seat": 0,
        "scores": [0, 0],
        "turn_total": 4,
        "rolls": [4],
        "last_roll": 4,
        "to_move": 0,
        "target": 10,
        "die": 6,
    }
    json.dumps(obs.data)
    assert "first to 10 wins" in obs.text
    assert "seat 0 rolled 6, 1: a 1, turn total lost; seat 1 rolled 1: a 1, turn total lost" in obs.text
    assert "you rolled 4, turn total 4 (holding now would bank 4). Answer roll or hold." in obs.text
    other = state.observe(1)
    assert "Seat 0 to act; turn total 4 (rolls: 4)." in other.text
    assert other.data["last_roll"] == 4
    play(state, "hold")
    assert state.observe(1).data["last_roll"] == 4
    assert "seat 0 rolled 4 and held: +4" in state.observe(1).text
    assert "you have not rolled yet. Answer roll." in state.observe(1).text
    assert Pig.new().observe(0).data["last_roll"] is None


def test_public_view_shows_scores_and_the_turn_total() -> None:
    state = play(Pig.new(seed=0), "roll")
    view = state.public_view()
    facts = dict(view["render"][0]["items"])
    assert facts == {"seat 0": "0", "seat 1": "0", "target": "100", "turn total": "6"}
    assert "Seat 0 to act; turn total 6" in view["text"]
    assert state.full_view() == view


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"target": 0}, "'target' must be at least 1, got 0"),
        ({"target": 501}, "'target' must be at most 500, got 501"),  # else past the server's 10,000 steps
        ({"die": 1}, "'die' must be 2 to 100 faces, got 1"),
        ({"die": 101}, "'die' must be 2 to 100 faces"),
        ({"players": 5}, "played by 2 to 4 players, not 5"),
        ({"players": 1}, "played by 2 to 4 players, not 1"),
        ({"target": "far"}, "'target' must be an integer"),
    ],
)
def test_bad_configs_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Pig.new(values)
