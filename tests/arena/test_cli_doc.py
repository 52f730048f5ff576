"""`arena games --doc`: the catalog entry of one game, or the whole page of docs/GAMES.md."""

from __future__ import annotations

import pytest

from arena.cli import main
from bots.catalog import catalog_doc, game_doc


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_doc_prints_one_games_entry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games", "--doc", "tic-tac-toe")
    assert code == 0 and out == game_doc("tic-tac-toe")
    assert out.startswith("## Tic-tac-toe\n") and "### Bots" in out


def test_doc_all_prints_the_page_that_regenerates_docs_games_md(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games", "--doc", "all")
    assert code == 0 and out == catalog_doc()


def test_doc_of_an_unknown_game_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "games", "--doc", "tic-tac-to")
    assert code == 2 and out == ""
    assert err == "arena: error: unknown game 'tic-tac-to'; did you mean 'tic-tac-toe'?\n"


def test_doc_and_json_cannot_be_combined(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["games", "--doc", "nim", "--json"])
    assert exit_info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
