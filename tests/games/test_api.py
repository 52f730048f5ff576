"""The shared game machinery: configs, chance, stepping, serialisation, the registry."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence

import pytest

import games
from games import api
from games.api import ConfigError, GameError, GameOver, IllegalAction, make_config
from games.chance import ChanceRng
from games.iterated_prisoners_dilemma import IteratedPrisonersDilemma
from games.tic_tac_toe import TicTacToe


def test_unknown_config_key_names_the_key_and_the_closest_one() -> None:
    with pytest.raises(ConfigError, match="unknown config key 'round'; did you mean 'rounds'"):
        IteratedPrisonersDilemma.new({"round": 3})


def test_command_line_strings_are_parsed_by_the_field_type() -> None:
    config = make_config(IteratedPrisonersDilemma.Config, {"rounds": "4", "cheap_talk": "yes", "temptation": "5.5"})
    assert (config.rounds, config.cheap_talk, config.temptation) == (4, True, 5.5)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rounds": "four"}, "config key 'rounds' must be an integer, got 'four'"),
        ({"cheap_talk": "maybe"}, "config key 'cheap_talk' must be true or false"),
        ({"rounds": 2.5}, "config key 'rounds' must be an integer, got 2.5"),
        # as a seek's JSON or msgpack said them, not as Python writes them (None, (4,), True)
        ({"rounds": None}, "config key 'rounds' must be an integer, got null$"),
        ({"rounds": [4]}, r"config key 'rounds' must be an integer, got \[4\]$"),
        ({"rounds": True}, "config key 'rounds' must be an integer, got true$"),
    ],
)
def test_config_values_of_the_wrong_type_are_refused_with_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        IteratedPrisonersDilemma.new(values)


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [
        ("public-goods", "punish_cost", "nan"),
        ("public-goods", "punish_fine", float("inf")),
        ("iterated-stag-hunt", "stag_stag", "inf"),
        ("iterated-prisoners-dilemma", "sucker", "-inf"),
        ("trust-and-split", "high_value", "infinity"),
    ],
)
def test_a_number_that_is_not_finite_is_refused_with_the_key(name: str, key: str, value: object) -> None:
    """NaN slips past every range check (all its comparisons are false) and an infinite
    payoff makes returns no ranking or JSON can carry."""
    with pytest.raises(ConfigError, match=f"config key '{key}' must be a finite number"):
        games.get(name).new({key: value})


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [
        ("hanabi", "lives", 2**64),  # no msgpack integer: a lobby listing pig's target of it crashed the server
        ("hanabi", "lives", "18446744073709551616"),
        ("public-goods", "punish_fine", 2**64),  # an int given for a float key
        ("iterated-chicken", "straight_straight", -1.7e308),  # finite, but two rounds of it are not
        ("mini-hanabi", "lives", 10**400),
    ],
)
def test_a_number_past_a_billion_is_refused_with_the_key(name: str, key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"config key '{key}' must be a number from -1,000,000,000 to 1,000,000,000"):
        games.get(name).new({key: value})


def test_a_player_count_outside_the_spec_is_refused() -> None:
    with pytest.raises(ConfigError, match="tic-tac-toe is played by 2 players, not 3"):
        TicTacToe.new({"players": 3})


@pytest.mark.parametrize("seed", [-1, 2**63, True], ids=["negative", "past 64 bits signed", "a boolean"])
def test_a_seed_the_store_and_the_wire_cannot_carry_is_refused(seed: int) -> None:
    with pytest.raises(ConfigError, match="the seed must be an integer from 0 to 9223372036854775807"):
        TicTacToe.new(None, seed)


def test_config_overrides_list_only_the_changed_keys() -> None:
    config = make_config(IteratedPrisonersDilemma.Config, {"rounds": 3})
    assert config.overrides() == {"rounds": 3}
    assert make_config(IteratedPrisonersDilemma.Config, None).overrides() == {}


def test_a_config_made_again_from_the_same_values_is_the_one_kept() -> None:
    first = make_config(IteratedPrisonersDilemma.Config, {"rounds": 3, "temptation": 5.5})
    assert make_config(IteratedPrisonersDilemma.Config, {"rounds": 3, "temptation": 5.5}) is first
    assert make_config(IteratedPrisonersDilemma.Config, None) is make_config(IteratedPrisonersDilemma.Config, {})
    assert make_config(IteratedPrisonersDilemma.Config, {"rounds": 4}) is not first


def test_kept_configs_tell_equal_values_of_other_types_apart() -> None:
    """True == 1 == 1.0 in a dict key, but a boolean is no number of rounds, and -0.0 is kept as given."""
    assert make_config(IteratedPrisonersDilemma.Config, {"rounds": 1}).rounds == 1  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="config key 'rounds' must be an integer, got true"):
        make_config(IteratedPrisonersDilemma.Config, {"rounds": True})
    with pytest.raises(ConfigError, match=r"config key .rounds. must be an integer, got 1\.0"):
        make_config(IteratedPrisonersDilemma.Config, {"rounds": 1.0})
    assert str(make_config(IteratedPrisonersDilemma.Config, {"sucker": 0.0}).sucker) == "0.0"  # type: ignore[attr-defined]
    assert str(make_config(IteratedPrisonersDilemma.Config, {"sucker": -0.0}).sucker) == "-0.0"  # type: ignore[attr-defined]


def test_configs_kept_are_bounded() -> None:
    for temptation in range(api.CONFIGS_KEPT + 10):
        make_config(IteratedPrisonersDilemma.Config, {"temptation": 5 + temptation / 10_000})
    assert len(api._made_configs) <= api.CONFIGS_KEPT


def test_chance_draws_depend_only_on_seed_and_event_index() -> None:
    first = [ChanceRng(7, 3).bits() for _ in range(3)]
    again = [ChanceRng(7, 3).bits() for _ in range(3)]
    assert first == again
    assert ChanceRng(7, 4).bits() != first[0]
    assert ChanceRng(8, 3).bits() != first[0]
    assert ChanceRng(2**70, 0).bits() != ChanceRng(0, 0).bits()


def test_chance_draws_are_uniform_enough() -> None:
    counts = collections.Counter(ChanceRng(seed, 0).randrange(6) for seed in range(60_000))
    assert set(counts) == set(range(6))
    assert all(abs(count - 10_000) < 400 for count in counts.values()), counts  # > 4 standard deviations
    deck = list(range(10))
    ChanceRng(1, 0).shuffle(deck)
    assert sorted(deck) == list(range(10)) and deck != list(range(10))
    assert 0.0 <= ChanceRng(3, 1).random() < 1.0


def test_an_illegal_step_changes_nothing() -> None:
    state = TicTacToe.new()
    state.step({0: "b2"})
    before = state.serialize()
    with pytest.raises(IllegalAction, match="already taken"):
        state.step({1: "b2"})
    with pytest.raises(IllegalAction, match=r"expected actions for seats \[1\]"):
        state.step({0: "a1", 1: "a2"})
    with pytest.raises(IllegalAction, match="seat 1 must act"):
        state.step({0: "a1"})
    assert state.serialize() == before and state.to_move() == (1,)


def test_canonical_forms_are_kept_in_the_history() -> None:
    state = TicTacToe.new()
    state.step({0: " B2 "})
    assert state.history == [{0: "b2"}]


def test_a_finished_game_refuses_more_steps() -> None:
    state = TicTacToe.replay([{0: "a1"}, {1: "b1"}, {0: "a2"}, {1: "b2"}, {0: "a3"}])
    assert state.is_over and state.returns() == (1.0, -1.0)
    with pytest.raises(GameOver):
        state.step({1: "c3"})


class _OneRewardTicTacToe(TicTacToe):
    """A plugin's bug: the final step pays only seat 0."""

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        rewards = super()._apply(actions)
        return None if rewards is None else list(rewards)[:1]


def test_rewards_of_the_wrong_length_are_the_games_fault_not_a_silent_zero() -> None:
    state = _OneRewardTicTacToe.replay([{0: "a1"}, {1: "b1"}, {0: "a2"}, {1: "b2"}])
    with pytest.raises(GameError, match="tic-tac-toe returned 1 rewards for 2 seats"):
        state.step({0: "a3"})


def test_serialise_then_deserialise_rebuilds_the_same_state() -> None:
    state = IteratedPrisonersDilemma.new({"rounds": 3}, seed=11)
    state.step({0: "c", 1: "D"})
    record = state.serialize()
    rebuilt = IteratedPrisonersDilemma.deserialize(record)
    assert rebuilt.serialize() == record
    assert rebuilt.returns() == state.returns() and rebuilt.observe(0) == state.observe(0)


def test_deserialising_another_games_record_is_refused() -> None:
    with pytest.raises(games.api.GameError, match="is of game 'tic-tac-toe'"):
        IteratedPrisonersDilemma.deserialize(TicTacToe.new().serialize())


def test_an_unknown_game_suggests_the_closest_name() -> None:
    with pytest.raises(KeyError, match="unknown game 'tic-tac-to'; did you mean 'tic-tac-toe'"):
        games.get("tic-tac-to")


def test_the_registry_holds_the_six_foundation_games_in_all_four_categories() -> None:
    names = games.names()
    for name in ("tic-tac-toe", "connect-four", "kuhn-poker", "iterated-prisoners-dilemma", "mini-hanabi", "item-negotiation"):
        assert name in names
    assert {game.spec.category for game in games.all()} == {"competitive", "cooperative", "social_dilemma", "negotiation"}
