"""The server side of the `arena` command: bot tokens, `serve` (first start, Ctrl-C with a
live match, read-only), `play --db` and `bot run`, on real stores and real processes."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.client import connect

from arena import protocol as p
from arena.cli import SIGNAL_ECHO_S, STOPPING, main
from arena.server import OPEN_FILES_WANTED
from arena.store import Store
from bots import registry
from bots.client import BotRun, run_bot
from bots.registry import make_bot
from tests.conftest import Arena, Client, Foresight, ServeProcess, http_get

IPD = "iterated-prisoners-dilemma"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def run_in_thread(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """For commands that call trio.run themselves, from inside a trio test."""
    code = await trio.to_thread.run_sync(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def store_bytes(db: Path) -> bytes:
    """The store's file and its WAL, if any: everything a token could leak into."""
    return b"".join(path.read_bytes() for path in sorted(db.parent.glob(db.name + "*")))


def random_policy(game: str, seed: int):  # type: ignore[no-untyped-def]
    return make_bot("random", game, seed=seed).act


# ---- bot register / rotate -----------------------------------------------------------------


def test_register_prints_the_token_alone_on_its_last_line_and_stores_only_its_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    code, out, err = run(capsys, "bot", "register", "alpha", "--db", str(db))
    token = out.splitlines()[-1]
    assert code == 0 and token == token.strip() and len(token) >= 32 and " " not in token
    assert err == f"arena: note: made a new store at {db}\n"  # a mistyped --db shows at once
    assert token.encode() not in store_bytes(db)
    store = Store(db, read_only=True)
    assert store.authenticate("alpha", token) and not store.authenticate("alpha", token[:-1])
    assert run(capsys, "bot", "register", "alpha2", "--db", str(db))[2] == ""  # the store is there now


def test_rotate_prints_a_new_token_and_the_old_one_stops_working(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"
    old = run(capsys, "bot", "register", "beta", "--db", str(db))[1].splitlines()[-1]
    code, out, _ = run(capsys, "bot", "rotate", "beta", "--db", str(db))
    new = out.splitlines()[-1]
    assert code == 0 and new != old and " " not in new
    data = store_bytes(db)
    assert old.encode() not in data and new.encode() not in data
    store = Store(db, read_only=True)
    assert store.authenticate("beta", new) and not store.authenticate("beta", old)
    assert "note" not in capsys.readouterr().err  # no server, nothing to say


@pytest.mark.trio
async def test_rotating_on_a_served_store_says_a_connected_bot_stays_until_it_reconnects(
    arena: Arena, capsys: pytest.CaptureFixture[str]
) -> None:
    async with arena.bot("connected"):
        code, out, err = run(capsys, "bot", "rotate", "connected", "--db", str(arena.db))
    assert code == 0 and len(out.splitlines()[-1]) > 20
    assert err.startswith(f"arena: note: a server is serving {arena.db}") and "--url" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bot", "register", "gamma"], "exists already"),
        (["bot", "rotate", "nobody"], "no bot named 'nobody'"),
        (["bot", "register", "Bad Name!"], "bad bot name"),
        (["bot", "register", "admin"], "'admin' is reserved"),  # its token could never log in
    ],
)
def test_token_commands_fail_in_one_line_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    db = tmp_path / "arena.db"
    run(capsys, "bot", "register", "gamma", "--db", str(db))
    code, out, err = run(capsys, *argv, "--db", str(db))
    assert code == 2 and out == ""
    assert err.startswith("arena: error: ") and err.count("\n") == 1 and message in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bot", "rotate", "nobody"], "no store at"),  # it said "no bot named 'nobody'" of a store it had just made
        (["bot", "register", "Bad Name!"], "bad bot name"),
        (["bot", "register", "admin"], "'admin' is reserved"),
    ],
)
def test_a_token_command_that_fails_leaves_no_new_store_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    db = tmp_path / "typo.db"
    code, out, err = run(capsys, *argv, "--db", str(db))
    assert (code, out) == (2, "") and err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.trio
async def test_register_and_rotate_through_a_running_server_with_the_admin_token(
    arena: Arena, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = ("--url", arena.url, "--admin-token", arena.admin_token)
    code, out, err = await run_in_thread(capsys, "bot", "register", "remote", *admin)
    token = out.splitlines()[-1]
    assert code == 0 and err == "" and " " not in token
    async with arena.bot("remote", token) as client:
        assert client.welcome["bot"] == "remote"
    code, out, err = await run_in_thread(capsys, "bot", "rotate", "remote", *admin)
    fresh = out.splitlines()[-1]
    assert code == 0 and fresh != token and err == ""  # not connected: nothing to say
    async with arena.bot("partner"), arena.admin() as creator:
        async with arena.bot("remote", fresh) as client:
            assert client.welcome["bot"] == "remote"
            await creator.send("create_match", bots=["remote", "partner"], game="nim")
            await creator.expect("match_created")
            code, out, err = await run_in_thread(capsys, "bot", "rotate", "remote", *admin)
            fresh = out.splitlines()[-1]
        # the match it was cut off from is said, on stderr: the token stays alone on the last line of stdout
        advice = ": log it in with the new token, or they are forfeited as their clocks run out\n"
        assert err == f"arena: note: remote was connected (its connection is closed) and holds 1 match in play{advice}"
        # away, within the reconnection window: no connection to close, the match still held
        code, out, err = await run_in_thread(capsys, "bot", "rotate", "remote", *admin)
        fresh = out.splitlines()[-1]
        assert err == f"arena: note: remote holds 1 match in play{advice}"
    async with arena.bot("remote", fresh) as client:
        assert client.welcome["bot"] == "remote"
    code, out, err = await run_in_thread(capsys, "bot", "register", "remote", *admin)
    assert code == 2 and out == "" and p.BOT_EXISTS in err and err.count("\n") == 1


@pytest.mark.trio
async def test_a_wrong_admin_token_is_a_clear_one_line_error(arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = await run_in_thread(capsys, "bot", "register", "intruder", "--url", arena.url, "--admin-token", "guess")
    assert code == 2 and out == ""
    assert err.startswith("arena: error: ") and err.count("\n") == 1 and "admin token" in err
    assert not Store(arena.db, read_only=True).bot_exists("intruder")


# ---- arena serve -----------------------------------------------------------------------------


@pytest.mark.trio
async def test_serve_prints_its_port_and_an_admin_token_only_at_first_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    first = ServeProcess("--db", str(db))
    try:
        url = await first.start()
        assert url.rsplit(":", 1)[1].isdigit() and int(url.rsplit(":", 1)[1]) > 0
        shown = [line for line in first.lines if "admin token" in line]
        assert len(shown) == 1
        admin_token = shown[0].rsplit(" ", 1)[1].strip()
        assert admin_token.encode() not in store_bytes(db)
        code = (await run_in_thread(capsys, "bot", "register", "first", "--url", url, "--admin-token", admin_token))[0]
        assert code == 0  # the printed token is the admin token
        assert await first.stop() == 0
    finally:
        first.kill()
    assert sum("admin token" in line for line in first.lines) == 1  # printed once, not again at exit
    second = ServeProcess("--db", str(db))
    try:
        await second.start()
        assert await second.stop() == 0
    finally:
        second.kill()
    assert not [line for line in second.lines if "admin token" in line]
    assert admin_token not in "".join(second.lines)


@pytest.mark.trio
async def test_serve_locks_a_bot_out_of_a_client_address_behind_the_proxy_it_trusts(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    try:
        token = store.register_bot("victim")
    finally:
        store.close()
    argv = ["--db", str(db), "--login-attempts", "1", "--login-window", "600", "--trusted-proxy", "127.0.0.1"]
    server = ServeProcess(*argv)
    try:
        url = await server.start()
        said: list[dict[str, Any]] = []
        for guess, client in (("a-guess", "203.0.113.5"), (token, "203.0.113.5"), (token, "203.0.113.6")):
            async with connect(url + "/bot", proxy=None, additional_headers={"X-Forwarded-For": client}) as ws:
                await ws.send(p.encode(p.message("hello", bot="victim", token=guess), True))
                with trio.fail_after(10), contextlib.suppress(ConnectionClosed):
                    said.append(p.decode(await ws.recv()))
        refused, welcome = said
        assert (refused["code"], refused["ref"]) == (p.RATE_LIMITED, "hello") and 590 < refused["retry_after"] <= 600
        assert "from 203.0.113.5" in refused["message"] and welcome["t"] == "welcome"
        assert await server.stop() == 0
    finally:
        server.kill()


@pytest.mark.trio
@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads the server's limits in /proc")
async def test_serve_raises_its_open_files_limit_so_a_thousand_bots_can_connect(tmp_path: Path) -> None:
    """Each connection is a file: under the usual soft limit of 1,024 the server refused bots
    past about a thousand, however high the hard limit."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 512:
        pytest.skip(f"the hard limit on open files here is {hard}")
    server = ServeProcess(
        "--db", str(tmp_path / "arena.db"), preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
    )
    try:
        await server.start()
        limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
        assert await server.stop() == 0
    finally:
        server.kill()
    [line] = [line for line in limits.splitlines() if line.startswith("Max open files")]
    expected = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES_WANTED)
    assert int(line.split()[3]) == expected > 512


@pytest.mark.trio
async def test_ctrl_c_with_a_live_match_exits_0_and_voids_the_match_with_its_reason(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    tokens = {name: store.register_bot(name) for name in ("left", "right")}
    store.close()
    server = ServeProcess("--db", str(db), "--move-ms", "10000")
    runs: dict[str, BotRun] = {}
    turns: list[dict[str, Any]] = []
    try:
        url = await server.start()

        async def play(seat: int, name: str) -> None:
            def seen(msg: dict[str, Any]) -> None:
                if msg["t"] == "turn":
                    turns.append(msg)

            runs[name] = await run_bot(
                random_policy("connect-four", seat),
                url,
                name,
                tokens[name],
                games=["connect-four"],
                matches=1,
                delay_ms=100,
                on_message=seen,
            )

        async with trio.open_nursery() as nursery:
            for seat, name in enumerate(tokens):
                nursery.start_soon(play, seat, name)
            with trio.fail_after(10):
                while len(turns) < 3:  # mid-match: both bots have moved (steps 0 and 1), step 2 is asked
                    await trio.sleep(0.01)
            assert await server.stop() == 0
    finally:
        server.kill()
    ends = [runs[name].results[0] for name in tokens]
    assert all(end["status"] == "void" and end["returns"] is None for end in ends)
    record = Store(db, read_only=True).match(ends[0]["match"])
    assert record is not None and record["status"] == "void" and record["reason"] == "void"
    assert "shutting down" in record["detail"] and record["returns"] is None and record["ended_at"]


@pytest.mark.trio
async def test_a_second_signal_while_shutting_down_is_said_and_the_exit_is_still_0(tmp_path: Path) -> None:
    """The second signal waited in trio's receiver and was raised as the server exited: a
    clean shutdown (matches voided, store flushed) ended as killed, -15 or 130."""
    server = ServeProcess("--db", str(tmp_path / "arena.db"))
    try:
        await server.start()
        assert await server.stop(signals=(signal.SIGTERM, signal.SIGINT)) == 0
    finally:
        server.kill()
    # pending together, the two come in either order (and the second may find the shutdown done)
    assert re.search(r"SIG(INT|TERM), shutting down\n", server.log), server.log


@pytest.mark.trio
@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
async def test_sighup_stops_the_server_as_sigterm_does(tmp_path: Path, background: bool) -> None:
    """Started by a script's & (SIGINT ignored), SIGHUP killed it at once with status 129, its
    live matches left live to the next start (found by a QA helper)."""

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    server = ServeProcess("--db", str(tmp_path / "arena.db"), preexec_fn=ignore_sigint if background else None)
    try:
        await server.start()
        assert await server.stop(signals=(signal.SIGHUP,)) == 0
    finally:
        server.kill()
    assert re.search(r"SIG(HUP|INT), shutting down\n", server.log), server.log


@pytest.mark.trio
async def test_the_serve_log_dates_each_match_end_and_what_a_start_voided(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    tokens = {name: store.register_bot(name) for name in ("first", "second")}
    row = {"id": "c" * 32, "game": "nim", "variant": "nim", "config": {}, "seed": 1, "players": list(tokens)}
    store.open_match({**row, "clock": {}, "source": "server", "created_at": 1.0})  # left live by a server that was killed
    store.close()
    server = ServeProcess("--db", str(db))
    try:
        url = await server.start()
        async with trio.open_nursery() as nursery:
            for seat, name in enumerate(tokens):
                nursery.start_soon(
                    lambda seat=seat, name=name: run_bot(
                        random_policy("nim", seat), url, name, tokens[name], games=["nim"], matches=1
                    )
                )
        assert await server.stop() == 0
    finally:
        server.kill()
    played = Store(db, read_only=True).matches(status="finished")[0]
    dated = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "
    assert re.search(dated + r"WARNING .*voided 1 match left live", server.log, re.MULTILINE)
    ended = [line for line in server.log.splitlines() if played["id"] in line]
    assert len(ended) == 1 and re.match(dated + "INFO", ended[0]), server.log
    assert "nim" in ended[0] and "first" in ended[0] and "second" in ended[0] and "finished" in ended[0]


@pytest.mark.trio
async def test_read_only_serves_the_store_refuses_bots_and_changes_nothing_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    code, _, _ = await run_in_thread(capsys, "play", "tic-tac-toe", "--seat", "random", "--seat", "random", "--db", str(db))
    assert code == 0
    match_id = Store(db, read_only=True).matches()[0]["id"]
    before = (db.read_bytes(), db.stat().st_mtime_ns)

    server = ServeProcess("--read-only", "--db", str(db))
    try:
        url = await server.start()
        assert (await http_get(url, "/health"))[1]["read_only"] is True
        status, listed = await http_get(url, "/api/matches")
        assert status == 200 and [m["id"] for m in listed] == [match_id] and listed[0]["status"] == "finished"
        status, full = await http_get(url, f"/api/matches/{match_id}")
        assert status == 200 and full["turns"]

        from websockets.trio.client import connect

        async with connect(url + "/watch", proxy=None) as ws:
            watcher = Client(ws, binary=False)
            await watcher.send("replay", match=match_id)
            replay = await watcher.expect("replay")
            assert replay["match"] == match_id and len(replay["views"]) == len(full["turns"]) + 1
        async with connect(url + "/bot", proxy=None) as ws:
            bot = Client(ws)
            await bot.send("hello", bot="anyone", token="anything")
            refused = await bot.expect("error")  # an operator's `arena bot register --url` reads it too
            assert refused["code"] == p.READ_ONLY and "no bots and no admin messages" in refused["message"]
            with pytest.raises(ConnectionClosed):
                await bot.receive()
        assert await server.stop() == 0
    finally:
        server.kill()
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert db.with_name("arena.db-wal").stat().st_size == 0  # SQLite's log, made by a reader taking part in its locking


# ---- arena play --db, arena bot run ----------------------------------------------------------


def test_play_with_db_records_the_finished_match_and_its_turns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"
    code, out, _ = run(
        capsys, "play", "tic-tac-toe", "--seat", "random", "--seat", "random", "--seed", "3", "--db", str(db), "--json"
    )
    assert code == 0
    played = json.loads(out)
    store = Store(db, read_only=True)
    record = store.match(played["match_id"])
    assert record is not None and record["status"] == "finished" and record["source"] == "local"
    assert record["returns"] == played["returns"] and record["seed"] == 3
    assert [t["action"] for t in record["turns"] if t["accepted"]] == [a for step in played["actions"] for a in step.values()]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_play_with_db_locked_at_the_end_still_shows_the_match_and_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    record = Store.finish_match

    def locked_meanwhile(store: Store, *args: Any, **kwargs: Any) -> Any:
        # another program took the write lock while the match was played, and keeps it
        store.conn.execute("PRAGMA busy_timeout=0")
        other.execute("BEGIN IMMEDIATE")
        return record(store, *args, **kwargs)

    monkeypatch.setattr(Store, "finish_match", locked_meanwhile)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        code, out, err = run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db), "--json")
    finally:
        other.close()
    assert code == 1 and json.loads(out)["status"] == "finished"  # the played match is not lost from sight
    assert err == f"arena: error: the match was not recorded in {db}: database is locked\n"


def bot_run_process(url: str, name: str, token: str, *options: str, background: bool = False) -> subprocess.Popen[str]:
    """``arena bot run``; ``background``: as a script's ``&`` starts it, with SIGINT ignored."""
    command = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--url", url, "--name", name, "--token", token]

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if background else None,
    )


@pytest.mark.trio
@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
async def test_bot_run_stopped_by_sigterm_while_seeking_says_so_and_exits_0(arena: Arena, background: bool, stop: int) -> None:
    """It died with -15 and not a word, where Ctrl-C, `serve` and `train run` say why they stop;
    started in the background by a script (SIGINT ignored), SIGTERM killed it mid-match, and
    SIGHUP at once."""
    bot = bot_run_process(arena.url, "stopped", await arena.register("stopped"), "--game", "nim", background=background)
    try:
        with trio.fail_after(15):
            while arena.server.lobby.waiting_of("stopped") != 1:
                await trio.sleep(0.01)
        bot.send_signal(stop)
        _, err = await trio.to_thread.run_sync(lambda: bot.communicate(timeout=15))
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    said = f"arena: stopped connected to {arena.url}; seeking nim\n{STOPPING}\narena: stopped as asked, after 0 matches\n"
    assert bot.returncode == 0 and err == said, (bot.returncode, err)


@pytest.mark.trio
async def test_bot_run_says_a_server_going_away_with_its_reason_in_its_own_voice(arena: Arena) -> None:
    """The reconnect line had no `arena:` as every other line of the command, and after a
    server's 1001 it gave no reason (found by QA)."""
    bot = bot_run_process(arena.url, "left", await arena.register("left"), "--game", "nim")
    try:
        with trio.fail_after(15):
            while arena.server.lobby.waiting_of("left") != 1:
                await trio.sleep(0.01)
            await arena.server.shutdown("the server restarts for an upgrade")
            assert bot.stderr is not None
            said = [await trio.to_thread.run_sync(bot.stderr.readline) for _ in range(2)]
    finally:
        bot.kill()
        bot.communicate()
    assert said[0] == f"arena: left connected to {arena.url}; seeking nim\n"
    assert said[1].startswith(f"arena: bot left reconnects to {arena.url} in ")
    assert said[1].endswith(" s (closed: 1001 the server restarts for an upgrade)\n"), said


@pytest.mark.trio
@pytest.mark.parametrize("signals", ["once", "echoed", "twice"])
async def test_bot_run_stopped_mid_match_plays_it_out_unless_told_twice(arena: Arena, signals: str) -> None:
    """Ctrl-C or SIGTERM left the match to the reconnection window, and then to a forfeit; the
    bot now plays it out, and a second one stops it at once, as a person in a hurry wants.
    `timeout` signals the command and then its process group: that second one, at once, is the
    same request, and stopped the bot at once (found by QA)."""
    tokens = {name: await arena.register(name) for name in ("leaving", "staying")}
    bot = bot_run_process(arena.url, "leaving", tokens["leaving"], "--game", "tic-tac-toe", "--delay", "400")
    assert bot.stderr is not None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                functools.partial(
                    run_bot,
                    random_policy("tic-tac-toe", 1),
                    arena.url,
                    "staying",
                    tokens["staying"],
                    games=["tic-tac-toe"],
                    matches=1,
                )
            )
            with trio.fail_after(15):
                while not arena.server.live:
                    await trio.sleep(0.01)
            (match,) = arena.server.live
            bot.send_signal(signal.SIGTERM)
            said = [await trio.to_thread.run_sync(bot.stderr.readline) for _ in range(2)]
            assert said == [f"arena: leaving connected to {arena.url}; seeking tic-tac-toe\n", f"{STOPPING}\n"]
            if signals == "echoed":  # the first taken, the echo comes
                bot.send_signal(signal.SIGTERM)
            if signals == "twice":
                await trio.sleep(SIGNAL_ECHO_S + 0.2)
                bot.send_signal(signal.SIGINT)
            out, err = await trio.to_thread.run_sync(lambda: bot.communicate(timeout=15))
            nursery.cancel_scope.cancel()
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
    if signals != "twice":
        assert bot.returncode == 0 and err == "arena: stopped as asked, after 1 match\n", (bot.returncode, err)
        assert re.fullmatch(rf"match {match}: finished, complete, (win|loss|draw) as seat [01], returns \S+, \S+\n", out), out
    else:
        assert bot.returncode == 130 and "arena: interrupted" in err and out == "", (bot.returncode, err)


async def bot_run_against_sdk_bot(
    arena: Arena, capsys: pytest.CaptureFixture[str], game: str, matches: int, *options: str
) -> tuple[int, str, str, BotRun]:
    """``arena bot run random`` as "cli-bot" against an SDK bot "sdk-bot" seeking ``game``, each
    playing ``matches``: the command's status, stdout and stderr, and the SDK bot's run."""
    tokens = {name: await arena.register(name) for name in ("cli-bot", "sdk-bot")}
    seen: list[BotRun] = []

    async def sdk() -> None:
        policy = random_policy(game, 1)
        seen.append(await run_bot(policy, arena.url, "sdk-bot", tokens["sdk-bot"], games=[game], matches=matches))

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sdk)
            code, out, err = await run_in_thread(
                capsys,
                *("bot", "run", "random", "--url", arena.url, "--name", "cli-bot", "--token", tokens["cli-bot"]),
                *("--game", game, "--matches", str(matches), *options),
            )
    return code, out, err, seen[0]


@pytest.mark.trio
async def test_bot_run_plays_a_match_against_an_sdk_bot_and_exits_0(arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err, sdk = await bot_run_against_sdk_bot(arena, capsys, "tic-tac-toe", 1)
    assert code == 0, err
    (result,) = sdk.results
    assert f"match {result['match']}: finished" in out
    record = Store(arena.db, read_only=True).match(result["match"])
    assert record is not None and record["status"] == "finished" and sorted(record["players"]) == ["cli-bot", "sdk-bot"]


@pytest.mark.trio
async def test_bot_run_without_a_game_seeks_nothing_and_plays_the_matches_made_for_it(
    arena: Arena, capsys: pytest.CaptureFixture[str]
) -> None:
    """--game was required, so a tournament's remote:NAME participant also sought, and played
    thousands of lobby matches between the tournament's (found by a QA helper)."""
    tokens = {name: await arena.register(name) for name in ("cli-bot", "sdk-bot")}
    seen: list[BotRun] = []

    async def sdk() -> None:
        seen.append(await run_bot(random_policy("nim", 1), arena.url, "sdk-bot", tokens["sdk-bot"], games=[], matches=1))

    async def make_the_match() -> None:
        async with arena.admin() as admin:
            while True:  # until both are connected
                await admin.send("create_match", bots=["cli-bot", "sdk-bot"], game="nim")
                answer = await admin.receive()
                if answer["t"] == "match_created":
                    return
                assert answer["code"] == p.BOT_OFFLINE, answer
                await trio.sleep(0.05)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sdk)
            nursery.start_soon(make_the_match)
            code, out, err = await run_in_thread(
                capsys,
                *("bot", "run", "random", "--url", arena.url, "--name", "cli-bot", "--token", tokens["cli-bot"]),
                *("--matches", "1"),
            )
    assert code == 0, err
    assert "cli-bot connected to" in err and "; waiting for matches made for it" in err
    assert out.startswith(f"match {seen[0].results[0]['match']}: finished")
    assert arena.server.lobby.waiting() == []
    for about_the_seeks in (("--config", "heaps=3"), ("--self-play",)):
        code, _, err = await run_in_thread(capsys, "bot", "run", "random", "--token", "t", *about_the_seeks)
        assert code == 2 and "--config and --self-play are about the seeks: give --game too" in err


@pytest.mark.trio
async def test_bot_run_challenges_the_bot_it_names_and_plays_it_alone(arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err, sdk = await bot_run_against_sdk_bot(arena, capsys, "nim", 2, "--challenge", "sdk-bot")
    assert code == 0, err
    assert "cli-bot connected to" in err and "; challenging sdk-bot to nim" in err
    assert sorted(line.split(":")[0] for line in out.splitlines()) == sorted(f"match {end['match']}" for end in sdk.results)


@pytest.mark.trio
async def test_bot_run_playing_itself_gives_each_seat_a_bot_of_its_own(
    arena: Arena, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot keeps what it saw (a model's conversation, a learner's record): one object for both
    seats of a self-play match would see both hands of a card game."""
    seats_of_each: list[set[int]] = []

    def recording(spec: Any, game: str, seed: int = 0) -> Any:
        bot = make_bot(spec, game, seed)
        seats: set[int] = set()
        seats_of_each.append(seats)
        act = bot.act

        def noted(turn: Any) -> Any:
            seats.add(turn.seat)
            return act(turn)

        bot.act = noted  # type: ignore[method-assign]
        return bot

    monkeypatch.setattr(registry, "make_bot", recording)
    token = await arena.register("narcissus")
    with trio.fail_after(20):
        code, _, err = await run_in_thread(
            capsys,
            *("bot", "run", "random", "--url", arena.url, "--name", "narcissus", "--token", token),
            *("--game", "kuhn-poker", "--matches", "1", "--self-play"),
        )
    assert code == 0, err
    assert sorted(sorted(seats) for seats in seats_of_each if seats) == [[0], [1]]


@pytest.mark.trio
async def test_bot_run_plays_moves_its_opponent_cannot_foresee_from_the_match_id(
    arena: Arena, capsys: pytest.CaptureFixture[str]
) -> None:
    """The opponent is told the match id and the seats; a bot seeded from them alone (as
    bot run's were, through crc32) plays moves the opponent can draw first from its generator."""
    tokens = {name: await arena.register(name) for name in ("cli-bot", "sdk-bot")}
    sdk_bot = Foresight("random", lambda match, seat: zlib.crc32(f"{match}/{seat}".encode()), "defect")
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                functools.partial(run_bot, sdk_bot, arena.url, "sdk-bot", tokens["sdk-bot"], games=[IPD], matches=2)
            )
            code, _, err = await run_in_thread(
                capsys,
                *("bot", "run", "random", "--url", arena.url, "--name", "cli-bot", "--token", tokens["cli-bot"]),
                *("--game", IPD, "--matches", "2"),
            )
    assert code == 0, err
    played = {match: await arena.moves(match, "cli-bot") for match in sdk_bot.foreseen}
    assert len(played) == 2 and all(len(moves) == 10 for moves in played.values())
    assert sdk_bot.foreseen != played  # 20 fair coin flips: all foreseen by chance once in a million runs


@pytest.mark.trio
@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["bot", "register", "tls", "--admin-token", "t"], 1),  # as bot run and tournament run: a failure, not bad input
        (["bot", "run", "random", "--name", "tls", "--token", "t", "--game", "nim"], 1),
    ],
)
async def test_wss_to_a_server_without_tls_is_one_line_not_a_traceback(
    arena: Arena, capsys: pytest.CaptureFixture[str], argv: list[str], status: int
) -> None:
    url = arena.url.replace("ws://", "wss://")  # the TLS handshake meets a plain websocket server
    with trio.fail_after(20):
        code, out, err = await run_in_thread(capsys, *argv, "--url", url)
    assert (code, out) == (status, "") and err.count("\n") == 1
    assert err.startswith(f"arena: error: cannot reach {url}: ") and "TLS" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["bot", "register", "far", "--admin-token", "t"],
        ["bot", "rotate", "far", "--admin-token", "t"],
        ["bot", "run", "random", "--name", "far", "--token", "t", "--game", "nim"],
    ],
)
def test_a_server_that_cannot_be_reached_is_one_line_and_status_1_for_every_command(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main([*argv, "--url", "ws://127.0.0.1:9"])  # the discard port: nothing listens
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("arena: error: cannot reach ws://127.0.0.1:9") and err.count("\n") == 1


def test_tokens_never_look_like_command_line_options() -> None:
    from arena.store import new_token

    assert all(not token.startswith("-") and token.startswith("arena_") for token in (new_token() for _ in range(500)))
