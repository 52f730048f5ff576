"""The nightly pipeline: two nights on the tiny model (train, enter, play, rate, report,
gate, promote), a night resumed after a crash, bad nightly files, and the --at clock."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

import games
import tournaments
from arena.cli import main
from arena.match import play_match
from arena.seats import LocalSeat
from arena.store import Store, StoreError
from bots.registry import make_bot
from tournaments.config import TournamentConfigError
from tournaments.gate import head_to_head, sprt
from tournaments.nightly import (
    Checkpoint,
    NightlyConfigError,
    NightlyError,
    current_checkpoint,
    load,
    next_run,
    nightly_dir,
    parse,
    parse_at,
    pointer_path,
    run_night,
    serve_nightly,
)

IPD = "iterated-prisoners-dilemma"
IPD_VARIANT = 'iterated-prisoners-dilemma{"rounds":3}'


def nightly_text(model: Path) -> str:
    """A night of seconds: one update of two matches, a round robin of two games per pairing."""
    return f"""
name = "test-night"
resamples = 5

[[policies]]
name = "ipd"
current = "{model}"
updates = 1

[policies.train]
matches_per_update = 2
concurrency = 2
games = [{{ name = "{IPD}", config = {{ rounds = 3 }} }}]
opponents = {{ bots = ["tit-for-tat"] }}

[tournament]
format = "round-robin"
games_per_pairing = 2
held_out_games = ["kuhn-poker"]

[[tournament.games]]
name = "{IPD}"
config = {{ rounds = 3 }}
participants = ["{{new:ipd}}", "{{current:ipd}}", "tit-for-tat"]

[[tournament.games]]
name = "kuhn-poker"
participants = ["{{new:ipd}}", "{{current:ipd}}", "random"]

[gate]
method = "sprt"
game = "{IPD}"
"""


def seed_clear_wins(db: Path, winner: str, loser: str, matches: int) -> None:
    """Finished matches in which ``winner`` beats ``loser`` every time (a defector against a
    cooperator, seats alternating), as if they had met before the night: enough for the SPRT."""
    game = games.get(IPD)
    store = Store(db)
    for i in range(matches):
        seats = [LocalSeat(make_bot("always-defect", IPD), winner), LocalSeat(make_bot("always-cooperate", IPD), loser)]
        seats = seats if i % 2 == 0 else seats[::-1]
        store.finish_match(trio.run(lambda seats=seats, i=i: play_match(game, seats, config={"rounds": 3}, seed=i)))
    store.close()


class Crash(Exception):
    """Stands for the night being killed part-way."""


@pytest.mark.slow
def test_two_nights_train_enter_play_rate_report_and_promote_only_on_evidence(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nightly.toml"
    path.write_text(nightly_text(tiny_model_dir))
    db = tmp_path / "arena.db"
    today = dt.date.today()
    new_bot = f"ipd.{today.isoformat()}"

    # Night 1, through the command line.
    assert main(["nightly", str(path), "--db", str(db), "--json"]) == 0
    out = capsys.readouterr()
    record = json.loads(out.out)
    assert "ipd: training from ipd.base for 1 update (" in out.err
    night_dir = tmp_path / "nightly" / today.isoformat()
    assert json.loads((night_dir / "night.json").read_text()) == record
    assert record["steps"] == ["train", "register", "tournament", "report", "promote", "page"]
    ipd = record["policies"]["ipd"]
    assert ipd["current"] == {"bot": "ipd.base", "checkpoint": str(tiny_model_dir.resolve())}
    assert ipd["new"] == {"bot": new_bot, "checkpoint": str((night_dir / "ipd" / "checkpoints" / "final").resolve())}
    assert (Path(ipd["new"]["checkpoint"]) / "model.safetensors").is_file()
    assert ipd["training"]["stored_turns"] is None  # the store was empty
    assert record["tournament"]["name"] == f"test-night-{today.isoformat()}"
    assert (record["tournament"]["played"], record["tournament"]["voided"]) == (12, 0)
    assert list(record["tournament"]["held_out"]["games"]) == ["kuhn-poker"]

    store = Store(db, read_only=True)
    try:
        assert store.bot_exists(new_bot) and store.bot_exists("ipd.base")
        seated = {row[0] for row in store.conn.execute("SELECT DISTINCT bot FROM seats")}
        assert seated == {new_bot, "ipd.base", "tit-for-tat", "random"}  # names, never llm:model=/a/path
        rated = {row["bot"] for row in store.ratings(variant=IPD_VARIANT)}
        assert {new_bot, "ipd.base"} <= rated
        scores = head_to_head(store, new_bot, "ipd.base", IPD)
    finally:
        store.close()
    decision = ipd["decision"]
    assert len(scores) == 2 and decision["n"] == 2 and decision["method"] == "sprt"
    assert decision["statistic"] == pytest.approx(sprt(scores).llr)
    assert not decision["promote"] and "keep ipd.base" in decision["reason"]
    assert not (tmp_path / "nightly" / "current" / "ipd.json").exists()
    assert new_bot in Path(record["report"]).read_text()
    page = Path(record["page"]).read_text()
    assert "## Ratings (the first night" in page and "kuhn-poker (held-out game)" in page and decision["reason"] in page

    assert main(["nightly", str(path), "--db", str(db)]) == 2
    assert "ran already" in capsys.readouterr().err

    # Night 2: tonight's checkpoint has (as the store says) clearly beaten the current one already.
    tomorrow = today + dt.timedelta(days=1)
    newer = f"ipd.{tomorrow.isoformat()}"
    seed_clear_wins(db, newer, "ipd.base", 20)
    config = load(path)
    lines: list[str] = []

    def crash_at_the_tournament(line: str) -> None:
        lines.append(line)
        if line.startswith("tournament "):
            raise Crash

    with pytest.raises(Crash):
        run_night(config, db=db, night=tomorrow, log=crash_at_the_tournament)
    trained = next(line for line in lines if line.startswith("ipd: training from ipd.base"))
    # last night's 4 IPD matches and the 20 above; not the 4 of the held-out game
    assert "stored turns: 24 matches of ipd.base since the previous night" in trained
    checkpoint = tmp_path / "nightly" / tomorrow.isoformat() / "ipd" / "checkpoints" / "final" / "model.safetensors"
    stamp = checkpoint.stat().st_mtime_ns

    lines.clear()
    second = run_night(config, db=db, night=tomorrow, log=lines.append)
    assert not any("training" in line for line in lines) and checkpoint.stat().st_mtime_ns == stamp  # resumed
    decision = second["policies"]["ipd"]["decision"]
    assert decision["promote"] and decision["new"] == newer and decision["n"] == 17  # Wald's bound crossed at 17 wins
    pointer = json.loads((tmp_path / "nightly" / "current" / "ipd.json").read_text())
    assert pointer["bot"] == newer and pointer["previous"]["bot"] == "ipd.base" and pointer["decision"] == decision
    now_current = current_checkpoint(config.policies[0], nightly_dir(config, db))
    assert (now_current.bot, now_current.path) == (newer, checkpoint.parent)

    changes = second["changes"]
    assert changes["since"] == today.isoformat()
    rows = {row["bot"]: row for row in changes["variants"][IPD_VARIANT]}
    assert rows[newer]["new"] and rows[newer]["mu_delta"] is None
    assert rows[new_bot]["games_delta"] == 0  # last night's checkpoint did not play tonight
    assert rows["ipd.base"]["games_delta"] == 2 + 2 + 20  # tonight: against the new one and tit-for-tat; the seeded 20
    assert rows["tit-for-tat"]["mu_delta"] == pytest.approx(
        second["ratings"][IPD_VARIANT]["tit-for-tat"]["mu"] - record["ratings"][IPD_VARIANT]["tit-for-tat"]["mu"]
    )
    assert f"## What changed since {today.isoformat()}" in Path(second["page"]).read_text()


def base_config(model: Path) -> dict[str, Any]:
    return {
        "name": "n",
        "policies": [
            {
                "name": "ipd",
                "current": str(model),
                "updates": 1,
                "train": {"games": [{"name": IPD}], "opponents": {"bots": ["tit-for-tat"]}},
            }
        ],
        "tournament": {
            "format": "round-robin",
            "games": [{"name": IPD, "participants": ["{new:ipd}", "{current:ipd}", "tit-for-tat"]}],
        },
    }


def changed(data: dict[str, Any], *path: str | int, value: Any = None, remove: bool = False) -> dict[str, Any]:
    copy = json.loads(json.dumps(data))
    *parents, last = path
    node = copy
    for key in parents:
        node = node[key]
    if remove:
        del node[last]
    else:
        node[last] = value
    return copy


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("policies",), [], "policies: lists no policy"),
        (("schedule",), "nightly", "schedule: unknown key"),
        (("resamples",), 1, "resamples: must be at least 2, got 1"),  # the night failed at its report, after training
        (("policies", 0, "name"), "IPD.v2", r"policies\[0\].name: 'IPD.v2' must be a bot name without '.'"),
        (("policies", 0, "current"), "/nowhere", r"policies\[0\].current: '/nowhere' is neither a model folder"),
        (("policies", 0, "current"), "/nowhere.json", r"policies\[0\].current: no such pointer file"),
        (("policies", 0, "updates"), 0, r"policies\[0\].updates: must be from 1 to 1,000,000, got 0"),
        (("policies", 0, "updates"), 2_000_000, r"policies\[0\].updates: must be from 1 to 1,000,000"),  # was status 1, no key
        (("policies", 0, "store_matches"), -1, r"policies\[0\].store_matches: must be 0"),
        (("policies", 0, "bot_options"), {"model": "elsewhere"}, r"policies\[0\].bot_options.model: the llm bot's options"),
        (("policies", 0, "bot_options"), {"devic": "cpu"}, r"policies\[0\].bot_options: bot 'llm' has no option 'devic'"),
        (("policies", 0, "bot_options"), {"temperature": "warm"}, r"policies\[0\].bot_options: .*temperature"),
        (("policies", 0, "bot_options"), {"temperature": 0}, r"policies\[0\].bot_options: .*temperature must be > 0"),
        (("policies", 0, "bot_options"), {"device": "cuda:99"}, r"policies\[0\].bot_options: .*'cuda:99' is not available"),
        (("policies", 0, "bot_options"), {"device": "gpu"}, r"policies\[0\].bot_options: .*'gpu' is not a torch device"),
        (("policies", 0, "train", "model"), "m", r"policies\[0\].train.model: set by the nightly pipeline"),
        (("policies", 0, "train", "ppo"), {"lr": "fast"}, r"policies\[0\].train: ppo.lr: must be float"),
        (("policies", 0, "train"), "/nowhere/train.toml", r"policies\[0\].train: /nowhere/train.toml: no such file"),
        (
            ("tournament", "games", 0, "participants", 0),
            "{new:chess}",
            r"games\[0\].participants\[0\]: \{new:chess\} names no policy",
        ),
        (("tournament", "games", 0, "participants", 1), "random", r"no game seats both \{new:ipd\} and \{current:ipd\}"),
        (("tournament", "games", 0, "participants", 2), "remote:alice", "'remote:alice': remote participants play only through"),
        (("tournament", "games", 0, "name"), "tic-tac-to", r"tournament: games\[0\].name: unknown game"),
        (("tournament", "name"), "cup", "tournament: name: set by the nightly pipeline"),
        (("tournament", "held_out_opponents"), ["tit-for-tat"], r"opponents.bots: tit-for-tat is a held-out opponent"),
        (("gate",), {"method": "coin"}, "gate.method: unknown method 'coin'"),
        (("gate",), {"method": "sprt", "p0": 0.7, "p1": 0.6}, "gate: sprt needs 0 < p0 < p1 < 1"),
        (("gate",), {"method": "sprt", "p1": "high"}, "gate.p1: must be a number, got str 'high'"),
        (("policies", 0, "train"), 3, r"policies\[0\].train: must be a string or a table, got int 3"),
        (("gate",), {"method": "bootstrap", "alpha": 0.1}, "gate.alpha: unknown key for method bootstrap"),
        (("gate",), {"method": "bootstrap", "seed": -1}, "gate: seed must be at least 0, got -1"),  # named no key
        (("gate",), {"method": "bootstrap", "resamples": 10**11}, "gate: resamples must be from 1 to 1,000,000"),  # MemoryError
        (("gate",), {"game": "kuhn-poker"}, r"gate.game: no kuhn-poker game of the tournament seats both"),
    ],
)
def test_a_bad_nightly_file_names_the_file_and_the_key(tiny_model_dir: Path, path: tuple, value: Any, message: str) -> None:
    with pytest.raises(NightlyConfigError, match=message) as error:
        parse(changed(base_config(tiny_model_dir), *path, value=value), "nights.toml")
    assert str(error.value).startswith("nights.toml: ")


def test_a_held_out_game_may_not_be_trained_on(tiny_model_dir: Path) -> None:
    data = base_config(tiny_model_dir)
    data["tournament"]["held_out_games"] = [IPD]
    data["tournament"]["games"].append({"name": "kuhn-poker", "participants": ["{new:ipd}", "{current:ipd}", "random"]})
    with pytest.raises(NightlyConfigError, match=r"policies\[0\].train.games: iterated-prisoners-dilemma is a held-out game"):
        parse(data, "nights.toml")
    assert parse(changed(data, "tournament", "held_out_games", value=["kuhn-poker"]), "nights.toml").gate.method == "sprt"


def test_a_training_file_given_by_path_may_name_a_model_and_store_the_pipeline_replaces(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """The file of an earlier run, whose model folder and store are gone: the night never reads them."""
    train = tmp_path / "train.toml"
    train.write_text(
        f'name = "old"\nmodel = "{tmp_path / "gone"}"\nout_dir = "runs/old"\nupdates = 7\n'
        f'[[games]]\nname = "{IPD}"\n[opponents]\nbots = ["tit-for-tat"]\n'
        f'[store]\ndb = "{tmp_path / "gone.db"}"\nbot = "someone"\n'
    )
    config = parse(changed(base_config(tiny_model_dir), "policies", 0, "train", value=str(train)), "nights.toml")
    policy = config.policies[0]
    assert (policy.train.model, policy.train.store, policy.updates) == (str(tiny_model_dir), None, 1)


def test_a_hand_written_pointer_names_the_current_checkpoint(tmp_path: Path, tiny_model_dir: Path) -> None:
    pointer = tmp_path / "ipd-current.json"
    data = changed(base_config(tiny_model_dir), "policies", 0, "current", value=str(pointer))
    for content, message in [
        ({"checkpoint": str(tmp_path)}, "is not a model folder"),
        ({"checkpoint": str(tiny_model_dir), "bot": "Bad Name"}, "'bot' must be a valid bot name"),
        (["a list"], "must be a JSON object with a string 'checkpoint'"),
    ]:
        pointer.write_text(json.dumps(content))
        with pytest.raises(NightlyConfigError, match=rf"nights.toml: policies\[0\].current: .*{message}"):
            parse(data, "nights.toml")
    pointer.write_text(json.dumps({"checkpoint": str(tiny_model_dir)}))
    config = parse(data, "nights.toml")
    assert current_checkpoint(config.policies[0], tmp_path / "nightly") == Checkpoint("ipd.base", tiny_model_dir)
    assert pointer_path(config.policies[0], tmp_path / "nightly") == pointer  # a promotion rewrites this file


def test_the_command_reports_a_bad_file_or_time_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="without it the command says the train extra is missing first")
    assert main(["nightly", str(tmp_path / "none.toml")]) == 2
    assert capsys.readouterr().err == f"arena: error: {tmp_path / 'none.toml'}: no such file\n"
    (tmp_path / "bad.toml").write_text("name = [\n")
    assert main(["nightly", str(tmp_path / "bad.toml")]) == 2
    assert "bad.toml: not valid TOML" in capsys.readouterr().err
    assert main(["nightly", str(tmp_path / "bad.toml"), "--at", "25:00"]) == 2
    assert "--at: expected HH:MM in 24-hour local time" in capsys.readouterr().err
    assert main(["nightly", str(tmp_path / "bad.toml"), "--at", ""]) == 2  # an unset variable: it ran one night
    assert "--at: expected HH:MM in 24-hour local time" in capsys.readouterr().err


def test_a_checkpoint_folder_with_a_comma_is_refused_before_anything_trains(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tournament seats a checkpoint as llm:model=PATH,...: a comma split the path, and the
    night trained, then failed at its tournament, every night (found by a QA helper)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny,v2")
    text = (Path(tournaments.__file__).parent / "nightly.toml").read_text().replace('"models/tiny"', '"models/tiny,v2"')
    (tmp_path / "n.toml").write_text(text)
    assert main(["nightly", "n.toml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: n.toml: policy ipd's checkpoint ") and "tiny,v2 cannot be named in a bot spec" in err
    assert not list((tmp_path / "nightly").glob("*/ipd"))  # nothing trained


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (
            StoreError("tournament 'nightly-2026-12-03' was first run with another schedule", "schedule"),
            "begun with another schedule",
        ),
        (
            TournamentConfigError("n.toml: games[0]: cup/ipd/rr/a~b/g0 was played with rounds=3; the file now says rounds=4"),
            "rounds=4",
        ),
    ],
)
def test_a_night_begun_from_another_file_says_so_in_one_line(
    tmp_path: Path,
    tiny_model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: Exception,
    said: str,
) -> None:
    """An interrupted night rerun from an edited file (a bot option, a game's rounds) ended in a
    traceback of the tournament's nursery, whose advice, to rename the tournament, the pipeline
    does not take (found by a QA helper)."""
    import tournaments.nightly as nightly

    def refused(*args: Any, **kwargs: Any) -> None:
        raise ExceptionGroup("a nursery", [raised])

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny")
    monkeypatch.setattr(nightly, "run_night", refused)
    assert main(["nightly", str(Path(tournaments.__file__).parent / "nightly.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena: error: ") and said in err
    assert err.rstrip().endswith("to finish the night") and "new name" not in err


@pytest.mark.parametrize("when", ["waiting", "during a night"])
def test_ctrl_c_of_a_nightly_loop_says_whether_a_night_was_under_way(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], when: str
) -> None:
    """Stopped while waiting for its time, it said "what the night finished is kept", of no night (found by QA)."""
    import tournaments.nightly as nightly

    def serve(run: Any, at: Any, log: Any) -> None:
        if when == "during a night":
            run()
        raise KeyboardInterrupt

    # before main, which imports it: set within serve, the real night ran, training and all
    monkeypatch.setattr(nightly, "night_process", lambda command: (_ for _ in ()).throw(KeyboardInterrupt))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny")
    monkeypatch.setattr(nightly, "serve_nightly", serve)
    assert main(["nightly", str(Path(tournaments.__file__).parent / "nightly.toml"), "--at", "03:00"]) == 130
    said = capsys.readouterr().err
    if when == "waiting":
        assert said == "arena: interrupted while waiting for the next night\n"
    else:
        assert said.startswith("arena: interrupted; what the night finished is kept")


NIGHT = """
import pathlib, signal, sys, time
said = pathlib.Path(sys.argv[1])
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # an arena night then dies of a SIGTERM
    said.write_text("ready, but Ctrl-C ignored")
    time.sleep(60)
def stop(signum, frame):
    said.write_text(said.read_text() + " " + signal.Signals(signum).name)
    time.sleep(1.0)  # a night winding down: its tournament's matches voided, its record written
    said.write_text(said.read_text() + " stopped")
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
said.write_text("ready")
time.sleep(60)
"""

LOOP = """
import signal, sys
from tournaments.nightly import night_process
def interrupt(signum, frame):
    raise KeyboardInterrupt  # as the CLI takes SIGTERM
signal.signal(signal.SIGTERM, interrupt)
try:
    night_process([sys.executable, "-c", sys.argv[1], sys.argv[2]])
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.parametrize("stop", ["SIGTERM to the loop", "Ctrl-C at its terminal", "SIGTERM to a background loop"])
def test_a_stopped_nightly_loop_lets_the_night_stop_in_order(tmp_path: Path, stop: str) -> None:
    """The night was given a quarter of a second and killed, and a SIGTERM to the loop never
    reached it: the loop's own interrupt is passed on once, and the night waited for. A loop
    started in the background by a script (Ctrl-C ignored) gives its night Ctrl-C back: with
    it ignored, an arena command takes SIGTERM as a kill."""
    said = tmp_path / "said"
    root = Path(tournaments.__file__).resolve().parents[1]
    background = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if stop == "SIGTERM to a background loop" else None
    loop = subprocess.Popen(
        [sys.executable, "-c", LOOP, NIGHT, str(said)], cwd=root, start_new_session=True, preexec_fn=background
    )
    try:
        deadline = time.monotonic() + 30
        while not (said.exists() and said.read_text() == "ready"):
            assert time.monotonic() < deadline and loop.poll() is None, "the night never started"
            time.sleep(0.05)
        if stop != "Ctrl-C at its terminal":
            loop.send_signal(signal.SIGTERM)
        else:  # a terminal's Ctrl-C goes to its whole foreground process group
            os.killpg(loop.pid, signal.SIGINT)
        assert loop.wait(timeout=30) == 130
    finally:
        loop.kill()
    assert said.read_text() == "ready SIGTERM stopped"


def test_a_night_record_holding_a_cost_that_is_no_number_is_still_json(tmp_path: Path) -> None:
    """A bot whose costs add to no number has a NaN cost in its leaderboard row: the night
    record said NaN, which no JSON reader takes (found by a review)."""
    from tournaments.nightly import _write_json

    _write_json(tmp_path / "night.json", {"leaderboard": [{"bot": "llm", "cost": math.nan, "when": dt.date(2026, 12, 3)}]})
    text = (tmp_path / "night.json").read_text(encoding="utf-8")
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the record")) == {
        "leaderboard": [{"bot": "llm", "cost": None, "when": "2026-12-03"}]
    }


def test_the_shipped_nightly_file_is_valid(tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny")
    config = load(Path(tournaments.__file__).parent / "nightly.toml")
    assert [p.name for p in config.policies] == ["ipd"] and config.gate.game == IPD
    assert current_checkpoint(config.policies[0], nightly_dir(config, config.db)).bot == "ipd.base"


def test_the_file_shown_in_the_nightly_docs_is_valid(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reader copies the page's example file: it must load once its training file and model exist."""
    root = Path(tournaments.__file__).resolve().parents[1]
    example = (root / "docs" / "NIGHTLY.md").read_text(encoding="utf-8").split("```toml\n")[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny")
    assert main(["example", "train-ipd"]) == 0  # the training file it names, as the page writes it
    (tmp_path / "ipd.toml").write_text(capsys.readouterr().out, encoding="utf-8")
    (tmp_path / "nightly.toml").write_text(example, encoding="utf-8")
    config = load(tmp_path / "nightly.toml")
    assert [p.name for p in config.policies] == ["ipd"] and config.gate.game == IPD


def test_a_night_is_refused_when_its_store_has_no_folder(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = parse(base_config(tiny_model_dir), "nights.toml")
    with pytest.raises(NightlyError, match="no folder"):
        run_night(config, db=tmp_path / "missing" / "arena.db")


def test_a_second_run_on_one_nightly_folder_is_refused_while_the_first_holds_it(tmp_path: Path, tiny_model_dir: Path) -> None:
    """Two runs at once would train into one night's folder and both move the pointer."""
    config = parse(base_config(tiny_model_dir), "nights.toml")
    folder = nightly_dir(config, tmp_path / "arena.db")
    folder.mkdir()
    with open(folder / ".lock", "ab") as held:  # an flock taken through another open file conflicts, as another process's
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(NightlyError, match=f"another arena nightly run is using {re.escape(str(folder))}"):
            run_night(config, db=tmp_path / "arena.db")
    assert not (tmp_path / "arena.db").exists()


def test_a_second_nightly_beside_the_first_is_refused_naming_the_folders_owner(tmp_path: Path, tiny_model_dir: Path) -> None:
    """Its night was refused as "ran already" by the other's record, and the two shared their
    policies' pointers (found by QA)."""
    first = parse(base_config(tiny_model_dir), "nights.toml")
    folder = nightly_dir(first, tmp_path / "arena.db")
    folder.mkdir()
    (folder / "owner.json").write_text(json.dumps({"name": "other", "db": str(tmp_path / "other.db")}))
    with pytest.raises(NightlyError, match=r"keeps the nights of nightly 'other' \(policies \?; store .*other\.db\); set `dir`"):
        run_night(first, db=tmp_path / "arena.db")
    assert not (tmp_path / "arena.db").exists()
    # the same name with other policies: two files copied from the example, both "nightly" (found by a QA helper)
    ours = [policy.name for policy in first.policies]
    (folder / "owner.json").write_text(json.dumps({"name": first.name, "policies": ["pd2"], "db": str(tmp_path / "a.db")}))
    with pytest.raises(NightlyError, match=rf"nightly '{first.name}' \(policies pd2; .*policies {', '.join(sorted(ours))};"):
        run_night(first, db=tmp_path / "arena.db")
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize(
    ("now", "at", "expected"),
    [
        (dt.datetime(2025, 3, 1, 1, 0), "02:30", dt.datetime(2025, 3, 1, 2, 30)),  # later today
        (dt.datetime(2025, 3, 1, 2, 30), "02:30", dt.datetime(2025, 3, 2, 2, 30)),  # just ran: tomorrow
        (dt.datetime(2025, 3, 1, 23, 59, 59), "0:00", dt.datetime(2025, 3, 2, 0, 0)),
        (dt.datetime(2024, 12, 31, 3, 0), "02:30", dt.datetime(2025, 1, 1, 2, 30)),  # a new year
        (dt.datetime(2024, 2, 28, 22, 0), "21:05", dt.datetime(2024, 2, 29, 21, 5)),  # a leap day
    ],
)
def test_the_next_run_is_the_first_such_time_after_now(now: dt.datetime, at: str, expected: dt.datetime) -> None:
    assert next_run(now, parse_at(at)) == expected


@pytest.mark.parametrize("text", ["2:3", "24:00", "12:60", "noon", "12:30:00"])
def test_a_bad_time_is_refused(text: str) -> None:
    with pytest.raises(NightlyError, match="expected HH:MM"):
        parse_at(text)


def test_the_loop_runs_every_night_at_the_time_asked() -> None:
    clock = [dt.datetime(2025, 3, 1, 23, 0)]
    ran: list[dt.datetime] = []
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += dt.timedelta(seconds=seconds)

    def night() -> int:
        ran.append(clock[0])
        clock[0] += dt.timedelta(minutes=40)  # a night takes time
        return 0

    serve_nightly(night, parse_at("02:30"), now=lambda: clock[0], sleep=sleep, nights=3)
    assert ran == [dt.datetime(2025, 3, d, 2, 30) for d in (2, 3, 4)]
    assert max(waits) <= 60


def test_a_match_that_ended_void_is_played_again_by_a_rerun_of_the_night(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nightly.toml"
    night = nightly_text(tiny_model_dir).split("[tournament]")[0]
    path.write_text(
        night + '[tournament]\nformat = "round-robin"\ngames_per_pairing = 2\n'
        f'[[tournament.games]]\nname = "{IPD}"\nconfig = {{ rounds = 3 }}\nparticipants = ["{{new:ipd}}", "{{current:ipd}}"]\n'
    )
    state = type(games.get(IPD).new({"rounds": 3}, 0))
    step = state.step
    faults: list[Any] = []

    def faulty_step(self: Any, actions: Any) -> Any:
        if not faults:
            faults.append(actions)
            raise RuntimeError("engine bug")
        return step(self, actions)

    from tournaments import runner

    real_run = runner.run_tournament

    def run_with_a_fault(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(state, "step", faulty_step)  # after training: the tournament's first move faults
        return real_run(*args, **kwargs)

    monkeypatch.setattr(runner, "run_tournament", run_with_a_fault)
    db = tmp_path / "arena.db"
    assert main(["nightly", str(path), "--db", str(db), "--json"]) == 1
    out, err = capsys.readouterr()
    first = json.loads(out)
    assert (first["tournament"]["played"], first["tournament"]["voided"]) == (1, 1)
    why = "engine fault: RuntimeError: engine bug"
    assert first["tournament"]["void_details"] == [why]
    assert f"arena: 1 void ({why}): run the same command again on the same date to play them" in err

    assert main(["nightly", str(path), "--db", str(db), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["tournament"]["played"], second["tournament"]["skipped"], second["tournament"]["voided"]) == (1, 1, 0)
    assert second["policies"]["ipd"]["training"] == first["policies"]["ipd"]["training"]  # not trained again
    assert second["finished_at"] is not None
    assert main(["nightly", str(path), "--db", str(db)]) == 2
    assert "ran already" in capsys.readouterr().err


def test_the_stored_matches_counted_for_training_leave_out_the_held_out_opponents(tmp_path: Path) -> None:
    """It said 12 matches where the trainer, rightly, took the 8 not against the held-out
    opponent (found by a QA helper)."""
    from tournaments.nightly import _stored_matches

    db = tmp_path / "arena.db"
    seed_clear_wins(db, "ipd.base", "grim", 2)
    seed_clear_wins(db, "ipd.base", "tit-for-tat", 3)
    assert _stored_matches(db, "ipd.base", IPD, None, ["grim"]) == 3
    assert _stored_matches(db, "ipd.base", None, None, []) == 5


def test_a_bad_store_and_a_folder_that_cannot_be_made_are_said_before_anything_is_written(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """A file that was no store was said only after the nightly folder was claimed for it; a
    folder that could not be made was a bare system error with status 1 (found by a QA helper)."""
    import dataclasses

    from arena.store import StoreError

    config = parse(base_config(tiny_model_dir), "nights.toml")
    (tmp_path / "notadb.db").write_text("garbage")
    with pytest.raises(StoreError):
        run_night(config, db=tmp_path / "notadb.db")
    assert not (tmp_path / "nightly").exists()
    (tmp_path / "afile").write_text("")
    blocked = dataclasses.replace(config, dir=str(tmp_path / "afile" / "nightly"))
    with pytest.raises(NightlyError, match=r"cannot write the nightly folder .*afile/nightly \(the file's `dir`\): "):
        run_night(blocked, db=tmp_path / "arena.db")


def test_a_nightly_keeps_its_folder_as_its_file_grows_and_its_store_is_made_or_migrated(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A policy added to the file locked the nightly out of its own folder, and an empty store
    file, which the night makes a store, was refused before it (found by a QA helper reviewing
    the earlier fixes)."""
    import tournaments.nightly

    reached: list[Path] = []
    monkeypatch.setattr(tournaments.nightly, "_run_night", lambda config, db, folder, *rest: reached.append(db) or {})
    config = parse(base_config(tiny_model_dir), "nights.toml")
    db = tmp_path / "arena.db"
    db.touch()  # an empty file
    folder = nightly_dir(config, db)
    folder.mkdir()
    (folder / "owner.json").write_text(json.dumps({"name": config.name, "policies": ["ipd", "kuhn"], "db": str(db)}))
    run_night(config, db=db)
    assert reached == [db] and json.loads((folder / "owner.json").read_text())["policies"] == ["ipd"]
    assert Store(db, read_only=True).schema_version() > 0
