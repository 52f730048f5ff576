"""Bot specs: the one ``name:key=value,...`` form every command and config uses."""

from __future__ import annotations

import pytest

from arena.seats import Turn
from bots.base import Bot
from bots.registry import BotSpec, BotSpecError, make_bot, parse_spec, seat_seed


def test_an_option_given_twice_is_refused_not_silently_overridden() -> None:
    with pytest.raises(BotSpecError, match="option 'depth' is given twice"):
        make_bot("alphabeta:depth=3,depth=4", "connect-four")


def test_a_bots_seed_does_not_give_away_the_match_seed() -> None:
    """A bot is built with its seed; were the match seed readable from it, the bot could
    deal every hand of the match itself (Game.new(config, seed))."""
    for seed in (0, 1, 42, 2**40 + 7):
        for seat in range(3):
            bot_seed = seat_seed(seed, seat)
            assert bot_seed // 1_000 != seed and bot_seed != seed
    steps = {seat_seed(seed + 1, 0) - seat_seed(seed, 0) for seed in range(20)}
    assert len(steps) > 1
    assert len({seat_seed(seed, seat) for seed in range(50) for seat in range(4)}) == 200


class TicTacToBot(Bot):
    name = "tic-tac-to-bot"
    description = "A plugin's bot whose game name has a typo."
    games = ("tic-tac-to",)

    def act(self, turn: Turn) -> str:
        return "a1"


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        ("no_such_bot_module:Bot", "ModuleNotFoundError: No module named 'no_such_bot_module'"),
        ("json:dumps", "BotSpecError: "),
        # listed and loaded, it could play nothing (found by a QA helper writing a plugin)
        (f"{__name__}:TicTacToBot", "BotSpecError: bot 'tic-tac-to-bot' plays 'tic-tac-to', which is no game; did you mean"),
    ],
    ids=["import-error", "not-a-bot", "no-such-game"],
)
def test_a_bot_plugin_that_fails_to_load_is_left_out_and_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str, cause: str
) -> None:
    """One broken bot package stopped every command, games and bots that had nothing to do with it
    included, with a traceback (found by QA); a broken game plugin was already left out."""
    from importlib.metadata import EntryPoint

    import bots.registry

    entry = EntryPoint(name="broken", value=value, group=bots.registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(bots.registry, "_registry", dict(bots.registry._load()))  # the built-in bots, registered once
    monkeypatch.setattr(bots.registry, "_loaded", False)
    monkeypatch.setattr(bots.registry, "entry_points", lambda group: [entry] if group == entry.group else [])
    with caplog.at_level("WARNING", logger="games.registry"):
        assert make_bot("random", "nim").name == "random"
    [record] = caplog.records
    assert record.getMessage().startswith(f"bot plugin 'broken' ({value}) failed to load: {cause}")


def test_spaces_around_a_specs_name_are_read_past_as_around_its_options() -> None:
    """``perfect :`` was the unknown bot 'perfect ' (found by a QA helper)."""
    assert parse_spec("perfect :") == parse_spec(" perfect") == BotSpec("perfect", {})
    assert parse_spec(" equilibrium : alpha = 0.2 ") == BotSpec("equilibrium", {"alpha": "0.2"})
