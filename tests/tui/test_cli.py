"""``arena watch`` and ``arena demo --watch`` end to end: the real commands start real
servers and bots; only the app's ``run()`` is swapped for a headless Pilot script, since
a test has no terminal. Afterwards every process they started must be gone."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import tui.launch
from arena import cli
from tests.tui.screens import SIZE, screen_text, wait_until
from tests.tui.stores import play
from tui.app import MatchScreen, ReplayScreen, WatchApp

Script = Callable[[WatchApp, Pilot[Any]], Awaitable[None]]


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as the spectator asks of stdin and stderr."""

    def isatty(self) -> bool:
        return True


def headless(monkeypatch: pytest.MonkeyPatch, script: Script) -> list[subprocess.Popen[str]]:
    """Make the commands run ``script`` in a headless app; return the processes they start."""
    started: list[subprocess.Popen[str]] = []
    popen = tui.launch._popen

    def recording(*args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        process = popen(*args, **kwargs)
        started.append(process)
        return process

    class HeadlessApp(WatchApp):
        def run(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
            async def drive() -> None:
                async with self.run_test(size=SIZE) as pilot:
                    await script(self, pilot)

            asyncio.run(drive())

    monkeypatch.setattr(tui.launch, "_popen", recording)
    monkeypatch.setattr(cli, "_watch_app", lambda: HeadlessApp)
    return started


def test_watch_a_store_replays_a_match_back_and_forth_to_identical_screens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "arena.db"
    match = play(db, "tic-tac-toe", 1, ("perfect", "random"), seed=5)[0]
    screens: dict[str, str] = {}

    async def script(app: WatchApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: match in app.replays, what="the replay")
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        replay = app.replays[match]
        assert replay.index == 0 and replay.last >= 5
        screens["start"] = app.export_screenshot()
        await pilot.press("right", "right", "right")
        await pilot.pause()
        screens["3"] = app.export_screenshot()
        assert replay.index == 3
        await pilot.press("right", "left")
        await pilot.pause()
        screens["3 again"] = app.export_screenshot()
        await pilot.press("end")
        await pilot.pause()
        assert replay.index == replay.last
        screens["end"] = app.export_screenshot()
        result = app.screen.query_one("#result").content.plain
        assert "perfect-bot" in result or "draw" in result
        await pilot.press("home")
        await pilot.pause()
        screens["start again"] = app.export_screenshot()

    started = headless(monkeypatch, script)
    assert cli.main(["watch", "--db", str(db), "--match", match]) == 0
    assert screens["3"] == screens["3 again"]
    assert screens["start"] == screens["start again"]
    assert len({screens["start"], screens["3"], screens["end"]}) == 3
    assert [p.poll() is not None for p in started] == [True], "the read-only server stopped with the app"


def test_watch_a_match_that_is_no_replay_falls_back_to_its_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "arena.db"
    play(db, "tic-tac-toe", 1, ("perfect", "random"), seed=5)[0]

    async def script(app: WatchApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(app.screen, MatchScreen), what="the fallback to the match view")
        await wait_until(pilot, lambda: app.matches["deadbeef"].status == "gone", what="the answer")
        assert "unknown_match" in (app.problem or "")
        await pilot.press("r")
        assert "no replay: the server does not know match 'deadbeef'" in screen_text(app)

    headless(monkeypatch, script)
    assert cli.main(["watch", "--db", str(db), "--match", "deadbeef"]) == 0


def test_watch_reports_a_missing_store_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["watch", "--db", str(tmp_path / "none.db")]) == cli.USAGE_ERROR
    assert capsys.readouterr().err.strip().startswith("arena: error: no store at")


def test_demo_watch_plays_over_the_wire_and_leaves_no_process_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "DEMO_WATCH", cli.DEMO_WATCH[:1] + cli.DEMO_WATCH[3:4])  # tic-tac-toe, item-negotiation

    async def script(app: WatchApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: len(app.lobby.live) == 2, timeout=30, what="two live demo matches")
        assert {e.game for e in app.lobby.live} == {"tic-tac-toe", "item-negotiation"}
        await pilot.press("ctrl+c")

    started = headless(monkeypatch, script)
    assert cli.main(["demo", "--watch", "--delay", "100"]) == 0
    assert len(started) == 5  # the server and four bots
    assert all(p.poll() is not None for p in started), "every child process ended"
    # on their own: the server stopped first voided the matches, so the bots had none to play out
    assert [p.returncode for p in started] == [0] * 5


def test_the_spectator_with_its_standard_error_redirected_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Textual draws on standard error: ``arena watch 2>err.log`` left the terminal blank and wrote
    the screen into the file, while ``arena watch > out.txt``, which works, was refused (found by a QA helper)."""
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "__stderr__", io.StringIO())
    assert cli.main(["watch"]) == cli.USAGE_ERROR
    assert capsys.readouterr().err.startswith("arena: error: the spectator draws on a terminal")
    monkeypatch.setattr(sys, "__stderr__", Terminal())
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert cli._watch_app().__name__ == "WatchApp"  # standard output is not drawn on


@pytest.mark.parametrize("missing", ["textual", "rich"])
def test_the_spectator_without_the_tui_extra_says_how_to_install_it(
    missing: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain install lacks rich too, which tui.app imports first: that one was a traceback
    (found by a QA helper)."""
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "__stderr__", Terminal())
    for name in [name for name in sys.modules if name == "tui.app" or name.split(".")[0] == missing]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, missing, None)  # import of it fails, as when it is not installed
    assert cli.main(["watch"]) == cli.USAGE_ERROR
    assert capsys.readouterr().err == "arena: error: the spectator needs textual: pip install 'selfplay-arena[tui]'\n"


@pytest.mark.parametrize("command", [["watch"], ["demo", "--watch"]], ids=["watch", "demo"])
def test_the_spectator_without_a_terminal_says_so_in_one_line(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Into a pipe it wrote escape sequences until killed."""
    assert cli.main(command) == cli.USAGE_ERROR
    assert capsys.readouterr().err.startswith("arena: error: the spectator draws on a terminal")


def test_the_commands_have_help() -> None:
    for command in (["watch", "--help"], ["demo", "--help"]):
        out = subprocess.run([sys.executable, "-m", "arena.cli", *command], capture_output=True, text=True, check=True).stdout
        assert ("--db" in out and "--match" in out) if command[0] == "watch" else "--watch" in out


def test_watch_a_store_takes_a_match_id_prefix_and_names_an_ambiguous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "arena.db"
    ids = play(db, "tic-tac-toe", 17)  # 17 ids over 16 hex digits: two share their first
    shared = next(a for a in ids if any(b != a and b[0] == a[0] for b in ids))[0]
    screens: list[str] = []

    async def unique(app: WatchApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: ids[0] in app.replays, what="the replay of the prefix")
        await pilot.pause()
        screens.append(screen_text(app))

    headless(monkeypatch, unique)
    assert cli.main(["watch", "--db", str(db), "--match", ids[0][:8]]) == 0
    assert f"{ids[0][:8]} · replay · step 0 of" in screens[-1]

    async def ambiguous(app: WatchApp, pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.matches.get(shared) and app.matches[shared].status == "gone", what="the refusal")
        await pilot.pause()
        screens.append(screen_text(app))

    headless(monkeypatch, ambiguous)
    assert cli.main(["watch", "--db", str(db), "--match", shared]) == 0
    assert f"match id prefix '{shared}' is ambiguous" in screens[-1]


@pytest.mark.parametrize("url", ["localhost:8765", "http://127.0.0.1:8765", "ws://127.0.0.1:99999"])
def test_watch_refuses_a_bad_url_in_one_line_before_the_app_takes_the_screen(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def nothing(app: WatchApp, pilot: Pilot[Any]) -> None:
        pass

    headless(monkeypatch, nothing)
    assert cli.main(["watch", "--url", url]) == cli.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"arena: error: bad server URL {url!r}") and err.count("\n") == 1


def test_a_child_server_ignores_packages_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m` put the working directory first on the child's path: from a wheel, in a folder
    holding the user's own games/ package, `arena watch --db` failed with "No module named
    'games.api'" (found by a QA helper). The folder here shadows a dependency the server
    imports, which no install of ours changes."""
    (tmp_path / "msgpack").mkdir()
    (tmp_path / "msgpack" / "__init__.py").write_text("raise ImportError('the working directory was imported')\n")
    db = tmp_path / "arena.db"
    play(db, "tic-tac-toe", 1)
    monkeypatch.chdir(tmp_path)
    server = tui.launch.ServerProcess(db, read_only=True)
    try:
        assert server.start().startswith("ws://127.0.0.1:")
    finally:
        server.stop()
