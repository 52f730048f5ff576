"""Every benchmark refuses a bad flag value with a usage error (status 2) before any work,
instead of a traceback, a hang (``--seconds nan``) or a report of zeros."""

from __future__ import annotations

import importlib

import pytest

BAD_FLAGS = [
    ("engine", ["--seconds", "nan"]),
    ("engine", ["--seconds", "-1"]),
    ("engine", ["--seconds", "0"]),
    ("engine", ["--games", "tic-tac-to"]),
    ("lobby", ["--sizes", "abc"]),
    ("lobby", ["--sizes", "-5"]),
    ("lobby", ["--sizes", ","]),
    ("lobby", ["--repeat", "0"]),
    ("ratings", ["--seconds", "nan"]),
    ("ratings", ["--seconds", "-1"]),
    ("tournament", ["--games-per-pairing", "0"]),
    ("tournament", ["--concurrency", "0"]),
    ("server", ["--bots", "1"]),
    ("server", ["--bots", "3", "--game", "public-goods"]),  # four at a table: no match ever formed (found by QA)
    ("server", ["--seconds", "0"]),
    ("server", ["--seconds", "inf"]),
    ("server", ["--rounds", "0"]),
    ("server", ["--warmup", "-1"]),
    ("server", ["--workers", "0"]),
    ("server", ["--matches-per-bot", "0"]),
    ("server", ["--game", "tic-tac-to"]),
    # a run that would hang then fail in tracebacks: past the open files, past the seeks a bot may keep (found by QA)
    ("server", ["--bots", "10001"]),
    ("server", ["--matches-per-bot", "33"]),
    ("server", ["--profile-server", "/no-such-folder/server.prof"]),  # measured, then no profile and status 0
    ("server", ["--profile-server", ""]),  # no profile, silently
    ("server", ["--cli", "--profile-server", "server.prof"]),  # --cli's server was never profiled
    ("learning", ["--scale", "0"]),
    ("learning", ["--threads", "0"]),
    ("learning", ["--only", "z"]),
]


@pytest.mark.parametrize(("module", "argv"), BAD_FLAGS, ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_a_bad_flag_value_is_a_usage_error(module: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if module == "learning":
        pytest.importorskip("torch")
    main = importlib.import_module(f"bench.{module}").main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "usage:" in captured.err
    assert captured.out == ""
