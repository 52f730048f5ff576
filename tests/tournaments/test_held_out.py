"""Held-out evaluation: the held-out games' leaderboards and the results against held-out
opponents are reported apart from the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main
from tournaments.config import parse
from tournaments.runner import Finished, held_out_opponents, split_held_out

IPD = "iterated-prisoners-dilemma"
RPS = "iterated-rock-paper-scissors"


def config(**held: list[str]):  # type: ignore[no-untyped-def]
    return parse(
        {
            "name": "cup",
            "format": "round-robin",
            "games": [
                {"name": IPD, "participants": ["tit-for-tat", "always-defect", "random"]},
                {"name": RPS, "participants": ["rps-cycle", "random"]},
            ],
            **held,
        }
    )


def test_each_participant_is_scored_against_the_held_out_opponents_beside_the_rest() -> None:
    finished = [
        Finished(IPD, ("tit-for-tat", "random"), (3.0, 5.0)),
        Finished(IPD, ("random", "tit-for-tat"), (1.0, 1.0)),
        Finished(IPD, ("tit-for-tat", "always-defect"), (9.0, 14.0)),
        Finished(IPD, ("always-defect", "random"), (10.0, 0.0)),
        Finished(RPS, ("rps-cycle", "random"), (2.0, -2.0)),
    ]
    rows = held_out_opponents(config(held_out_opponents=["random"]), finished)
    assert [(r["game"], r["participant"]) for r in rows] == [(IPD, "tit-for-tat"), (IPD, "always-defect"), (RPS, "rps-cycle")]
    tft, defector, cycle = rows
    assert (tft["held_out_matches"], tft["held_out_mean_return"], tft["other_matches"], tft["other_mean_return"]) == (
        2,
        2.0,
        1,
        9.0,
    )
    assert (defector["held_out_mean_return"], defector["other_mean_return"]) == (10.0, 14.0)
    assert (cycle["held_out_matches"], cycle["other_matches"], cycle["other_mean_return"]) == (1, 0, None)
    assert held_out_opponents(config(), finished) == []


def test_held_out_games_are_split_from_the_leaderboards() -> None:
    boards = {IPD: [{"bot": "grim"}], RPS: [{"bot": "rps-cycle"}]}
    assert split_held_out(config(held_out_games=[RPS]), boards) == ({IPD: boards[IPD]}, {RPS: boards[RPS]})
    assert split_held_out(config(), boards) == (boards, {})


def test_the_cli_prints_held_out_games_and_opponents_in_sections_of_their_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "cup.toml"
    path.write_text(
        'name = "cup"\nformat = "round-robin"\ngames_per_pairing = 2\n'
        f'held_out_games = ["{RPS}"]\nheld_out_opponents = ["random"]\n'
        f'[[games]]\nname = "{IPD}"\nparticipants = ["tit-for-tat", "always-defect", "random"]\n'
        f'[[games]]\nname = "{RPS}"\nparticipants = ["rps-cycle", "random"]\n'
    )
    db = str(tmp_path / "arena.db")
    assert main(["tournament", "run", str(path), "--db", db]) == 0
    out = capsys.readouterr().out
    main_part, held = out.split(f"\nheld-out game: {RPS}\n")
    held_game, held_opponents = held.split("\nheld-out opponents (random)")
    assert f"\n{IPD}\n" in main_part and RPS not in main_part
    assert "rps-cycle" in held_game
    table = held_opponents.splitlines()[1:]
    assert table[0].split() == ["game", "participant", "vs", "held-out", "mean", "return", "vs", "the", "rest", "mean", "return"]
    assert [line.split()[:3] for line in table[2:]] == [
        [IPD, "tit-for-tat", "2"],
        [IPD, "always-defect", "2"],
        [RPS, "rps-cycle", "2"],
    ]

    assert main(["tournament", "run", str(path), "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == 8 and set(report["leaderboards"]) == {IPD} and set(report["held_out"]["games"]) == {RPS}
    assert [r["participant"] for r in report["held_out"]["opponents"]] == ["tit-for-tat", "always-defect", "rps-cycle"]
