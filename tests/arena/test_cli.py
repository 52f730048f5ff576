"""The `arena` command: listings, play, demo, the human seat, and one-line errors."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

import games
from arena.cli import main, url_host


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_games_lists_every_game_with_its_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games")
    assert code == 0
    for name in games.names():
        assert name in out
    assert "social_dilemma" in out and "hidden info" in out
    beauty = next(line for line in out.splitlines() if line.startswith("beauty-contest "))
    assert " 2-8 (3) " in beauty  # the default count beside the range: two seats alone are refused


def test_games_name_prints_the_games_catalog_entry_as_doc_does(capsys: pytest.CaptureFixture[str]) -> None:
    """The docs said `arena games NAME`, which was refused as an unrecognized argument (found by a QA helper)."""
    assert run(capsys, "games", "kuhn-poker") == run(capsys, "games", "--doc", "kuhn-poker")
    assert run(capsys, "games", "kuhn-poker")[1].startswith("## Kuhn poker\n")


def test_games_json_carries_the_spec_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games", "--json")
    specs = {spec["name"]: spec for spec in json.loads(out)}
    assert code == 0 and set(specs) == set(games.names())
    kuhn = specs["kuhn-poker"]
    assert kuhn["zero_sum"] and kuhn["hidden_information"] and kuhn["players"] == [2, 2]
    assert kuhn["min_return"] == -2 and kuhn["max_return"] == 2
    assert specs["iterated-prisoners-dilemma"]["simultaneous"]
    assert specs["mini-hanabi"]["teams"] == "all"


def test_bots_can_be_filtered_by_game(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bots", "--game", "connect-four", "--json")
    names = {bot["name"]: bot for bot in json.loads(out)}
    assert code == 0 and "alphabeta" in names and "random" in names and "perfect" not in names
    assert names["alphabeta"]["options"]["depth"]["type"] == "int"


def test_play_json_prints_the_match_record(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "play",
        "iterated-prisoners-dilemma",
        "--seat",
        "tit-for-tat",
        "--seat",
        "always-defect",
        "--config",
        "rounds=10",
        "--json",
    )
    record = json.loads(out)
    assert code == 0
    assert record["returns"] == [9.0, 14.0] and record["reason"] == "complete"
    assert len(record["actions"]) == 10 and record["players"] == ["tit-for-tat", "always-defect"]


def test_play_shows_every_turn_and_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "play", "tic-tac-toe", "--seat", "perfect", "--seat", "perfect", "--seed", "4")
    assert code == 0
    assert out.count("step ") == 9 and "draw" in out and "a b c" in out
    # numbered from 0, as the store, the export and the protocol number steps (it began at 1)
    assert [line.split()[1] for line in out.splitlines() if line.startswith("step ")] == [str(step) for step in range(9)]


def test_the_same_seed_gives_the_same_match(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("play", "kuhn-poker", "--seat", "random", "--seat", "equilibrium", "--seed", "9", "--json")
    first = json.loads(run(capsys, *argv)[1])
    second = json.loads(run(capsys, *argv)[1])
    assert first["actions"] == second["actions"] and first["returns"] == second["returns"]


@pytest.mark.parametrize(
    ("mode", "token", "says"),
    [
        (0o644, "x" * 40, "can be read or changed by other accounts (its mode is 644): chmod 600 it"),
        (0o622, "x" * 40, "(its mode is 622)"),  # whoever writes it is admin at the next start
        (0o600, "ADMIN", "has 5 characters, fewer than 16"),  # its unsalted hash fell to a dictionary at once
        (0o600, "a" * 16, "is made of 1 different character, fewer than 8"),  # long enough, and guessed as fast
    ],
)
def test_an_admin_token_file_others_may_read_or_a_short_token_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: int, token: str, says: str
) -> None:
    """Found by QA: both were taken without a word."""
    path = tmp_path / "token"
    path.write_text(token)
    path.chmod(mode)
    code, _, err = run(capsys, "serve", "--db", str(tmp_path / "arena.db"), "--admin-token-file", str(path))
    assert code == 2 and says in err and not (tmp_path / "arena.db").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another account needs root")
def test_an_admin_token_file_of_another_account_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Found by a security review: mode 600 but owned by another account, which may rewrite it
    and be admin at the next start."""
    path = tmp_path / "token"
    path.write_text("an-admin-token-of-some-length-42")
    path.chmod(0o600)
    os.chown(path, 65534, 65534)  # nobody
    code, _, err = run(capsys, "serve", "--db", str(tmp_path / "arena.db"), "--admin-token-file", str(path))
    assert code == 2 and "belongs to another account (uid 65534)" in err and not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("play tic-tac-to --seat random --seat random", "unknown game 'tic-tac-to'; did you mean 'tic-tac-toe'?"),
        ("play tic-tac-toe --seat randm --seat random", "unknown bot 'randm'; did you mean 'random'?"),
        ("play tic-tac-toe --seat random", "needs 2 --seat options, got 1"),
        ("play tic-tac-toe --seat alphabeta --seat random", "bot 'alphabeta' plays connect-four, not tic-tac-toe"),
        ("play connect-four --seat alphabeta:depht=3 --seat random", "has no option 'depht'; did you mean 'depth'"),
        ("play connect-four --seat alphabeta:depth=deep --seat random", "'depth' must be an integer"),
        ("play iterated-prisoners-dilemma --seat random --seat random --config rounds=x", "'rounds'"),
        ("play iterated-prisoners-dilemma --seat random --seat random --config nonsense", "key=value"),
        ("bots --game chess", "unknown game 'chess'"),
        ("bots --game kuhn", "unknown game 'kuhn'; did you mean 'kuhn-poker'?"),  # too short for difflib alone
        ("games --doc dilemma", "unknown game 'dilemma'; did you mean 'iterated-prisoners-dilemma'?"),
        ("games --doc ated", "unknown game 'ated'\n"),  # in more than three names: no guess
        (
            "play liars-dice --seat random --seat random --seat random",
            "liars-dice with 2 players needs 2 --seat options, got 3 (for 3 players: --config players=3)",
        ),
        ("play tic-tac-toe --seat random --seat random --seat random", "needs 2 --seat options, got 3\n"),
        ("bot run random --token x --game nim --url ws://127.0.0.1:70000", "bad server URL 'ws://127.0.0.1:70000': Port out"),
        ("tournament run any.toml --url ws://127.0.0.1:abc --admin-token x", "bad server URL 'ws://127.0.0.1:abc': Port could"),
        ("bot register zz --url ws://[::1 --admin-token x", "bad server URL 'ws://[::1': Invalid IPv6 URL"),
        ("bot run random --name r\udcff --token x --game nim", "--name must be text (UTF-8)"),
        ("bot run random --token x --game nim --game tic-tac-toe --challenge rival", "--challenge plays one --game"),
        ("bot run random --token x --game nim --self-play --challenge rival", "--challenge plays one --game against another"),
        ("bot run random --token x --game nim --challenge Rival", "--challenge 'Rival' is no bot's name: names are lowercase"),
        ("bot run random --name me --token x --game nim --challenge me", "--challenge names this bot itself"),
        ("bot run random --token x --game nim --challenge random", "--challenge names this bot itself"),  # the spec's name
        ("serve --admin-token-file /no/such/token", "cannot read the admin token from /no/such/token: No such file"),
        ("play nim --seat random --seat random --move-ms 0", "clock move_ms must be from 1 to"),  # it meant the default
        ("demo --delay 100", "--delay paces the bots of --watch; add --watch"),  # it was ignored
        (
            "play nim --seat random --seat random --move-ms -5",
            "clock move_ms must be from 1 to 2,592,000,000 ms (30 days), got -5",
        ),
        ("play nim --seat random --seat random --retries -1", "max_retries must be from 0 to 100, got -1"),
        ("play nim --seat random --seat random --retries 99999999999999999999", "from 0 to 100, got 99999999999999999999"),
        ("play nim --seat random --seat random --seed 9223372036854775808", "an integer from 0 to 9223372036854775807"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_status_2(capsys: pytest.CaptureFixture[str], command: str, message: str) -> None:
    code, out, err = run(capsys, *command.split())
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("arena: error: ") and message in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("--grace-ms -1", "argument --grace-ms: must be from 0 to 2592000000, got -1"),
        ("--rate 0", "argument --rate: must be above 0 and at most 2592000000, got 0"),
        ("--rate nan", "argument --rate: must be above 0 and at most 2592000000, got nan"),
        ("--burst -1", "argument --burst: must be from 1 to 2592000000, got -1"),
        ("--max-matches 0", "argument --max-matches: must be from 1 to 2592000000, got 0"),
        ("--max-connections 0", "argument --max-connections: must be from 1 to 2592000000, got 0"),
        ("--max-per-address 0", "argument --max-per-address: must be from 1 to 2592000000, got 0"),
        ("--login-attempts 0", "argument --login-attempts: must be from 1 to 1000000, got 0"),
        ("--login-window 0", "argument --login-window: must be from 1 to 2592000, got 0"),
        ("--trusted-proxy proxy.local", "argument --trusted-proxy: expected an IP address, got 'proxy.local'"),
        ("--trusted-proxy 192.0.2.1:abc", "argument --trusted-proxy: expected an IP address, got '192.0.2.1:abc'"),
        ("--retries -1", "argument --retries: must be from 0 to 100, got -1"),
        # it quoted Clock(move_ms=0, grace_ms=1000, ...), a grace no flag sets (found by a QA helper)
        ("--move-ms 0", "argument --move-ms: must be from 1 to 2592000000, got 0"),
        ("--move-ms 100000000000000000000", "argument --move-ms: must be from 1 to 2592000000, got 100000000000000000000"),
        ("--grace-ms 100000000000000000000", "argument --grace-ms: must be from 0 to 2592000000, got 100000000000000000000"),
    ],
)
def test_a_serve_flag_out_of_range_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--db", str(tmp_path / "arena.db"), *flags.split()])
    assert exited.value.code == 2 and capsys.readouterr().err.endswith(f"arena serve: error: {message}\n")
    assert not (tmp_path / "arena.db").exists()


def test_an_admin_token_file_that_is_not_text_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It was a bare codec error, naming no file, with status 1."""
    token = tmp_path / "token"
    token.write_bytes(b"\xff\xfe")
    code, out, err = run(capsys, "serve", "--db", str(tmp_path / "arena.db"), "--admin-token-file", str(token))
    assert (code, out) == (2, "") and err == f"arena: error: cannot read the admin token from {token}: it is not UTF-8 text\n"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("serve --port 99999", "argument --port: must be from 0 to 65535, got 99999"),  # it wrapped to another port
        ("serve --port -1", "argument --port: must be from 0 to 65535, got -1"),
        ("serve --port http", "argument --port: expected an integer, got 'http'"),
        ("ratings --resamples -5", "argument --resamples: must be from 2 to 100000, got -5"),
        ("ratings --resamples 1", "argument --resamples: must be from 2 to 100000, got 1"),  # the bootstrap failed, status 1
        ("report --resamples 0", "argument --resamples: must be from 2 to 100000, got 0"),
        ("ratings --resamples 1000000000000", "argument --resamples: must be from 2 to 100000"),  # it ran for days
        ("bot run random --token t --game nim --matches 0", "argument --matches: must be at least 1, got 0"),
        ("bot run random --token t --game nim --delay -1", "argument --delay: must be at least 0, got -1"),
        ("train init-model m --seed -1", "argument --seed: must be from 0 to 9223372036854775807, got -1"),  # it said -1000
    ],
)
def test_numbers_out_of_range_are_usage_errors_naming_the_option(
    capsys: pytest.CaptureFixture[str], command: str, message: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(command.split())
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def _not_a_store(kind: str, where: Path) -> Path:
    path = where / f"{kind}.db"
    if kind == "text":
        path.write_text("my notes\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "foreign":
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE matches (home TEXT, away TEXT)")
    else:
        path = where / "no-such-folder" / "arena.db"
    return path


@pytest.mark.parametrize("kind", ["text", "folder", "foreign", "missing folder"])
@pytest.mark.parametrize(
    "command",
    [
        "play nim --seat random --seat random --db {db}",
        "serve --port 0 --db {db}",
        "bot register b1 --db {db}",
        "ratings --db {db}",
        "watch --db {db}",
        "tournament run {quickstart} --db {db}",  # it failed inside the runner's nursery: 43 lines of traceback
    ],
)
def test_a_db_that_is_not_a_store_is_one_line_before_anything_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, command: str
) -> None:
    db = _not_a_store(kind, tmp_path)
    before = sorted(tmp_path.rglob("*"))
    quickstart = Path(__file__).parents[2] / "tournaments" / "quickstart.toml"
    code, out, err = run(capsys, *command.format(db=db, quickstart=quickstart).split())
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("arena: error: ")
    assert str(db) in err and "Traceback" not in err
    if kind == "foreign":
        assert "not an arena store" in err
    assert sorted(tmp_path.rglob("*")) == before  # nothing played, nothing written beside it


@pytest.mark.parametrize("command", ["ratings --db {db}", "watch --db {db}", "serve --read-only --port 0 --db {db}"])
def test_reading_an_empty_file_as_a_store_says_it_holds_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    code, out, err = run(capsys, *command.format(db=db).split())
    assert (code, out, err) == (2, "", f"arena: error: {db} is not an arena store: it holds no tables\n")


def test_a_store_path_with_url_characters_is_read_back(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "run #1 100%.db"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    code, out, _ = run(capsys, "ratings", "--db", str(db), "--json")
    assert code == 0 and "nim-optimal" in out
    sidecars = [db.name + "-shm", db.name + "-wal"]  # SQLite's, made by the reader
    assert sorted(path.name for path in tmp_path.iterdir()) == [db.name, *sidecars]  # no stray file from a misread name


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_tournament_run_with_a_void_match_fails_and_says_how_many_in_either_form(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, as_json: bool, tmp_path: Path
) -> None:
    """--json said nothing of the void match and exited 0, as if the tournament were done."""
    import tournaments.runner
    from tournaments.runner import Summary

    steps = "the match reached 10000 steps without ending"  # a rerun cannot help: the reason says so
    details = [steps, "server fault: OSError: disk full", steps]

    def run_tournament(config: Any, db: Any, progress: Any) -> Summary:
        return Summary("quickstart", total=5, played=2, voided=3, void_details=details)

    monkeypatch.setattr(tournaments.runner, "run_tournament", run_tournament)
    monkeypatch.setattr(tournaments.runner, "leaderboards", lambda config, db: {})
    code, out, err = run(capsys, "demo", *(["--json"] if as_json else []))
    why = f"{steps} (x2); server fault: OSError: disk full"
    assert code == 1 and err.strip() == f"arena: 3 void ({why})"  # the demo's store is thrown away: no rerun to suggest
    if as_json:
        assert json.loads(out)["voided"] == 3 and json.loads(out)["void_details"] == details
    else:
        assert out.startswith("quickstart: 2 played, 0 already done, 3 void")
    quickstart = str(Path(tournaments.runner.__file__).parent / "quickstart.toml")
    code, out, err = run(capsys, "tournament", "run", quickstart, "--db", str(tmp_path / "arena.db"))
    assert code == 1 and err.strip() == f"arena: 3 void ({why}): run the same command again to play them"


def test_demo_runs_the_quickstart_tournament_and_prints_its_leaderboards(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "demo", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["tournament"] == "quickstart" and summary["skipped"] == 0
    boards = summary["leaderboards"]
    assert set(boards) == {"tic-tac-toe", "kuhn-poker", "iterated-prisoners-dilemma"}
    assert boards["tic-tac-toe"][0]["bot"] == "perfect"
    assert f"{summary['played']}/{summary['played']} done" in err


def test_a_swiss_tournament_ends_with_its_standings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Swiss pairs by points, and only the rating boards were shown: never its standings, nor its winner."""
    path = tmp_path / "swiss.toml"
    path.write_text(
        'name = "sw"\nformat = "swiss"\nrounds = 2\ngames_per_pairing = 1\n'
        '[[games]]\nname = "iterated-prisoners-dilemma"\nconfig = { rounds = 3 }\n'
        'participants = ["always-cooperate", "always-defect", "grim", "tit-for-tat"]\n'
    )
    code, out, _ = run(capsys, "tournament", "run", str(path), "--db", str(tmp_path / "a.db"))
    assert code == 0 and "iterated-prisoners-dilemma: swiss standings (points: 1 a win" in out
    table = out.split("swiss standings")[1].splitlines()
    assert table[3].split() == ["always-defect", "2"]  # it beats every other: first, with both its games won
    code, out, _ = run(capsys, "tournament", "run", str(path), "--db", str(tmp_path / "a.db"), "--json")
    standings = json.loads(out)["standings"]["iterated-prisoners-dilemma"]
    assert sum(standings.values()) == 4 and standings["always-defect"] == 2  # rebuilt from the store by a rerun


def test_tournament_run_warns_of_a_deal_a_remote_bot_plays_twice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Said before anything is played (here the server is not even there)."""
    path = tmp_path / "cup.toml"
    path.write_text(
        'name = "cup"\nformat = "round-robin"\n[[games]]\nname = "kuhn-poker"\nparticipants = ["random", "remote:a"]\n'
    )
    code, _, err = run(capsys, "tournament", "run", str(path), "--url", "ws://127.0.0.1:9", "--admin-token", "t")
    first, second = err.splitlines()
    assert code == 1 and first.startswith("arena: warning: kuhn-poker: a remote bot plays a deal it has played before")
    assert 'deals = "fresh" deals each game of a pair apart' in first
    assert second.startswith("arena: error: cannot read /api/bots from ws://127.0.0.1:9")


def test_tournament_run_names_the_bad_key_of_a_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nformat = "knockout"\n[[games]]\nname = "nim"\n')
    code, out, err = run(capsys, "tournament", "run", str(path), "--db", str(tmp_path / "a.db"))
    assert (
        code == 2
        and out == ""
        and err == f"arena: error: {path}: format: unknown format 'knockout'; the formats are" + err.split("the formats are")[1]
    )


def test_a_human_seat_plays_from_the_terminal_and_is_asked_again_after_an_illegal_move() -> None:
    # The installed console script, as a user runs it: three typos (a bot's 2 retries made them
    # a forfeit), then legal moves, against the perfect player's replies to them at seed 0.
    moves = "z9\nz8\nz7\nb2\n[a1]\nc3\na3\nc1\n"
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "tic-tac-toe", "--seat", "human", "--seat", "perfect", "--seed=0", "--json"],
        input=moves,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Not accepted: 'z9' is not a cell" in done.stderr
    assert "Legal actions: a1, b1, c1, a2, b2, c2, a3, b3, c3" in done.stderr
    record = json.loads(done.stdout)
    human_moves = [step["0"] for step in record["actions"] if "0" in step]
    assert human_moves[:2] == ["b2", "a1"] and record["max_retries"] == 10


def test_with_a_person_at_the_terminal_a_bot_seats_rejected_moves_are_shown_without_the_reason(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game's reason is its answer to the mover: a partner's rejected hanabi hint ("your
    partner holds no white card") told the person which colours their own hidden cards were not."""
    import io

    from arena import cli
    from arena.seats import LocalSeat

    seat_for = cli._seat_for

    def typo_first(spec: str, game: str, seed: int, seat: int) -> Any:
        if spec != "typo-first":
            return seat_for(spec, game, seed, seat)
        answers = iter(["z9"])
        return LocalSeat(lambda turn: next(answers, turn.legal_actions[0]), name="typo-first")

    monkeypatch.setattr(cli, "_seat_for", typo_first)
    monkeypatch.setattr(sys, "stdin", io.StringIO("a1\nb1\nc1\na3\nc3\n"))
    code, out, _ = run(capsys, "play", "tic-tac-toe", "--seat", "typo-first", "--seat", "human")
    assert code == 0 and "  seat 0 (typo-first): 'z9' rejected\n" in out
    code, out, _ = run(capsys, "play", "tic-tac-toe", "--seat", "typo-first", "--seat", "random")
    assert code == 0 and "  seat 0 (typo-first): 'z9' rejected: 'z9' is not a cell" in out  # bots among themselves


def test_a_person_is_dealt_a_fresh_seed_unless_one_is_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 0 every time dealt a person the same cards again, the bot's among them, which the
    last match's end had shown (found by QA); bots among themselves keep seed 0."""
    import io

    seeds = []
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO("fold\n"))
        code, out, _ = run(capsys, "play", "kuhn-poker", "--seat", "human", "--seat", "random", "--json")
        assert code == 0
        seeds.append(json.loads(out)["seed"])
    assert seeds[0] != seeds[1]
    monkeypatch.setattr(sys, "stdin", io.StringIO("fold\n"))
    code, out, _ = run(capsys, "play", "kuhn-poker", "--seat", "human", "--seat", "random", "--seed", "7", "--json")
    assert code == 0 and json.loads(out)["seed"] == 7
    code, out, _ = run(capsys, "play", "kuhn-poker", "--seat", "random", "--seat", "random", "--json")
    assert code == 0 and json.loads(out)["seed"] == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("fold\n"))
    code, out, _ = run(capsys, "play", "kuhn-poker", "--seat", "human", "--seat", "random")
    seed = int(out.splitlines()[0].split("(seed ")[1].rstrip(")"))  # shown, to be dealt again with --seed
    assert code == 0 and seed not in (0, *seeds)


def test_a_human_whose_input_closes_resigns() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "tic-tac-toe", "--seat", "human", "--seat", "random", "--json"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["reason"] == "resign" and record["outcomes"] == ["forfeit", "win"]


def test_a_reader_that_stops_early_ends_the_command_quietly_as_a_filter_does() -> None:
    # `arena ratings | head -3`: the pipe's reader is gone before the command is done writing
    command = [sys.executable, "-m", "arena.cli", "play", "connect-four", "--seat", "random", "--seat", "random"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141 and err == ""  # 128 + SIGPIPE, what the shell reports for a filter cut off


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "init-model", ""], "give the folder to build the model in"),
        (["report", "--db", "arena.db", "--out", ""], "give --out a folder name"),
    ],
)
def test_an_empty_folder_name_is_refused_not_the_current_folder_filled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err.startswith(f"arena: error: {message}")
    assert list(tmp_path.iterdir()) == []


def test_a_report_out_that_is_a_file_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db, out = tmp_path / "arena.db", tmp_path / "notes.txt"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    out.write_text("mine\n")
    code, printed, err = run(capsys, "report", "--db", str(db), "--out", str(out))
    assert (code, printed) == (2, "") and err.count("\n") == 1  # it said "[Errno 17] File exists", status 1
    assert err.startswith(f"arena: error: --out {out} is a file") and out.read_text() == "mine\n"


def test_the_plotting_commands_name_the_missing_matplotlib_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both import matplotlib only when they draw, so its absence was a traceback mid-command."""
    db, run_dir = tmp_path / "arena.db", tmp_path / "run"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text(json.dumps({"kind": "update", "update": 1, "return_mean": 0.0}) + "\n")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without it imports
    for command, extra in [
        (["report", "--db", str(db), "--out", str(tmp_path / "report")], "report"),
        (["train", "plot", str(run_dir)], "train"),
    ]:
        code, printed, err = run(capsys, *command)
        assert (code, printed) == (2, "") and err.count("\n") == 1
        assert err.startswith("arena: error: ") and f"pip install 'selfplay-arena[{extra}]'" in err


@pytest.mark.parametrize(
    "command",
    [
        "play nim --seat llm:model={tmp}/ckpt --seat random",
        "bot run llm:model={tmp}/ckpt --token t --game nim",
        "train run {path}",
        "train init-model {tmp}/model",
    ],
)
def test_a_command_that_needs_torch_names_the_extra_in_one_line_when_it_is_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`pip install -e .` (README's first command) brings no torch: these stopped in a traceback."""
    path = tmp_path / "train.toml"
    path.write_text('name = "t"\nmodel = "m"\nout_dir = "run"\n[[games]]\nname = "nim"\n')
    (tmp_path / "ckpt").mkdir()  # a model folder as save_pretrained leaves it: what a bot spec is told of first
    for name, text in (("config.json", '{"model_type": "qwen2"}'), ("model.safetensors", ""), ("tokenizer.json", "{}")):
        (tmp_path / "ckpt" / name).write_text(text)
    monkeypatch.setitem(sys.modules, "torch", None)  # what an install without it imports
    code, printed, err = run(capsys, *command.format(path=path, tmp=tmp_path).split())
    assert (code, printed) == (2, "") and err.count("\n") == 1
    assert err.startswith("arena: error: ") and "pip install 'selfplay-arena[train]'" in err


def test_init_model_into_a_file_is_refused_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    code, out, err = run(capsys, "train", "init-model", str(notes))
    assert code == 2 and out == "" and "is a file, not a folder" in err  # it trained a tokenizer, then: [Errno 17] File exists
    assert notes.read_text() == "mine\n"
    code, out, err = run(capsys, "train", "init-model", str(tmp_path))  # wrote a model among the notes
    assert code == 2 and "holds other files, not a model" in err and [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_serving_on_a_port_that_is_taken_says_where_it_could_not_listen(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It was "[Errno 98] Address already in use", alone, with status 1."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run(capsys, "serve", "--port", str(port), "--db", str(tmp_path / "arena.db"))
    assert (code, out, err) == (2, "", f"arena: error: cannot listen on 127.0.0.1:{port}: Address already in use\n")


def test_version_names_the_package_and_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.protocol import PROTOCOL_VERSION

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and re.fullmatch(rf"arena \S+, protocol {PROTOCOL_VERSION}\n", capsys.readouterr().out)


def test_a_remote_run_whose_leaderboards_cannot_be_read_still_says_what_is_void(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stopped after the matches: the only line was the leaderboard's error, and
    the void matches to play again went unsaid (found by QA)."""
    import tournaments.remote
    from tournaments.runner import Summary

    def run_remote(*args: Any, **kwargs: Any) -> Summary:
        return Summary("quickstart", total=3, played=2, voided=1, void_details=["the server is shutting down"])

    def remote_leaderboards(*args: Any) -> Any:
        raise tournaments.remote.RemoteTournamentError("cannot read /api/leaderboard from ws://127.0.0.1:9: refused")

    monkeypatch.setattr(tournaments.remote, "run_remote", run_remote)
    monkeypatch.setattr(tournaments.remote, "remote_leaderboards", remote_leaderboards)
    quickstart = str(Path(tournaments.remote.__file__).parent / "quickstart.toml")
    code, _, err = run(capsys, "tournament", "run", quickstart, "--url", "ws://127.0.0.1:9", "--admin-token", "t")
    assert code == 1 and err.splitlines() == [
        "arena: 1 void (the server is shutting down): run the same command again to play them",
        "arena: error: cannot read /api/leaderboard from ws://127.0.0.1:9: refused",
    ]


def test_the_training_progress_line_says_whom_its_return_is_against(capsys: pytest.CaptureFixture[str]) -> None:
    """It said "return", which falls as PFSP samples the opponents the policy does worst
    against: read as the model getting worse (found by a README walkthrough)."""
    from arena.cli import _train_progress

    pytest.importorskip("torch", reason="trainer.run needs torch")
    from trainer.run import Progress

    _train_progress(Progress(2, 4, 10.0, {"return_mean": 1.5, "entropy": None, "turns_per_s": 80.0}))
    line = capsys.readouterr().err
    assert line == "[############............] update 2/4: return vs sampled opponents 1.500, entropy n/a, 80 turns/s, ETA 10s\n"


def test_a_leaderboard_in_text_says_once_what_a_rank_means(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two bots at rank 1, or a higher mu listed below a lower one, read as a bug (found by a
    README walkthrough): ranks are shared where the 95% intervals overlap."""
    from arena.cli import RANKS_NOTE

    db = str(tmp_path / "arena.db")
    for game, expert in (("tic-tac-toe", "perfect"), ("nim", "nim-optimal")):
        assert run(capsys, "play", game, "--seat", "random", "--seat", expert, "--db", db, "--json")[0] == 0
    for args in (("ratings", "--game", "nim"), ("ratings", "--game", "tic-tac-toe")):
        code, out, _ = run(capsys, *args, "--db", db)
        assert code == 0 and out.count(RANKS_NOTE) == 1 and out.rstrip().endswith(RANKS_NOTE)


@pytest.mark.parametrize("where", ["imports", "parser"])
def test_ctrl_c_while_the_cli_starts_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """Its first imports (scipy, with the store) take most of a second: Ctrl-C then printed a
    traceback and the process died by the signal. argparse loads its translations as the parser
    is built, where a Ctrl-C still printed one (found by a QA helper)."""

    class Interrupted(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            raise KeyboardInterrupt

    def interrupted() -> None:
        raise KeyboardInterrupt

    if where == "imports":
        monkeypatch.setitem(sys.modules, "arena.store", Interrupted("arena.store"))
    else:
        monkeypatch.setattr("arena.cli.build_parser", interrupted)
    assert main(["games"]) == 130
    assert capsys.readouterr().err == "arena: interrupted\n"


def test_a_coroutine_dropped_by_ctrl_c_is_not_warned_of_after_the_interrupted_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C landing as trio made a task left its coroutine never run, and the process's last
    lines were a RuntimeWarning about it, after the interrupted line (found in CI)."""
    made: list[Any] = []

    async def task() -> None:
        pass

    def interrupted_as_a_task_is_made(args: Any) -> int:
        made.append(task())
        raise KeyboardInterrupt

    monkeypatch.setattr("arena.cli.cmd_games", interrupted_as_a_task_is_made)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["games"]) == 130
        made.clear()
    assert [str(warning.message) for warning in caught] == []
    assert capsys.readouterr().err == "arena: interrupted\n"


@pytest.mark.parametrize("ctrl_c", ["taken", "ignored"])
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
def test_a_stop_signal_midway_through_an_export_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ctrl_c: str, stop: str
) -> None:
    """Started by a script in the background (SIGINT ignored), SIGTERM killed the export by
    its default action and left the hidden temporary file beside --out; SIGHUP (its terminal
    closed) left a 67 MB one whatever SIGINT did (found by QA)."""
    import signal

    import trainer.export

    def rows(*args: Any, **kwargs: Any) -> Any:
        yield {"match_id": "m"}
        signal.raise_signal(getattr(signal, stop))
        yield {"match_id": "never"}

    db = tmp_path / "arena.db"
    assert main(["play", "nim", "--seat", "random", "--seat", "random", "--db", str(db)]) == 0
    monkeypatch.setattr(trainer.export, "trajectory_rows", rows)
    capsys.readouterr()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN if ctrl_c == "ignored" else signal.default_int_handler)
    previous_stop = signal.signal(getattr(signal, stop), signal.SIG_DFL)  # as a shell gives it, whatever runs the tests
    try:
        assert main(["export", "trajectories", "--db", str(db), "--out", str(tmp_path / "t.jsonl")]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(getattr(signal, stop), previous_stop)
    assert capsys.readouterr().err == "arena: interrupted\n"
    assert [path.name for path in tmp_path.iterdir() if not path.name.startswith("arena.db")] == []


def test_ratings_of_a_store_with_self_play_alone_say_why_nothing_is_rated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "no finished matches" of a store holding one (found by QA)."""
    from arena.ratings.leaderboard import NOTHING_RATED

    db = str(tmp_path / "self.db")
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "random", "--db", db)[0] == 0
    assert run(capsys, "ratings", "--db", db) == (0, f"{db}: {NOTHING_RATED}\n", "")


def test_people_at_one_terminal_are_asked_in_seat_order_at_a_simultaneous_step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Their turns started in no fixed order, so answers piped in seat order went to whichever
    seat asked first (found by QA)."""
    import io

    for _ in range(5):
        monkeypatch.setattr(sys, "stdin", io.StringIO("0\n50\n100\n"))
        code, out, _ = run(capsys, "play", "beauty-contest", "--seat", "human", "--seat", "human", "--seat", "human", "--json")
        assert code == 0 and json.loads(out)["actions"] == [{"0": "0", "1": "50", "2": "100"}]


def test_a_match_the_game_itself_broke_is_an_error_for_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It exited 0 as for any finished match (found by QA)."""
    import dataclasses

    import games.registry
    from games.tic_tac_toe import TicTacToe

    class Broken(TicTacToe):
        spec = dataclasses.replace(TicTacToe.spec, name="broken-tic-tac-toe")

        def _apply(self, actions: Any) -> Any:
            raise RuntimeError("rules bug")

    monkeypatch.setattr(games.registry, "_registry", {**games.registry._load(), "broken-tic-tac-toe": Broken})
    code, out, err = run(capsys, "play", "broken-tic-tac-toe", "--seat", "random", "--seat", "random", "--json")
    assert code == 1 and json.loads(out)["status"] == "void"
    assert err == "arena: error: broken-tic-tac-toe failed, so the match is void: engine fault: RuntimeError: rules bug\n"
    assert run(capsys, "play", "tic-tac-toe", "--seat", "random", "--seat", "random", "--json")[0] == 0


def test_a_bots_token_may_come_from_the_environment_where_ps_does_not_show_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--token was the only way, and every account saw it in `ps` (found by QA)."""
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    argv = ["bot", "run", "random", "--url", "ws://127.0.0.1:9", "--game", "nim", "--matches", "1"]
    assert main(argv) == 2
    assert "give the bot's token with --token or the ARENA_TOKEN environment variable" in capsys.readouterr().err
    monkeypatch.setenv("ARENA_TOKEN", "arena_from-the-environment")
    assert main(argv) == 1 and "cannot reach ws://127.0.0.1:9" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["ratings"], ["ratings", "--game", "tic-tac-toe"], ["export", "trajectories"]])
def test_a_store_damaged_on_disk_is_one_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    """Copied over while a server wrote it, a store read as 'malformed', and each command
    ended in a traceback (found by a QA helper)."""
    db = tmp_path / "arena.db"
    for _ in range(2):
        assert main(["play", "tic-tac-toe", "--seat", "random", "--seat", "perfect", "--db", str(db)]) == 0
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        schema = {row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")}
    data = bytearray(db.read_bytes())
    for start in range(3 * page, len(data), page):  # every table's pages past the first ones: headers garbled
        if start // page + 1 not in schema:  # the schema outgrew its first page: a damaged one is no store at all
            data[start : start + 100] = b"\xff" * 100
    db.write_bytes(bytes(data))
    capsys.readouterr()
    out = ["--out", str(tmp_path / "turns.jsonl")] if command[0] == "export" else []
    code, _, err = run(capsys, *command, "--db", str(db), *out)
    assert (code, err) == (1, f"arena: error: the store {db} cannot be read: database disk image is malformed\n")


def test_export_store_copies_a_store_a_server_is_writing_whole(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The docs said nothing of backups, and `cp` of a served store missed the matches still in
    its -wal (135 of 150; found by a QA helper): the copy holds every committed match."""
    from arena.store import Store

    db = tmp_path / "arena.db"
    assert main(["play", "tic-tac-toe", "--seat", "random", "--seat", "perfect", "--db", str(db)]) == 0
    writer = Store(db)  # as a serving server holds it: the commits wait in the -wal, no checkpoint
    writer.conn.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        writer.register_bot("late")
        capsys.readouterr()
        code, out, _ = run(capsys, "export", "store", "--db", str(db), "--out", str(tmp_path / "copy.db"))
        assert code == 0 and out.startswith(f"copied {db} (1 match, ")
    finally:
        writer.close()
    copy = Store(tmp_path / "copy.db", read_only=True)
    try:
        assert copy.count("matches") == 1 and "late" in {bot["name"] for bot in copy.bots()}
    finally:
        copy.close()
    assert (tmp_path / "copy.db").stat().st_mode & 0o777 == 0o600
    assert [path.name for path in tmp_path.glob(".copy.db*")] == []  # no temporary file left


HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\r\x1b[2K\x9b31m\u202e"
"""What another player may write: retitle, clear, wipe the line, recolour (C1), reverse the text."""
OBEYED = set("\x1b\x07\r\x9b\u202e")


def test_what_a_seat_wrote_is_shown_on_the_terminal_never_obeyed(capsys: pytest.CaptureFixture[str]) -> None:
    """An illegal action quoted in its rejection, a message in an accepted action, a forfeit's
    detail were printed raw: a model's reply retitled and cleared the terminal of `arena play`
    (found by a QA helper)."""
    from types import SimpleNamespace

    from arena.cli import _print_result, _printer
    from arena.match import MatchEvent

    state = games.get("tic-tac-toe").new(None, 0)
    show = _printer(["a", "b"])
    show(MatchEvent("rejected", "m", 0, {"seat": 0, "action": HOSTILE, "reason": f"'{HOSTILE}' is not a cell"}, state))
    show(MatchEvent("step", "m", 1, {"actions": {0: f"b2: {HOSTILE}"}}, state))
    ended = {"game": "tic-tac-toe", "status": "finished", "reason": "illegal", "detail": f"last: {HOSTILE}"}
    _print_result(SimpleNamespace(**ended, outcomes=["forfeit", "win"], ranks=[2, 1], players=["a", "b"], returns=[-1, 1]))
    out = capsys.readouterr().out
    assert not OBEYED & set(out) and "PWNED" in out
    forged = "resigned\nmatch 1234: finished, win"  # a line of its own would read as the next match's
    _print_result(
        SimpleNamespace(
            **ended | {"detail": forged}, outcomes=["forfeit", "win"], ranks=[2, 1], players=["a", "b"], returns=[-1, 1]
        )
    )
    assert "(resigned\ufffdmatch 1234: finished, win)" in capsys.readouterr().out


def test_the_servers_log_shows_control_characters_never_obeys_them() -> None:
    """An admin's abort reason went raw into the log an operator tails (found by a QA helper)."""
    import logging

    from arena.cli import _VisibleFormatter

    record = logging.LogRecord("arena.server", logging.INFO, __file__, 1, "match %s void: %s", ("m", HOSTILE), None)
    line = _VisibleFormatter("%(message)s").format(record)
    assert line == "match m void: \ufffd]0;PWNED\ufffd\ufffd[2J\ufffd\ufffd[2K\ufffd31m\ufffd"


def test_export_store_over_a_store_with_a_leftover_wal_gives_the_copy_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A backup restored over a crashed server's store met its -wal, which SQLite then applied:
    the 'copy' held 40 matches where the backup had 3 (found by a QA helper)."""
    import shutil

    from arena.store import Store

    backup, crashed = tmp_path / "backup.db", tmp_path / "crashed.db"
    assert main(["bot", "register", "kept", "--db", str(backup)]) == 0
    assert main(["bot", "register", "only-in-wal", "--db", str(crashed)]) == 0
    holder = Store(crashed)  # the commits wait in its -wal, as when a server was killed
    holder.conn.execute("PRAGMA wal_autocheckpoint = 0")
    holder.register_bot("also-in-wal")
    shutil.copy(f"{crashed}-wal", tmp_path / "left-wal")
    holder.close()
    shutil.copy(tmp_path / "left-wal", f"{crashed}-wal")
    capsys.readouterr()
    assert run(capsys, "export", "store", "--db", str(backup), "--out", str(crashed))[0] == 0
    restored = Store(crashed, read_only=True)
    try:
        assert [bot["name"] for bot in restored.bots()] == ["kept"]
    finally:
        restored.close()


def test_export_store_into_a_folder_it_cannot_write_names_the_copy_not_the_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It said 'the store a.db cannot be read: unable to open database file' (found by a QA helper)."""
    db = tmp_path / "arena.db"
    assert main(["bot", "register", "kept", "--db", str(db)]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "export", "store", "--db", str(db), "--out", "/proc/arena-copy.db")
    assert code == 2 and err.startswith("arena: error: cannot write /proc/arena-copy.db: ")


def test_export_store_refuses_to_replace_a_store_a_server_is_serving(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from arena.store import serving_lock

    backup, served = tmp_path / "backup.db", tmp_path / "served.db"
    assert main(["bot", "register", "kept", "--db", str(backup)]) == 0
    capsys.readouterr()
    with serving_lock(served):
        code, _, err = run(capsys, "export", "store", "--db", str(backup), "--out", str(served))
    assert code == 2 and "is a store a server is serving; stop the server" in err


def test_export_store_refuses_an_out_that_is_no_regular_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--out /dev/null, as root, replaced the device with a file of the copy, and a FIFO held
    the command for ever in the check that no server serves it (found by a review)."""
    backup, fifo = tmp_path / "backup.db", tmp_path / "pipe"
    assert main(["bot", "register", "kept", "--db", str(backup)]) == 0
    capsys.readouterr()
    os.mkfifo(fifo)
    code, _, err = run(capsys, "export", "store", "--db", str(backup), "--out", str(fifo))
    assert code == 2 and err == f"arena: error: --out {fifo} is not a regular file; name a file to write the copy to\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["backup.db", "pipe"] and not fifo.is_file()
    code, _, err = run(capsys, "export", "store", "--db", str(backup), "--out", "")
    assert code == 2 and err == "arena: error: --out needs a file name\n"  # it said "--out  is a folder"


def test_export_store_refuses_a_store_named_as_a_file_of_the_copys_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The copy's leftover -wal was removed before the rename: a store named backup-wal, copied
    to backup, was deleted (found by a QA helper reviewing the command)."""
    source = tmp_path / "backup-wal"
    assert main(["bot", "register", "kept", "--db", str(source)]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "export", "store", "--db", str(source), "--out", str(tmp_path / "backup"))
    assert code == 2 and "is named as a file of --out" in err and source.exists()


@pytest.mark.parametrize(
    ("host", "written"), [("127.0.0.1", "127.0.0.1"), ("localhost", "localhost"), ("::1", "[::1]"), ("::", "[::]")]
)
def test_the_address_serve_prints_brackets_an_ipv6_host(host: str, written: str) -> None:
    """`arena serve --host ::1` printed ws://::1:41973, which no client can connect to (found by a QA helper)."""
    assert url_host(host) == written


def test_a_game_that_cannot_set_up_is_played_as_a_void_match_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It printed "arena: error: boom in _setup", naming no game, and stored nothing (found by a QA helper)."""
    import dataclasses

    import games.registry
    from arena.store import Store
    from games.tic_tac_toe import TicTacToe

    class SetupBug(TicTacToe):
        spec = dataclasses.replace(TicTacToe.spec, name="setup-bug")

        def _setup(self) -> None:
            raise RuntimeError("boom in _setup")

    monkeypatch.setitem(games.registry._load(), "setup-bug", SetupBug)
    db = tmp_path / "arena.db"
    assert main(["play", "setup-bug", "--seat", "random", "--seat", "random", "--db", str(db)]) == 1
    said = "engine fault: setup-bug could not set up the match: RuntimeError: boom in _setup"
    assert said in capsys.readouterr().err
    (record,) = Store(db, read_only=True).matches()
    assert (record["status"], record["detail"]) == ("void", said)
    assert main(["play", "tic-tac-toe", "--seat", "random", "--seat", "random", "--seed", "-1"]) == 2
    out, err = capsys.readouterr()  # refused before the match's header is printed
    assert out == "" and err.startswith("arena: error: the seed must be an integer from 0 to")


def test_json_output_writes_a_number_past_the_largest_float_as_null(capsys: pytest.CaptureFixture[str]) -> None:
    """``arena ratings --json`` printed ``"cost": Infinity`` for costs of 1e308 that summed past
    the largest float: no JSON parser reads it (found by a QA helper). The server writes null."""
    from arena.cli import _print_json

    _print_json({"cost": float("inf"), "cost_per_match": float("nan"), "games": 2})
    printed = capsys.readouterr().out
    assert json.loads(printed, parse_constant=lambda word: pytest.fail(f"{word} in JSON")) == {
        "cost": None,
        "cost_per_match": None,
        "games": 2,
    }


def test_an_empty_game_name_is_refused_by_the_bot_list(capsys: pytest.CaptureFixture[str]) -> None:
    """`arena bots --game ""` listed the bots of every game (found by a QA helper)."""
    code, out, err = run(capsys, "bots", "--game", "")
    assert code == 2 and out == "" and err.startswith("arena: error: unknown game ''")


def test_the_match_printer_says_a_reply_without_an_action_in_words() -> None:
    """It printed "None rejected" for a language model's reply that held no action (found by a QA helper)."""
    import contextlib
    import io

    from arena.cli import _printer
    from arena.match import MatchEvent

    state = games.get("nim").new({}, 0)
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        rejected = {"seat": 0, "action": None, "reason": "no action found"}
        _printer(["model", "random"])(MatchEvent("rejected", "m", 0, rejected, state))
    assert shown.getvalue() == "  seat 0 (model): no action rejected: no action found\n"


def test_example_lists_the_example_files_and_prints_each_as_shipped(capsys: pytest.CaptureFixture[str]) -> None:
    """The commands' help starts from these files; installed from a wheel there is no repository
    to find them in (found by a QA helper)."""
    root = Path(__file__).resolve().parents[2]
    code, out, _ = run(capsys, "example")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["quickstart", "nightly", "train-ipd"]
    shipped = {
        "quickstart": root / "tournaments" / "quickstart.toml",
        "nightly": root / "tournaments" / "nightly.toml",
        "train-ipd": root / "trainer" / "train-ipd.toml",
    }
    for name, path in shipped.items():
        code, out, _ = run(capsys, "example", name)
        assert code == 0 and out == path.read_text(encoding="utf-8") and "arena example " + name in out
    with pytest.raises(SystemExit) as exited:
        main(["example", "quick"])
    assert exited.value.code == 2 and "invalid choice: 'quick' (choose from" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["example", "nightly"], ["games", "--json"], ["games", "--doc", "tic-tac-toe"]])
def test_printing_commands_with_standard_output_closed_print_nothing_as_print_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena example nightly >&-` ended in a traceback (sys.stdout is None), where print()
    writes nothing (found by a review)."""
    monkeypatch.setattr(sys, "stdout", None)
    assert main(argv) == 0
