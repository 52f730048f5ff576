"""The PettingZoo adapter: PettingZoo's own API test passes for every game with a fixed
action space, and a masked random agent's rewards add up to the game's returns."""

from __future__ import annotations

import contextlib
import io
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

import games
from arena.adapters.pettingzoo import UnsupportedGame, decode_text, encode_text, env, raw_env
from games.api import Game

ROOT = Path(__file__).resolve().parents[2]

GAMES = games.all()
TABLES = [(game, players) for game in GAMES for players in range(game.spec.min_players, game.spec.max_players + 1)]
DICT_OBSERVATION_WARNINGS = ("Observation space for each agent probably should be", "Observation is not a NumPy array")
"""What api_test says of every environment with an action mask (its own classic games included)."""


def ids(game: type[Game]) -> str:
    return game.spec.name


def table_ids(table: tuple[type[Game], int]) -> str:
    return f"{table[0].spec.name}/{table[1]}p"


def fixed_space(game: type[Game], players: int | None = None) -> tuple[str, ...]:
    config = game.new(None if players is None else {"players": players}).config
    space = config.action_space()
    if space is None:
        pytest.skip(f"{game.spec.name} has free-form actions, so no PettingZoo form")
    return space


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_pettingzoo_api_test_passes(game: type[Game]) -> None:
    fixed_space(game)
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()) as out:
        warnings.simplefilter("always")
        api_test(env(game.spec.name), num_cycles=100)
    assert "Passed API test" in out.getvalue()
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(DICT_OBSERVATION_WARNINGS)]
    assert unexpected == []


def play_masked_random(game: type[Game], players: int, seed: int) -> tuple[dict[str, float], list[tuple[int, str]], Game]:
    """One episode of a random agent that samples from the action mask; the rewards it
    accumulates from ``env.rewards``, the (seat, action) choices in order, and the final game."""
    environment = env(game.spec.name, {"players": players}, seed=seed)
    environment.reset(seed=seed)
    space = environment.unwrapped.actions
    rng = random.Random(seed)
    totals = dict.fromkeys(environment.possible_agents, 0.0)
    choices: list[tuple[int, str]] = []
    for agent in environment.agent_iter(100_000):
        observation, _reward, terminated, truncated, _info = environment.last()
        assert not truncated
        if terminated:
            action = None
        else:
            legal = np.flatnonzero(observation["action_mask"])
            action = int(rng.choice(legal))
            choices.append((int(agent.removeprefix("player_")), space[action]))
        environment.step(action)
        for name, reward in environment.rewards.items():
            totals[name] += reward
    return totals, choices, environment.unwrapped.game


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("table", TABLES, ids=table_ids)
def test_masked_random_play_ends_and_its_rewards_are_the_games_returns(table: tuple[type[Game], int]) -> None:
    game, players = table
    space = fixed_space(game, players)
    for seed in range(3):
        totals, choices, final = play_masked_random(game, players, seed)
        state = game.new({"players": players}, seed)
        joint: dict[int, str] = {}
        for seat, action in choices:
            assert seat in state.to_move() and seat not in joint
            assert action in space and action in state.legal_actions(seat)
            joint[seat] = action
            if len(joint) == len(state.to_move()):
                state.step(joint)
                joint = {}
        assert state.is_over and not joint
        assert [totals[f"player_{seat}"] for seat in range(players)] == pytest.approx(list(state.returns()))
        assert final.history == state.history


def test_a_later_simultaneous_mover_sees_the_state_from_before_the_step() -> None:
    environment = env("iterated-prisoners-dilemma")
    environment.reset(seed=0)
    before = decode_text(environment.observe("player_1")["observation"])
    assert environment.agent_selection == "player_0"
    environment.step(environment.unwrapped.actions.index("defect"))
    assert environment.agent_selection == "player_1"
    assert decode_text(environment.observe("player_1")["observation"]) == before
    assert environment.observe("player_0")["action_mask"].sum() == 0
    assert environment.rewards == {"player_0": 0.0, "player_1": 0.0}
    environment.step(environment.unwrapped.actions.index("cooperate"))
    assert environment.rewards == {"player_0": 5.0, "player_1": 0.0}
    assert "they defect" in decode_text(environment.observe("player_1")["observation"])


def test_the_observation_is_the_seats_own_text_and_the_mask_its_legal_actions() -> None:
    environment = env("kuhn-poker")
    environment.reset(seed=5)
    state = environment.unwrapped.game
    for seat, agent in enumerate(environment.possible_agents):
        observed = environment.observe(agent)
        assert decode_text(observed["observation"]) == state.observe(seat).text
        legal = {environment.unwrapped.actions[i] for i in np.flatnonzero(observed["action_mask"])}
        assert legal == set(state.legal_actions(seat))
    assert environment.observe("player_1")["action_mask"].sum() == 0


def test_the_same_reset_seed_deals_the_same_cards_and_no_seed_moves_on() -> None:
    environment = env("kuhn-poker", seed=7)
    environment.reset(seed=3)
    first = environment.unwrapped.game.private_info(0)
    environment.reset(seed=3)
    assert environment.unwrapped.game.seed == 3 and environment.unwrapped.game.private_info(0) == first
    environment.reset()
    assert environment.unwrapped.game.seed == 4


def test_an_unmasked_action_is_refused_and_changes_nothing() -> None:
    environment = env("tic-tac-toe")
    environment.reset()
    environment.step(0)
    with pytest.raises(ValueError, match="not legal now; use the action mask"):
        environment.step(0)
    assert environment.agent_selection == "player_1" and environment.unwrapped.game.step_count == 1


@pytest.mark.parametrize("make", [raw_env, env], ids=["raw_env", "env"])
@pytest.mark.parametrize("action", [-1, 9])
def test_an_action_outside_the_space_is_refused_naming_the_agent_and_the_range(make: Any, action: int) -> None:
    """Through env(), PettingZoo's assertion said only "action is not in action space", and
    nothing under ``python -O`` (found by a QA helper)."""
    environment = make("tic-tac-toe")
    environment.reset()
    with pytest.raises(ValueError, match=f"player_0 chose action {action}, not in Discrete\\(9\\)"):
        environment.step(action)
    assert environment.agent_selection == "player_0" and environment.unwrapped.game.step_count == 0


@pytest.mark.parametrize("action", [3.7, "2", [4], True, np.True_])
def test_the_raw_environment_refuses_an_action_that_is_not_an_integer(action: object) -> None:
    """It played 3.7 as action 3, "2" as action 2 and True as action 1 (found by QA helpers)."""
    environment = raw_env("tic-tac-toe")
    environment.reset()
    with pytest.raises(ValueError, match="an action is an integer index"):
        environment.step(action)  # type: ignore[arg-type]
    assert environment.game.step_count == 0
    environment.step(np.int64(4))  # what action_space(agent).sample() gives
    assert environment.game.history == [{0: "b2"}]


def test_each_agent_samples_from_a_stream_of_its_own() -> None:
    """Seeded alike, both agents threw the same hand in every round of rock-paper-scissors
    (found by a QA helper)."""
    environment = env("iterated-rock-paper-scissors")
    environment.reset(seed=5)
    draws = [[environment.action_space(agent).sample() for _ in range(40)] for agent in environment.possible_agents]
    assert draws[0] != draws[1]
    environment.reset(seed=5)
    assert [environment.action_space("player_0").sample() for _ in range(40)] == draws[0]


def test_a_seed_out_of_range_is_refused_and_the_environment_stays_usable() -> None:
    """A refused reset(seed=2**63) kept the seed for every reset after it; after 2**63 - 1 the
    next seed, 2**63, could not be played either (found by a QA helper)."""
    environment = raw_env("kuhn-poker")
    environment.reset(seed=11)
    with pytest.raises(games.api.ConfigError, match="the seed must be an integer from 0"):
        environment.reset(seed=2**63)
    environment.reset()
    assert environment.game.seed == 12
    environment.reset(seed=2**63 - 1)
    environment.reset()
    assert environment.game.seed == 0
    environment.reset(seed=np.int64(7))  # a seed numpy drew
    assert environment.game.seed == 7
    made = raw_env("kuhn-poker", seed=np.int64(3))  # refused: "got np.int64(3)" (found by a QA helper)
    made.reset()
    assert made.game.seed == 3


@pytest.mark.parametrize(
    ("name", "config"),
    [("item-negotiation", None), ("iterated-prisoners-dilemma", {"cheap_talk": True})],
)
def test_games_with_free_form_actions_are_refused_with_the_reason(name: str, config: dict[str, object] | None) -> None:
    with pytest.raises(UnsupportedGame, match="no fixed action space"):
        raw_env(name, config)


def test_a_game_with_too_many_actions_to_list_is_refused_pointing_at_its_config() -> None:
    """Colonel Blotto's 455 allocations of 12 troops to 4 fields pass its max_listed: the
    refusal said its actions were free-form (found by a QA helper)."""
    with pytest.raises(UnsupportedGame, match="too many to list \\(its config's max_listed; see `arena games colonel-blotto`"):
        raw_env("colonel-blotto", {"troops": 12, "fields": 4})
    with pytest.raises(UnsupportedGame, match="its actions are free-form\\)"):  # no key of its config lists them
        raw_env("item-negotiation")
    assert len(raw_env("colonel-blotto", {"troops": 12, "fields": 4, "max_listed": 500}).actions) == 455


@pytest.mark.parametrize("size", ["64", 100.5, True, 0])
def test_an_observation_size_that_is_not_a_positive_integer_is_refused_in_its_words(size: object) -> None:
    with pytest.raises(ValueError, match="observation_bytes must be an integer of at least 1, got"):
        raw_env("tic-tac-toe", observation_bytes=size)  # type: ignore[arg-type]


def test_an_observation_size_numpy_drew_is_taken() -> None:
    made = raw_env("tic-tac-toe", observation_bytes=np.int64(128))  # type: ignore[arg-type]
    assert made.observation_space("player_0")["observation"].shape == (128,)


def test_a_text_longer_than_the_buffer_is_cut_with_a_warning() -> None:
    array, cut = encode_text("héllo", 4)
    assert cut and bytes(array) == "héllo".encode()[:4]
    environment = env("tic-tac-toe", observation_bytes=16)
    environment.reset()
    with pytest.warns(RuntimeWarning, match="observation_bytes=16"):
        environment.observe("player_0")


def test_without_pettingzoo_the_adapter_says_which_extra_to_install() -> None:
    """It was a bare ModuleNotFoundError (found by QA)."""
    script = (
        "import sys; sys.modules['pettingzoo'] = None\n"
        "try:\n    import arena.adapters.pettingzoo\nexcept ModuleNotFoundError as error:\n    print(error, error.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout == "the PettingZoo adapter needs pettingzoo: pip install 'selfplay-arena[pettingzoo]' pettingzoo\n"
