"""Trajectory export: rows read back from a store filled by real matches, and `arena export trajectories`."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import trio

import games
from arena.cli import main
from arena.match import MatchResult, play_match
from arena.seats import LocalSeat, Move, Turn
from arena.store import Store
from bots.registry import make_bot
from games.registry import UnknownGame
from trainer.export import COLUMNS, ExportError, trajectory_rows

CHAT = json.dumps([{"role": "system", "content": "rules"}, {"role": "user", "content": "your move"}])


def talker(turn: Turn) -> Move:
    """A language-model-like seat: answers off the board first, then the first legal cell,
    with the prompt, reply, tokens and log-probs a real one would report."""
    assert turn.legal_actions is not None
    if turn.attempt == 0:
        return Move(action="z9", raw="I play [z9]", prompt=CHAT, tokens_in=11, tokens_out=3, logprobs=[-0.5, -1.25])
    action = turn.legal_actions[0]
    return Move(action=action, raw=f"then [{action}]", prompt=CHAT, tokens_in=12, tokens_out=4, logprobs=[-0.25, -0.125, -2.0])


@dataclass
class Filled:
    db: Path
    finished: list[MatchResult]  # in the order played (= creation time)
    void: MatchResult


async def _play(game: str, seats: list[LocalSeat], seed: int, **config: object) -> MatchResult:
    return await play_match(games.get(game), seats, seed=seed, config=config or None)


def _bot(spec: str, game: str, seed: int) -> LocalSeat:
    return LocalSeat(make_bot(spec, game, seed), name=spec, threaded=False)


async def _fill(db: Path) -> Filled:
    finished: list[MatchResult] = []
    for seed in range(4):  # seats swapped every other match
        names = ["perfect", "random"] if seed % 2 == 0 else ["random", "perfect"]
        finished.append(await _play("tic-tac-toe", [_bot(n, "tic-tac-toe", seed) for n in names], seed))
    finished.append(
        await _play(
            "iterated-prisoners-dilemma",
            [_bot("tit-for-tat", "iterated-prisoners-dilemma", 0), _bot("always-defect", "iterated-prisoners-dilemma", 1)],
            7,
            rounds=4,
        )
    )
    finished.append(
        await _play("tic-tac-toe", [LocalSeat(talker, name="talker", threaded=False), _bot("random", "tic-tac-toe", 3)], 9)
    )
    void = replace(finished[0], match_id=uuid.uuid4().hex, status="void", reason="void", outcomes=["void", "void"])
    store = Store(db)
    for result in finished:
        meta = {"tournament": "cup", "round": 2} if result.game == "iterated-prisoners-dilemma" else None
        store.finish_match(result, meta)
    store.finish_match(void)
    store.close()
    return Filled(db, finished, void)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    return trio.run(_fill, tmp_path_factory.mktemp("export") / "arena.db")


def rows_of(db: Path, **filters: object) -> list[dict]:
    store = Store(db, read_only=True)
    try:
        return list(trajectory_rows(store, **filters))  # type: ignore[arg-type]
    finally:
        store.close()


def test_every_accepted_turn_of_a_finished_match_is_one_row_in_creation_step_seat_order(filled: Filled) -> None:
    rows = rows_of(filled.db)
    expected = [
        (result.match_id, turn.step, turn.seat)
        for result in filled.finished
        for turn in sorted(result.turns, key=lambda t: (t.step, t.seat))
        if turn.accepted
    ]
    assert [(r["match_id"], r["step"], r["seat"]) for r in rows] == expected
    assert filled.void.match_id not in {r["match_id"] for r in rows}
    assert all(set(r) == set(COLUMNS) for r in rows)


def test_rewards_credited_to_a_seats_turns_add_up_to_its_return(filled: Filled) -> None:
    rows = rows_of(filled.db)
    for result in filled.finished:
        for seat, bot in enumerate(result.players):
            mine = [r for r in rows if r["match_id"] == result.match_id and r["seat"] == seat]
            assert mine and all(r["bot"] == bot and r["return"] == result.returns[seat] for r in mine)
            assert sum(r["reward"] for r in mine) == pytest.approx(result.returns[seat])
            assert all(r["opponents"] == [result.players[1 - seat]] for r in mine)
            assert all(r["outcome"] == result.outcomes[seat] and r["seed"] == result.seed for r in mine)
    ipd = [r for r in rows if r["game"] == "iterated-prisoners-dilemma"]
    # tit-for-tat against always-defect over 4 rounds: 0 + 1 + 1 + 1 = 3 against 5 + 1 + 1 + 1 = 8, paid round by round
    assert [r["reward"] for r in ipd if r["seat"] == 0] == [0.0, 1.0, 1.0, 1.0]
    assert [r["reward"] for r in ipd if r["seat"] == 1] == [5.0, 1.0, 1.0, 1.0]
    assert {(r["tournament"], r["round"]) for r in ipd} == {("cup", 2)}
    assert json.loads(ipd[0]["config"])["rounds"] == 4


def test_a_forfeit_is_credited_to_each_seats_last_turn_so_rewards_add_up_to_the_return(tmp_path: Path) -> None:
    """No step pays a forfeit: left where the steps put them, the winner's rewards were 0 against
    a return of 1 (and the trainer, which credits the rest to the last turn, saw other rewards)."""
    answers = iter(["b2", "zz", "zz", "zz"])  # one legal move, then illegal answers until the seat forfeits
    forfeiter = LocalSeat(lambda turn: next(answers), name="forfeiter", threaded=False)
    result = trio.run(_play_seats, tmp_path / "arena.db", "tic-tac-toe", [forfeiter, _bot("perfect", "tic-tac-toe", 0)])
    assert result.reason == "illegal" and result.returns == [-1.0, 1.0]
    rows = rows_of(tmp_path / "arena.db")
    for seat in (0, 1):
        mine = [r["reward"] for r in rows if r["seat"] == seat]
        assert mine[:-1] == [0.0] * (len(mine) - 1) and mine[-1] == result.returns[seat]


async def _play_seats(db: Path, game: str, seats: list[LocalSeat]) -> MatchResult:
    result = await play_match(games.get(game), seats, seed=0, max_retries=2)
    store = Store(db)
    store.finish_match(result)
    store.close()
    return result


async def _fill_every_game(db: Path, seeds: range) -> list[MatchResult]:
    store = Store(db)
    played = []
    for game in games.all():
        players = game.new(None, 0).num_players
        for seed in seeds:
            seats = [_bot("random", game.spec.name, seed * 10 + seat) for seat in range(players)]
            played.append(await play_match(game, seats, seed=seed))
            store.finish_match(played[-1])
    store.close()
    return played


def test_every_games_exported_rewards_add_up_to_each_seats_return(tmp_path: Path) -> None:
    """Random play of every game, several seeds: in Hanabi a card played on the first turn
    pays the team before the second seat has moved, and that seat's share is still its own.
    (A seat that never moved, as when Mini Hanabi's one life is lost on the first turn, has
    no lines to add up.)"""
    played = {result.match_id: result for result in trio.run(_fill_every_game, tmp_path / "arena.db", range(8))}
    totals: dict[tuple[str, int], float] = {}
    for row in rows_of(tmp_path / "arena.db"):
        key = (row["match_id"], row["seat"])
        totals[key] = totals.get(key, 0.0) + row["reward"]
    assert all(result.reason == "complete" for result in played.values())
    for (match_id, seat), got in totals.items():
        result = played[match_id]
        expected = result.returns[seat]
        assert got == pytest.approx(expected), f"{result.game} seed {result.seed} seat {seat}: {got} != {expected}"


def test_the_acting_policys_prompt_reply_tokens_and_logprobs_travel_with_the_accepted_attempt(filled: Filled) -> None:
    talked = [r for r in rows_of(filled.db) if r["bot"] == "talker"]
    assert talked and all(r["attempt"] == 1 for r in talked)  # the rejected first attempts are not training data
    first = talked[0]
    assert first["prompt"] == CHAT and json.loads(first["prompt"])[1]["content"] == "your move"
    assert first["raw"] == f"then [{first['action']}]" and first["action"] == first["legal_actions"][0]
    assert first["logprobs"] == [-0.25, -0.125, -2.0] and (first["tokens_in"], first["tokens_out"]) == (12, 4)
    assert first["observation"].startswith("You are seat 0")
    assert all(r["prompt"] is None and r["logprobs"] is None for r in rows_of(filled.db, bot="perfect"))


def test_filters_keep_one_games_matches_one_bots_turns_and_the_most_recent_matches(filled: Filled) -> None:
    ipd = rows_of(filled.db, game="iterated-prisoners-dilemma")
    assert {r["game"] for r in ipd} == {"iterated-prisoners-dilemma"} and len(ipd) == 8
    perfect = rows_of(filled.db, bot="perfect")
    assert {r["bot"] for r in perfect} == {"perfect"} and {r["seat"] for r in perfect} == {0, 1}
    assert len({r["match_id"] for r in perfect}) == 4
    latest = rows_of(filled.db, limit=2)
    assert [r["match_id"] for r in latest] == sorted(
        (r["match_id"] for r in latest), key=[m.match_id for m in filled.finished].index
    )
    assert {r["match_id"] for r in latest} == {filled.finished[-2].match_id, filled.finished[-1].match_id}
    latest_of_random = rows_of(filled.db, bot="random", game="tic-tac-toe", limit=1)
    assert {r["match_id"] for r in latest_of_random} == {filled.finished[-1].match_id}


def test_since_keeps_matches_created_from_then_and_excluded_opponents_drop_their_turns(filled: Filled) -> None:
    last_two = filled.finished[-2:]
    since = min(result.started_at for result in last_two)
    assert {r["match_id"] for r in rows_of(filled.db, since=since)} == {result.match_id for result in last_two}
    assert rows_of(filled.db, since=max(result.started_at for result in filled.finished) + 1) == []
    random_rows = rows_of(filled.db, bot="random")
    kept = rows_of(filled.db, bot="random", exclude_opponents=["perfect"])
    assert len(kept) < len(random_rows) and kept and all("perfect" not in r["opponents"] for r in kept)
    assert {r["match_id"] for r in kept} == {filled.finished[-1].match_id}  # random vs talker only


def test_the_limit_counts_the_matches_the_other_filters_keep(filled: Filled) -> None:
    """Held-out matches took places of the limit and kept no line: the most recent match of
    random was against perfect, so a limit of 1 excluding perfect exported nothing (found by QA)."""
    kept = rows_of(filled.db, bot="random", exclude_opponents=["perfect"], limit=1)
    assert {r["match_id"] for r in kept} == {filled.finished[-1].match_id}
    before_talker = rows_of(filled.db, bot="random", game="tic-tac-toe", exclude_opponents=["talker"], limit=1)
    assert {r["match_id"] for r in before_talker} == {filled.finished[3].match_id}


def test_log_probs_that_are_not_finite_are_exported_as_null_and_line_breaks_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One -inf from the wire (an older server took it) stopped every export of the store;
    U+2028 in a reply made two lines for str.splitlines (found by QA)."""

    def odd(turn: Turn) -> Move:
        assert turn.legal_actions is not None
        return Move(action=turn.legal_actions[0], raw="one\u2028two\x85three", logprobs=[float("-inf"), -1.0])

    result = trio.run(_play, "nim", [LocalSeat(odd, name="odd", threaded=False), _bot("random", "nim", 1)], 1)
    db, out = tmp_path / "arena.db", tmp_path / "t.jsonl"
    Store(db).finish_match(result)
    assert run(capsys, "export", "trajectories", "--db", str(db), "--out", str(out))[0] == 0
    text = out.read_text(encoding="utf-8")
    assert len(text.splitlines()) == len(text.split("\n")) - 1 == len(result.turns)
    rows = [json.loads(line) for line in text.split("\n")[:-1]]
    assert {r["raw"] for r in rows if r["bot"] == "odd"} == {"one\u2028two\x85three"}
    assert all(r["logprobs"] is None for r in rows)


def test_a_held_out_bot_that_never_played_is_refused_naming_the_closest(filled: Filled) -> None:
    """A misspelled --exclude-opponent exported everything, the held-out bot's matches included (found by QA)."""
    with pytest.raises(ExportError, match=r"no bot named 'perfekt' .* did you mean 'perfect'"):
        rows_of(filled.db, exclude_opponents=["perfekt"])


def test_the_since_and_exclude_options_filter_as_the_trainers_store_settings(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    argv = ["export", "trajectories", "--db", str(filled.db), "--out", str(out), "--bot", "random"]
    assert run(capsys, *argv, "--exclude-opponent", "perfect", "--exclude-opponent", "tit-for-tat")[0] == 0
    assert {json.loads(line)["match_id"] for line in out.read_text().splitlines()} == {filled.finished[-1].match_id}
    assert run(capsys, *argv, "--since-hours", "1")[0] == 0
    assert out.read_text().count("\n") == len(rows_of(filled.db, bot="random"))
    code, _, err = run(capsys, *argv, "--since-hours", "0")
    assert code == 2 and "--since-hours must be a positive number of hours" in err


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_exported_file_has_every_key_on_every_line_with_one_json_type_per_key(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `datasets.load_dataset("json")` (Arrow) needs: a fixed set of columns, one type each, nulls allowed."""
    out = tmp_path / "all.jsonl"
    out.write_text("stale\n")
    code, printed, _ = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(out), "--json")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    summary = {"out": str(out), "rows": len(lines), "matches": len(filled.finished), "held_back": 0}
    assert code == 0 and json.loads(printed) == summary
    assert lines == rows_of(filled.db)
    for key in COLUMNS:
        values = [line[key] for line in lines]
        assert all(key in line for line in lines)
        kinds = {type(v) for v in values if v is not None}
        assert len(kinds) == 1, f"{key} mixes {kinds}"
        items = {type(x) for v in values if isinstance(v, list) for x in v}
        assert len(items) <= 1, f"{key} lists mix {items}"
    kinds = {key: {type(line[key]).__name__ for line in lines} for key in COLUMNS}
    assert kinds["reward"] == kinds["return"] == {"float"} and kinds["prompt"] == {"str", "NoneType"}
    assert kinds["tournament"] == {"str", "NoneType"} and kinds["round"] == {"int", "NoneType"}


def test_out_dash_writes_the_lines_to_stdout_and_the_summary_to_stderr(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It wrote a file named '-' (found by QA)."""
    monkeypatch.chdir(tmp_path)
    code, printed, said = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", "-")
    lines = [json.loads(line) for line in printed.splitlines()]
    assert code == 0 and lines == rows_of(filled.db) and list(tmp_path.iterdir()) == []
    assert said == f"wrote {len(lines)} turns of {len(filled.finished)} matches to stdout\n"
    code, printed, said = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", "-", "--json")
    assert (code, printed) == (2, "") and "give one of them" in said


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "tic-tac-to"], "unknown game 'tic-tac-to'; did you mean 'tic-tac-toe'?"),
        (["--bot", "perfec"], "no bot named 'perfec' played a match in"),
    ],
)
def test_a_bad_filter_is_one_line_with_status_2_and_writes_nothing(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "bad.jsonl"
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(out), *argv)
    assert code == 2 and message in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_limit_below_1_is_a_usage_error_naming_the_option(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    with pytest.raises(SystemExit) as exited:
        main(["export", "trajectories", "--db", str(filled.db), "--out", str(out), "--limit", "0"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.endswith("error: argument --limit: must be at least 1, got 0\n")  # "limit must..."
    assert list(tmp_path.iterdir()) == []


def test_a_game_uninstalled_since_its_matches_were_stored_can_still_be_chosen(filled: Filled, tmp_path: Path) -> None:
    """--game refused it as unknown, though the same export without it wrote its lines (found by a QA helper)."""
    db = tmp_path / "renamed.db"
    db.write_bytes(filled.db.read_bytes())
    store = Store(db)
    store.conn.execute("UPDATE matches SET game = 'old-plugin-game' WHERE game = 'iterated-prisoners-dilemma'")
    store.close()
    rows = rows_of(db, game="old-plugin-game")
    assert rows and {row["game"] for row in rows} == {"old-plugin-game"}
    with pytest.raises(UnknownGame, match="unknown game 'never-installed'"):
        rows_of(db, game="never-installed")


def test_a_bot_named_by_its_specs_name_alone_is_pointed_to_its_full_name(tmp_path: Path) -> None:
    """An LLM bot is stored under its whole spec (openai:model=m); 'openai' found no match and no hint."""
    db = tmp_path / "arena.db"
    seats = [LocalSeat(lambda turn: turn.legal_actions[0], name=name, threaded=False) for name in ("openai:model=m", "x")]  # type: ignore[index]
    trio.run(_play_seats, db, "nim", seats)
    with pytest.raises(ExportError, match=r"no bot named 'openai' .* did you mean 'openai:model=m'"):
        rows_of(db, bot="openai")


def test_a_limit_past_sqlites_integers_keeps_every_match(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "all.jsonl"
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(out), "--limit", str(2**64))
    assert (code, err) == (0, "")  # it was an OverflowError traceback
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows_of(filled.db)


def test_an_output_that_is_the_store_itself_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    before = db.read_bytes()
    code, _, err = run(capsys, "export", "trajectories", "--db", str(db), "--out", str(tmp_path / "." / "arena.db"))
    assert code == 2 and err.count("\n") == 1 and "is the store" in err  # the store was replaced by the export
    assert db.read_bytes() == before


@pytest.mark.parametrize("own", ["-wal", "-shm"])
def test_an_output_that_is_a_file_sqlite_keeps_beside_the_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own: str
) -> None:
    """Written over the -wal of a store a server was writing, it made the store unreadable
    ("disk I/O error") for every new reader (found by QA)."""
    db = tmp_path / "arena.db"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    code, _, err = run(capsys, "export", "trajectories", "--db", str(db), "--out", f"{db}{own}")
    assert code == 2 and f"is the store's own file {db}{own}" in err and not Path(f"{db}{own}").exists()


def test_an_output_that_is_the_wal_of_a_store_given_through_a_link_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--db link.db named the -wal link.db-wal, which is not SQLite's: e.db-wal was replaced (found by QA)."""
    db = tmp_path / "e.db"
    assert run(capsys, "play", "nim", "--seat", "random", "--seat", "nim-optimal", "--db", str(db))[0] == 0
    (tmp_path / "link.db").symlink_to(db)
    code, _, err = run(capsys, "export", "trajectories", "--db", str(tmp_path / "link.db"), "--out", f"{db}-wal")
    assert code == 2 and "is the store's own file" in err and not Path(f"{db}-wal").exists()


def test_an_empty_output_name_or_a_store_that_is_a_folder_says_so(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They said "cannot write : it is a folder" and "disk I/O error" (found by QA)."""
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", "")
    assert code == 2 and err == "arena: error: --out needs a file name, or - for stdout\n"
    code, _, err = run(capsys, "export", "trajectories", "--db", str(tmp_path), "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and f"{tmp_path} is a folder, not a store" in err


def test_a_missing_store_or_output_folder_is_one_line_with_status_2(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "export", "trajectories", "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and err == f"arena: error: no store at {tmp_path / 'none.db'}\n"
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(tmp_path / "no" / "x.jsonl"))
    assert code == 2 and "no folder" in err and not (tmp_path / "no").exists()


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs a folder nobody may write, as sysfs's")
def test_an_output_in_a_folder_that_cannot_be_written_is_one_line_with_status_2_naming_it(
    filled: Filled, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a bare OSError naming the hidden temporary file, with status 1."""
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", "/sys/kernel/x.jsonl")
    assert code == 2 and err.startswith("arena: error: cannot write /sys/kernel/x.jsonl: ") and ".tmp" not in err


def test_an_output_that_is_a_folder_is_one_line_with_status_2_naming_it(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and f"cannot write {tmp_path}: it is a folder" in err
    assert list(tmp_path.iterdir()) == [] and list(tmp_path.parent.glob(f".{tmp_path.name}.*")) == []


def test_an_output_that_is_no_regular_file_is_refused_not_replaced(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the rename that replaces a file whole turned a named pipe (or, for root, /dev/null) into a plain file
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, _, err = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(pipe))
    assert code == 2 and err.count("\n") == 1 and f"cannot write {pipe}: it is not a regular file" in err
    assert stat.S_ISFIFO(pipe.stat().st_mode) and list(tmp_path.iterdir()) == [pipe]


def test_an_output_that_is_a_symbolic_link_writes_its_target_and_keeps_the_link(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs").mkdir()
    target, link = tmp_path / "runs" / "today.jsonl", tmp_path / "latest.jsonl"
    target.write_text("yesterday\n")
    link.symlink_to(target)
    code, _, _ = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(link))
    assert code == 0 and link.is_symlink() and link.resolve() == target
    assert target.read_text().startswith('{"') and target.read_text().count("\n") > 1


def test_the_exported_file_gets_the_permissions_the_umask_gives_any_new_file(
    filled: Filled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "all.jsonl"
    umask = os.umask(0o027)
    try:
        code, _, _ = run(capsys, "export", "trajectories", "--db", str(filled.db), "--out", str(out))
    finally:
        os.umask(umask)
    assert code == 0 and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert list(tmp_path.iterdir()) == [out]


def test_the_export_module_loads_without_torch_or_transformers() -> None:
    code = "import sys, trainer.export; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_schema_page_documents_exactly_the_exported_fields() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "TRAJECTORIES.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `(\w+)` \|", page, flags=re.MULTILINE)
    assert documented == list(COLUMNS)


async def _kuhn(seed: int) -> MatchResult:
    return await _play("kuhn-poker", [_bot("random", "kuhn-poker", 0), _bot("random", "kuhn-poker", 1)], seed)


def test_a_match_whose_deal_is_still_being_played_is_held_back_until_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export wrote what the server withholds: a live match's cards, through a finished
    match dealt from its seed, and a duplicate group's first table before the second played
    (found by a QA helper)."""
    grouped, mirrored, twin, mirror = (trio.run(_kuhn, seed) for seed in (7, 8, 7, 8))
    db = tmp_path / "arena.db"
    store = Store(db)
    store.finish_match(grouped, {"group_id": "dup", "group_size": 2})
    live = {"id": mirror.match_id, "game": "kuhn-poker", "variant": "kuhn-poker", "config": {}, "seed": 8}
    store.open_match(live | {"players": ["random"] * 2, "max_retries": 2, "clock": {}, "created_at": 1.0, "source": "server"})
    store.finish_match(mirrored)
    store.close()
    out = tmp_path / "out.jsonl"
    assert main(["export", "trajectories", "--db", str(db), "--out", str(out)]) == 0
    assert out.read_text() == ""
    said = f"wrote 0 turns of 0 matches to {out}; 2 finished matches held back: their deal is still to be played elsewhere\n"
    assert capsys.readouterr().out == said
    assert main(["export", "trajectories", "--db", str(db), "--out", str(out), "--exclude-opponent", "random"]) == 0
    assert "held back" not in capsys.readouterr().out  # what the filters would not write is not waiting either
    store = Store(db)
    store.finish_match(twin, {"group_id": "dup", "group_size": 2})
    store.finish_match(mirror)
    store.close()
    assert {row["match_id"] for row in rows_of(db)} == {grouped.match_id, mirrored.match_id, twin.match_id, mirror.match_id}
