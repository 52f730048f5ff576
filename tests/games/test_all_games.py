"""Properties every registered game must have, whatever its rules.

Random legal play from any seed ends without error and within the return bounds;
zero-sum games sum to zero; everything a game shows is JSON; the same seed and actions
give the same record; a replay rebuilds the final state; matches with the same seed see
the same chance events whatever their seats do.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, make_dataclass, replace
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import ClassVar, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
import games.registry
from games.api import (
    MAX_MESSAGE_CHARS,
    MAX_SEED,
    MAX_TALK_CHARS,
    MAX_TURNS,
    ConfigError,
    Game,
    GameConfig,
    GameError,
    IllegalAction,
)
from games.chance import ChanceRng
from games.registry import UnknownGame
from games.tic_tac_toe import TicTacToe
from tests.examples import example_module

GAMES = [*games.all(), example_module("guess_the_number").GuessTheNumber]  # the example of docs/PLUGINS.md too
TABLES = [(game, players) for game in GAMES for players in range(game.spec.min_players, game.spec.max_players + 1)]
"""Every game at every player count it supports."""
STEP_LIMIT = 2_000


def ids(game: type[Game]) -> str:
    return game.spec.name


def table_ids(table: tuple[type[Game], int]) -> str:
    return f"{table[0].spec.name}/{table[1]}p"


def random_joint_action(state: Game, rng: random.Random) -> dict[int, str]:
    actions = {}
    for seat in state.to_move():
        legal = state.legal_actions(seat)
        actions[seat] = rng.choice(legal) if legal is not None else type(state).random_free_action(state.observe(seat), rng)
    return actions


def play_randomly(
    game: type[Game], seed: int, rng: random.Random, players: int | None = None, state: Game | None = None, **config: object
) -> Iterator[Game]:
    """Yield the state after every step of a random legal playout (from ``state`` when given)."""
    if state is None:
        state = game.new(config | ({} if players is None else {"players": players}), seed)
    yield state
    for _ in range(STEP_LIMIT):
        if state.is_over:
            return
        state.step(random_joint_action(state, rng))
        yield state
    raise AssertionError(f"{game.spec.name} did not end within {STEP_LIMIT} steps")


@pytest.mark.parametrize("table", TABLES, ids=table_ids)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=MAX_SEED), play_seed=st.integers(min_value=0, max_value=2**32))
def test_random_legal_play_ends_without_error_within_the_bounds(table: tuple[type[Game], int], seed: int, play_seed: int) -> None:
    game, players = table
    rng = random.Random(play_seed)
    for state in play_randomly(game, seed, rng, players):
        for seat in range(state.num_players):
            observation = state.observe(seat)
            assert observation.text
            json.dumps(observation.data)
        json.dumps(state.public_view())
    assert state.is_over and state.to_move() == ()
    returns = state.returns()
    low, high = state.config.return_bounds()
    assert all(low - 1e-9 <= r <= high + 1e-9 for r in returns), (returns, low, high)
    if game.spec.zero_sum:
        assert sum(returns) == pytest.approx(0.0, abs=1e-9)
    if game.spec.teams == "all":
        assert len(set(returns)) == 1
    json.dumps(state.full_view())


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_the_spec_says_free_text_exactly_when_the_default_config_has_no_fixed_actions(game: type[Game]) -> None:
    """trust-and-split said no free text in `arena games --json` and GAMES.md, with no action space."""
    assert game.spec.free_text == (game.spec.action_space is None)


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_every_legal_action_belongs_to_the_fixed_action_space(game: type[Game]) -> None:
    space = game.spec.action_space
    if space is None:
        pytest.skip("no fixed action space")
    assert len(set(space)) == len(space)
    rng = random.Random(1)
    for seed in range(20):
        for state in play_randomly(game, seed, rng):
            for seat in state.to_move():
                legal = state.legal_actions(seat)
                assert legal is not None and set(legal) <= set(space)


@pytest.mark.parametrize("table", TABLES, ids=table_ids)
def test_the_same_seed_and_actions_give_an_identical_record(table: tuple[type[Game], int]) -> None:
    game, players = table
    for seed in range(5):
        final = list(play_randomly(game, seed, random.Random(seed), players))[-1]
        again = game.replay(final.history, final.config, seed)
        assert again.serialize() == final.serialize()
        assert again.returns() == final.returns()
        assert again.full_view() == final.full_view()
        assert [again.observe(s) for s in range(again.num_players)] == [final.observe(s) for s in range(final.num_players)]
        record = json.loads(json.dumps(final.serialize()))
        assert game.deserialize(record).full_view() == final.full_view()


@pytest.mark.parametrize("table", TABLES, ids=table_ids)
def test_a_seat_that_is_not_to_move_has_no_legal_action(table: tuple[type[Game], int]) -> None:
    game, players = table
    state = game.new({"players": players}, 3)
    waiting = [seat for seat in range(state.num_players) if seat not in state.to_move()]
    for seat in waiting:
        assert not state.legal_actions(seat)


def _hostile_variants(action: str) -> list[str]:
    """``action`` with each run of digits made unreadable to int(): a superscript (a digit to
    str.isdigit, not to int) and a number past int()'s 4300-digit limit."""
    return [re.sub(r"\d+", replacement, action) for replacement in ("\u00b2", "9" * 5000, "1\u00b9")]


@pytest.mark.parametrize("table", TABLES, ids=table_ids)
def test_unreadable_numbers_are_refused_as_illegal_never_raised(table: tuple[type[Game], int]) -> None:
    """Any other exception out of validate is taken by the match loop for an engine fault, so
    a seat could void a match it is losing by answering with such a number."""
    game, players = table
    for seed in range(3):
        rng = random.Random(seed)
        for depth, state in enumerate(play_randomly(game, seed, rng, players)):
            if state.is_over or depth > 6:
                break
            for seat in state.to_move():
                legal = state.legal_actions(seat)
                examples = list(legal[:8]) if legal else [type(state).random_free_action(state.observe(seat), rng)]
                for action in [variant for example in examples for variant in _hostile_variants(example)]:
                    with contextlib.suppress(IllegalAction):
                        state.validate(seat, action)


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_a_finished_game_tells_no_seat_it_is_to_move(game: type[Game]) -> None:
    """The observation data's ``to_move`` names the seat to act while one acts alone, and
    none once the game is over, when a scripted bot reading it must not think it is asked."""
    for seed in range(3):
        for state in play_randomly(game, seed, random.Random(seed)):
            movers = state.to_move()
            for seat in range(state.num_players):
                data = state.observe(seat).data
                if "to_move" not in data or isinstance(data["to_move"], list):
                    continue
                if state.is_over:
                    assert data["to_move"] is None
                elif len(movers) == 1:
                    assert data["to_move"] == movers[0]


LONG = 30_000
"""Under the wire's 64 KiB soft cap, so any connected bot can send an action this long."""
PATHOLOGICAL = (
    "1" + " " * LONG + "x",
    "1" + " " * LONG + "!",
    "1" * LONG + "x",
    "guess" + " " * LONG + "x",
    "propose" + " " * LONG + "x",
    "offer 1" + " " * LONG + "x",
    " " * LONG + "=x",
)
"""Long runs that a regular expression with two ways to match a run backtracks over quadratically."""


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_validating_a_long_answer_takes_linear_time(game: type[Game]) -> None:
    """validate runs in the server's event loop: a quadratic parse of a 30 000-character
    answer took 10 to 25 seconds, freezing every match on the server meanwhile."""
    state = game.new(seed=0)
    seat = state.to_move()[0]
    for action in PATHOLOGICAL:
        started = time.perf_counter()
        with contextlib.suppress(IllegalAction):
            state.validate(seat, action)
        assert time.perf_counter() - started < 0.5, action[:12]


class RecordingRng(ChanceRng):
    """Logs every draw of one chance event."""

    log: ClassVar[dict[tuple[int, int], list[int]]] = {}

    def __init__(self, seed: int, index: int) -> None:
        super().__init__(seed, index)
        self.key = (seed, index)
        self.draws = RecordingRng.log.setdefault(self.key, [])

    def bits(self) -> int:
        value = super().bits()
        self.draws.append(value)
        return value


@pytest.mark.parametrize("game", [g for g in GAMES if g.spec.chance], ids=ids)
def test_matches_with_the_same_seed_see_the_same_chance_events(game: type[Game], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("games.api.ChanceRng", RecordingRng)
    logs = []
    for play_seed in range(50):  # the same match seed, players that act differently
        RecordingRng.log = {}
        final = list(play_randomly(game, 42, random.Random(play_seed)))[-1]
        if not logs or final.history != logs[0][1]:
            logs.append((RecordingRng.log, final.history))
        if len(logs) == 2:
            break
    assert len(logs) == 2, "no two playouts differed, so the test would mean nothing"
    (first, _), (second, _) = logs
    assert first, "a game with chance drew nothing"
    for key in first.keys() & second.keys():
        shorter, longer = sorted((first[key], second[key]), key=len)
        assert longer[: len(shorter)] == shorter


def test_games_from_entry_points_join_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    class Noughts(TicTacToe):
        spec = TicTacToe.spec.__class__(**{**TicTacToe.spec.__dict__, "name": "noughts"})

    monkeypatch.setattr(games.registry, "_registry", {})
    monkeypatch.setattr(games.registry, "_loaded", False)
    monkeypatch.setitem(globals(), "Noughts", Noughts)
    entry = EntryPoint(name="noughts", value=f"{__name__}:Noughts", group=games.registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(games.registry, "entry_points", lambda group: [entry] if group == entry.group else [])
    assert games.get("noughts") is Noughts
    assert "tic-tac-toe" in games.names()


BAD_DEFAULT_PLUGIN = """
from dataclasses import dataclass, replace
from games.tic_tac_toe import TicTacToe, TicTacToeConfig

@dataclass(frozen=True)
class SizedConfig(TicTacToeConfig):
    size: int = 0

    def check(self) -> None:
        super().check()
        self.at_least("size", 1)

class Sized(TicTacToe):
    spec = replace(TicTacToe.spec, name="sized", default_config=SizedConfig())
    Config = SizedConfig
"""


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        ("no_such_plugin_module:Game", "ModuleNotFoundError: No module named 'no_such_plugin_module'"),
        ("bad_default_plugin:Sized", "ConfigError: config key 'size' must be at least 1, got 0"),
        ("json:dumps", "GameError: <function dumps at "),
        (f"{__name__}:SecondTicTacToe", "GameError: two games are named 'tic-tac-toe'"),
    ],
    ids=["import-error", "bad-default-config", "not-a-game", "name-taken"],
)
def test_a_plugin_that_fails_to_load_is_left_out_and_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture, value: str, cause: str
) -> None:
    """A package broken by an upgrade must not take every other game (and the server) down with
    it: it is said once, naming the package, and asking for its game says why it is missing."""
    (tmp_path / "bad_default_plugin.py").write_text(BAD_DEFAULT_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(games.registry, "_registry", {})
    monkeypatch.setattr(games.registry, "_broken", {})
    monkeypatch.setattr(games.registry, "_loaded", False)
    entry = EntryPoint(name="broken", value=value, group=games.registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(games.registry, "entry_points", lambda group: [entry] if group == entry.group else [])
    said = rf"game plugin 'broken' \({re.escape(value)}\) failed to load: {re.escape(cause)}"
    with caplog.at_level("WARNING", logger="games.registry"):
        assert games.get("nim").spec.name == "nim"
        assert "tic-tac-toe" in games.names()
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert re.match(said, caplog.records[0].getMessage())
    with pytest.raises(UnknownGame, match=rf"unknown game 'broken': {said}"):
        games.get("broken")


class SecondTicTacToe(TicTacToe):
    """A plugin's game under a built-in game's name."""

    spec = replace(TicTacToe.spec)


class _NoConfig(TicTacToe):
    spec = replace(TicTacToe.spec, name="no-config")
    Config = None  # type: ignore[assignment]


class _OtherDefaults(TicTacToe):
    spec = replace(TicTacToe.spec, name="other-defaults", default_config=TicTacToe.Config(players=3))


@dataclass(frozen=True)
class _UnboundedConfig(GameConfig):
    """A plugin's config that forgot return_bounds (the base class's raises NotImplementedError)."""


class _Unbounded(TicTacToe):
    spec = replace(TicTacToe.spec, name="unbounded", default_config=_UnboundedConfig())
    Config = _UnboundedConfig


@dataclass(frozen=True)
class _BackwardsConfig(TicTacToe.Config):
    def return_bounds(self) -> tuple[float, float]:
        return (1.0, -1.0)


class _Backwards(TicTacToe):
    spec = replace(TicTacToe.spec, name="backwards", default_config=_BackwardsConfig())
    Config = _BackwardsConfig


class _BadName(TicTacToe):
    spec = replace(TicTacToe.spec, name="QA Bad Name!")


@pytest.mark.parametrize(
    ("game", "message"),
    [
        (_NoConfig, "game 'no-config' .* has no Config: set it to the game's GameConfig subclass"),
        (_OtherDefaults, "game 'other-defaults' .*: spec.default_config differs from Config\\(\\) in players"),
        (_Unbounded, "game 'unbounded' .*: its Config does not define return_bounds\\(\\)"),
        (_Backwards, "game 'backwards' .*: return_bounds\\(\\) must give two finite numbers, the least first;.* \\(1.0, -1.0\\)"),
        (_BadName, "game name 'QA Bad Name!' .*: a name is lowercase letters and digits, words joined by single dashes"),
    ],
    ids=["no-config", "default-config-differs", "no-return-bounds", "bounds-backwards", "bad-name"],
)
def test_a_game_whose_config_contradicts_its_spec_is_refused_at_registration(
    monkeypatch: pytest.MonkeyPatch, game: type[Game], message: str
) -> None:
    """Each would surface later: an AttributeError traceback at the first --config, the
    spec's defaults silently dropped once any key is set; without return bounds, /api/games
    failed for every game and a bot's crash voided its match with a blank NotImplementedError
    (found by a QA helper); a name with spaces needed quoting in every command and URL."""
    monkeypatch.setattr(games.registry, "_registry", {})
    with pytest.raises(GameError, match=message):
        games.registry.register(game)


@pytest.mark.parametrize(
    ("kind", "shown"), [(int | None, "int | None"), (Literal["a", "b"], "typing.Literal"), (list[int], "list\\[int\\]")]
)
def test_a_config_key_of_a_type_no_command_line_or_wire_carries_is_refused_naming_it(kind: object, shown: str) -> None:
    """``int | None`` could never be set from the command line (``cap=5`` was refused as not
    ``int | None``) and a Literal failed in Python's words on subscripted generics."""
    config = make_dataclass("OddConfig", [("odd", kind, None)], bases=(TicTacToe.Config,), frozen=True)
    with pytest.raises(GameError, match=f"OddConfig: config key 'odd' is typed {shown}.*; a key holds int, float, bool or str"):
        config()


def _key(*parts: object) -> str:
    return json.dumps(parts, sort_keys=True)


SMALL_DECK = {"colours": 1, "ranks": 3, "hand_size": 1}
SMALL_CONFIGS: dict[str, dict[str, object]] = {"hanabi": SMALL_DECK, "mini-hanabi": SMALL_DECK}
"""Configs small enough that distinct deals often look the same to a seat, which the test needs."""
CONTRACT_OBSERVATIONS = 2_000
"""Observations the contract test compares per table (a state gives one per seat), in whole
random playouts: enough that every table reaches states its seats must not tell apart, few
enough for seconds in all."""


@pytest.mark.parametrize("table", TABLES, ids=table_ids)
def test_a_seat_observes_only_the_public_view_and_its_private_information(table: tuple[type[Game], int]) -> None:
    """Across many deals and whole playouts: when two states agree on the public view and on a
    seat's private information, that seat's observations are identical (even though the hidden
    rest or the moves before differ); when they differ in its private information, its
    observations differ too. Playouts cut at four steps missed views that drop earlier moves
    (hanabi's showed only the last action, not the hints before it; nim's only the heaps)."""
    seen: dict[tuple[int, str], dict[str, tuple[object, str]]] = {}
    game, players = table
    hidden = game.spec.hidden_information
    hidden_differs = private_differs = observations = 0
    for seed in itertools.count():
        rng = random.Random(seed)
        for state in play_randomly(game, seed, rng, players, **SMALL_CONFIGS.get(game.spec.name, {})):
            observations += state.num_players
            public = _key(state.public_view())
            full = _key(state.full_view()) if hidden else ""
            for seat in range(state.num_players):
                private = _key(state.private_info(seat))
                observation = state.observe(seat)
                group = seen.setdefault((seat, public), {})
                if private in group:
                    known_observation, known_full = group[private]
                    assert observation == known_observation, (
                        f"seat {seat} is told more than the public view and its private information (seed {seed})"
                    )
                    hidden_differs += known_full != full
                else:
                    for other_observation, _ in group.values():
                        assert observation != other_observation, f"seat {seat} does not see its own private information"
                        private_differs += 1
                    group[private] = (observation, full)
        if observations >= CONTRACT_OBSERVATIONS:
            break
    if hidden:
        assert hidden_differs > 0, "no two states differed only in hidden information: the test proved nothing"
        assert private_differs > 0


@pytest.mark.parametrize(
    ("name", "turns", "chars"),
    [
        ("buyer-seller", "max_turns", "message_chars"),
        ("item-negotiation", "max_turns", "message_chars"),
        ("multi-issue-negotiation", "max_turns", "message_chars"),
        ("iterated-ultimatum", "rounds", "message_chars"),
        ("coalition-bargaining", "max_rounds", "message_chars"),
        ("lewis-signalling", "rounds", None),
    ],
)
def test_a_history_too_long_to_hold_is_a_config_error(name: str, turns: str, chars: str | None) -> None:
    """Each turn shows every move and message before it, and the server keeps each turn's
    observation until the match ends; a self-play seek needs no opponent to ask for more."""
    game = games.get(name)
    cases = [({turns: MAX_TURNS + 1}, turns)]
    if chars is not None:
        cases += [({chars: MAX_MESSAGE_CHARS + 1}, chars), ({turns: 100, chars: MAX_TALK_CHARS // 100 + 1}, turns)]
    for values, key in cases:
        with pytest.raises(ConfigError, match=f"'{key}'"):
            game.new(values)


def test_more_players_may_play_fewer_rounds() -> None:
    """Each round of public goods lists every seat's contribution and is shown to every seat:
    1,000 rounds of 8 players would hold about a gigabyte, 1,000 of 2 about 60 MB."""
    public_goods = games.get("public-goods")
    public_goods.new({"players": 2, "rounds": MAX_TURNS})
    public_goods.new({"players": 8, "rounds": MAX_TURNS // 4})
    with pytest.raises(ConfigError, match="'rounds' must be at most 250"):
        public_goods.new({"players": 8, "rounds": MAX_TURNS // 4 + 1})


def stated_numbers(rules: str) -> set[str]:
    """The numbers a rules text states as facts: those outside its '(... by default ...)' asides."""
    return set(re.findall(r"\d+(?:\.\d+)?", re.sub(r"\([^()]*by default[^()]*\)", "", rules)))


@pytest.mark.parametrize(
    ("name", "config", "said"),
    [
        (
            "commons-harvest",
            {"rounds": 7, "stock": 50, "capacity": 200, "growth_rate": 0.5, "max_harvest": 25},
            ["round 1 of 7", "holds 50 units (capacity 200)", "0 to 25 units", "floor(0.5 * stock * (1 - stock / 200))"],
        ),
        (
            "public-goods",
            {"endowment": 20, "multiplier": 3.0, "punishment": True, "punish_cost": 2.0, "punish_fine": 5.0},
            ["gets 20 tokens", "0 to 20 of them", "multiplied by 3", "costs the punisher 2 and fines the punished 5"],
        ),
        (
            "trust-and-split",
            {"coins": 20, "high_value": 7.0},
            ["Each round 20 coins are split", "values a coin at 7, the other at 1", "claim * 20 / (sum of claims)"],
        ),
        ("connect-four", {"columns": 9, "rows": 5}, ["9 columns by 5 rows", "1 2 3 4 5 6 7 8 9"]),
        ("goofspiel", {"cards": 5}, ["5 cards each", "Your cards: 1, 2, 3, 4, 5."]),
        ("lewis-signalling", {"states": 4, "signals": 2}, ["States and acts: 1 to 4; signals: a, b."]),
        ("buyer-seller", {"value_min": 60, "value_max": 90}, ["drawn uniformly from 60 to 90"]),
    ],
)
def test_the_rules_give_each_configured_number_as_a_default_and_the_observation_the_match_s(
    name: str, config: dict[str, object], said: list[str]
) -> None:
    """The rules are sent to every player as one text whatever the config: one stating the
    default stock or multiplier as a fact contradicted the observation of a configured match."""
    game = games.get(name)
    stated = stated_numbers(game.spec.rules)
    for key in config:
        default = getattr(game.spec.default_config, key)
        assert isinstance(default, bool) or f"{default:g}" not in stated, f"the rules state the default {key} as a fact"
    text = game.new(config).observe(0).text
    for words in said:
        assert words in text


@pytest.mark.parametrize("game", GAMES, ids=ids)
def test_an_action_after_the_end_is_illegal_and_the_history_keeps_its_own_copy(game: type[Game]) -> None:
    """kuhn-poker and the hanabis validated a move on a finished game; and a caller that reused
    its action mapping rewrote the history, which then replayed as another game."""
    rng = random.Random(3)
    state = game.new(None, 3)
    actions = random_joint_action(state, rng)
    state.step(actions)
    kept = dict(state.history[0])
    actions.clear()
    *_, state = play_randomly(game, 3, rng, state=state)  # bounded: a game that never ends fails, never hangs
    assert state.history[0] == kept
    for seat, action in kept.items():
        with pytest.raises(IllegalAction, match=r"(game|hand) is over"):
            state.validate(seat, action)


def test_a_class_constant_on_a_config_is_no_key_and_no_refusal() -> None:
    """Only dataclass fields are config keys; the type check read every hint, ClassVars too
    (found by a QA helper reviewing the change)."""

    @dataclass(frozen=True)
    class Capped(TicTacToe.Config):
        MAX_SIZE: ClassVar[int] = 9
        size: int = 3

    assert Capped().to_dict() == {"players": 2, "size": 3}


@pytest.mark.parametrize("game", games.all(), ids=lambda game: game.spec.name)
def test_the_example_an_action_format_gives_is_a_legal_action(game: type[Game]) -> None:
    """A language model copies the format's example: with messages off (message_chars=0) it
    still carried ": your message", refused every time until the seat forfeited (found by a QA helper)."""
    configs = [{}] + ([{"message_chars": 0}, {"message_chars": 5}] if "message_chars" in game.Config().to_dict() else [])
    for config in configs:
        try:
            state = game.new(config, 3)
        except ConfigError:  # messages cannot be off in this game
            continue
        seat = state.to_move()[0]
        if state.legal_actions(seat) is not None:
            continue
        for example in re.findall(r"e\.g\. '([^']*)'", state.action_format(seat)):
            state.validate(seat, example)  # IllegalAction, with its reason, if the example is not legal
