"""Tournament files: the quickstart loads; every error names the file, the key and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

import tournaments
from tournaments.config import TournamentConfigError, load, schedule_id
from tournaments.runner import remembered_deals

QUICKSTART = Path(tournaments.__file__).parent / "quickstart.toml"

GOOD = """
name = "cup"
format = "round-robin"
[[games]]
name = "tic-tac-toe"
participants = ["perfect", "random"]
"""


def test_quickstart_loads_three_games_of_built_in_bots() -> None:
    config = load(QUICKSTART)
    assert config.name == "quickstart" and [g.name for g in config.games] == [
        "tic-tac-toe",
        "kuhn-poker",
        "iterated-prisoners-dilemma",
    ]


@pytest.mark.parametrize(
    ("old", "new", "key", "what"),
    [
        ('name = "tic-tac-toe"', 'name = "tic-tac-to"', "games[0].name", "unknown game 'tic-tac-to'"),
        ('"perfect"', '"perfekt"', "games[0].participants[0]", "unknown bot 'perfekt'"),
        ('name = "cup"\n', "", "name", "missing"),
        ('format = "round-robin"', "format = 3", "format", "must be a string, got int 3"),
        ('format = "round-robin"', 'format = "knockout"', "format", "unknown format 'knockout'"),
        ('format = "round-robin"', 'format = "round-robin"\ngames_per_pairing = "two"', "games_per_pairing", "an integer"),
        (
            'format = "round-robin"',
            'format = "round-robin"\ngames_per_pairing = 99999999999999999999',
            "games_per_pairing",
            "must be at most 10,000",
        ),
        ('format = "round-robin"', 'format = "round-robin"\nplayers = 2', "players", "unknown key"),
        ('participants = ["perfect", "random"]', 'participants = ["perfect"]', "games[0].participants", "at least 2"),
        ('name = "tic-tac-toe"', 'name = "tic-tac-toe"\nconfig = { size = 9 }', "games[0].config", "size"),
        # the second part of its matches' keys: "" was not the key's, "ipd/rr" met another label's keys
        ('name = "tic-tac-toe"', 'name = "tic-tac-toe"\nlabel = ""', "games[0].label", "not blank, without '/', got ''"),
        ('name = "tic-tac-toe"', 'name = "tic-tac-toe"\nlabel = "t/rr"', "games[0].label", "without '/', got 't/rr'"),
        # a blank name, or one with a line break, broke the summary line and every key (found by a QA helper)
        ('name = "cup"', 'name = "  "', "name", "a name of printable characters, not blank, without '/', got '  '"),
        ('name = "cup"', 'name = "a\\nb"', "name", "not blank, without '/', got 'a\\nb'"),
        ('"perfect"', '"remote:Bad Name"', "games[0].participants[0]", "bad remote bot name 'Bad Name'"),
        ('"perfect"', '"human"', "games[0].participants[0]", "'human' plays at a terminal (arena play), not in a tournament"),
        ('"perfect"', '"random"', "games[0].participants", "'random' is listed twice"),
        ('"perfect"', '"random:"', "games[0].participants", "'random' is listed twice (also as 'random:')"),
        ('name = "cup"\n', 'name = "cup"\nparticipants = ["perfect", " perfect"]\n', "participants", "(also as 'perfect')"),
        ('name = "cup"', 'name = "cup"\nheld_out_games = ["nim"]', "held_out_games[0]", "'nim' is not a game label"),
        ('name = "cup"', 'name = "cup"\nheld_out_games = "tic-tac-toe"', "held_out_games", "must be a list of game labels"),
        (
            '[[games]]\nname = "tic-tac-toe"',
            'held_out_games = ["b"]\n[[games]]\nname = "tic-tac-toe"\nlabel = "b"\nparticipants = ["random", "perfect"]\n'
            '[[games]]\nname = "tic-tac-toe"',
            "held_out_games",
            "'b' plays the same game and config as 'tic-tac-toe', which is not held out",
        ),
        ('name = "cup"', 'name = "cup"\nheld_out_opponents = ["randum"]', "held_out_opponents[0]", "'randum' is not a"),
        ('name = "cup"', 'name = "cup"\nheld_out_opponents = ["perfect", "random"]', "held_out_opponents", "every participant"),
        ('name = "cup"', 'name = "cup"\nclock = { move_ms = 1.5 }', "clock.move_ms", "must be an integer, got float 1.5"),
        # it said "clock: clock needs move_ms > 0 ..., got Clock(move_ms=0, grace_ms=1000, bank_ms=0)"
        (
            'name = "cup"',
            'name = "cup"\nclock = { move_ms = 0 }',
            "clock.move_ms",
            "must be from 1 to 2,592,000,000 ms (30 days), got 0",
        ),
        ('name = "cup"', 'name = "cup"\nclock = { bank_ms = -1 }', "clock.bank_ms", "must be from 0 to 2,592,000,000 ms"),
        ('name = "cup"', 'name = "cup"\nfailure = { max_retries = 101 }', "failure.max_retries", "from 0 to 100, got 101"),
        ('name = "cup"', 'name = "cup"\nchallenger = "perfect"', "challenger", "only a gauntlet has a challenger"),
        (
            'format = "round-robin"\n[[games]]\nname = "tic-tac-toe"\nparticipants = ["perfect", "random"]',
            'format = "duplicate"\n[[games]]\nname = "coordination"\nparticipants = ["focal-point", "random"]',
            "games[0].participants",
            "coordination is cooperative: a duplicate rates the teams that played one deal against each other, and 2",
        ),
        ('name = "cup"', 'name = "cup"\nrounds = 3', "rounds", "a round-robin of two-seat games has no rounds to set"),
        ('name = "cup"', 'name = "cup"\ndeals = "new"', "deals", "must be one of shared, fresh, got 'new'"),
        ('format = "round-robin"', 'format = "duplicate"\ndeals = "fresh"', "deals", "a duplicate plays every pairing on the"),
        (
            'format = "round-robin"\n[[games]]\nname = "tic-tac-toe"\nparticipants = ["perfect", "random"]',
            'format = "tables"\ndeals = "fresh"\nrounds = 1\n[[games]]\nname = "coordination"\n'
            'participants = ["random", "focal-point"]',
            "deals",
            "no game here is played in pairs",
        ),
    ],
)
def test_a_bad_config_names_the_file_the_key_and_the_fault(tmp_path: Path, old: str, new: str, key: str, what: str) -> None:
    path = tmp_path / "cup.toml"
    assert old in GOOD
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(TournamentConfigError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {key}: ") and what in message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('format = "round-robin"', 'format = "gauntlet"\nchallenger = "perfect"'),
        ('format = "round-robin"', 'format = "swiss"\nrounds = 1'),
        (
            'format = "round-robin"\n[[games]]\nname = "tic-tac-toe"\nparticipants = ["perfect", "random"]',
            'format = "tables"\nrounds = 3\n[[games]]\nname = "lewis-signalling"\nparticipants = ["lewis-convention", "random"]',
        ),
        (
            'format = "round-robin"',
            'format = "round-robin"\nrounds = 3\n[[games]]\nname = "pig"\nconfig = { players = 3 }\n'
            'participants = ["random", "pig-hold-at", "pig-hold-at:threshold=10"]',
        ),
    ],
)
def test_challenger_and_rounds_are_read_where_the_format_uses_them(tmp_path: Path, old: str, new: str) -> None:
    """Rounds also set how many rotations a game of three seats or more plays at tables, whatever the format."""
    path = tmp_path / "cup.toml"
    path.write_text(GOOD.replace(old, new, 1))
    assert load(path).name == "cup"


def test_remote_participants_and_held_out_keys_are_read(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    head = 'name = "cup"\nheld_out_games = ["tic-tac-toe"]\nheld_out_opponents = ["random"]\n'
    path.write_text(GOOD.replace('"random"]', '"random", "remote:alice"]').replace('name = "cup"\n', head))
    config = load(path)
    assert config.remote == ("remote:alice",) and config.participants == ("perfect", "random", "remote:alice")
    assert config.held_out_games == ("tic-tac-toe",) and config.held_out_opponents == ("random",)


FILE = """
name = "cup"
format = "FORMAT"
[[games]]
name = "GAME"
participants = PEOPLE
"""
HANABI3 = 'hanabi"\nconfig = { players = 3 }\nlabel = "hanabi'


@pytest.mark.parametrize(
    ("fmt", "extra", "game", "people", "warned"),
    [
        ("round-robin", "", "kuhn-poker", ["random", "remote:alice"], True),
        ("round-robin", "games_per_pairing = 3", "kuhn-poker", ["random", "remote:alice"], True),
        ("round-robin", 'deals = "fresh"', "kuhn-poker", ["random", "remote:alice"], False),
        ("round-robin", "games_per_pairing = 1", "kuhn-poker", ["random", "remote:alice"], False),
        ("round-robin", "", "kuhn-poker", ["random", "equilibrium"], False),  # made afresh for every match
        ("round-robin", "", "tic-tac-toe", ["random", "remote:alice"], False),  # no chance
        ("round-robin", "", "pig", ["random", "remote:alice"], True),  # nothing hidden, but the dice come again
        ("round-robin", "", "goofspiel", ["random", "remote:alice"], True),  # the order of the prizes
        ("swiss", "", "leduc-holdem", ["random", "remote:alice"], True),
        ("swiss", "games_per_pairing = 1", "leduc-holdem", ["random", "remote:alice"], False),
        ("gauntlet", 'challenger = "remote:alice"', "leduc-holdem", ["random", "remote:alice"], True),
        ("duplicate", "", "kuhn-poker", ["random", "remote:alice", "equilibrium"], True),
        ("duplicate", "", "mini-hanabi", ["random", "remote:alice", "hanabi-heuristic"], True),
        (
            "round-robin",
            "rounds = 1",
            HANABI3,
            ["random", "remote:alice", "hanabi-heuristic", "remote:bob"],
            False,
        ),  # a deal a table
        (
            "duplicate",
            "rounds = 1",
            HANABI3,
            ["random", "remote:alice", "hanabi-heuristic", "remote:bob"],
            True,
        ),  # alice fills table 2
        ("duplicate", "rounds = 1", HANABI3, ["remote:alice", "random", "hanabi-heuristic", "remote:bob"], True),
        (
            "duplicate",
            "rounds = 1",
            HANABI3,
            ["random", "hanabi-heuristic", "remote:carol", "remote:bob"],
            False,
        ),  # no remote bot twice
    ],
)
def test_games_in_which_a_remote_bot_plays_a_deal_twice_are_named(
    tmp_path: Path, fmt: str, extra: str, game: str, people: list[str], warned: bool
) -> None:
    """Its own cards of a pair's first game are its opponent's in the second, and a chance game
    deals its dice again (found by QA); read off the schedule itself."""
    path = tmp_path / "cup.toml"
    text = FILE.replace("FORMAT", fmt).replace("GAME", game).replace("PEOPLE", repr(people).replace("'", '"'))
    path.write_text(text.replace('name = "cup"', f'name = "cup"\n{extra}'))
    label = game.split('"')[0]
    assert [found for found, _ in remembered_deals(load(path))] == ([label] if warned else [])


@pytest.mark.parametrize(
    ("fmt", "game", "people", "instead"),
    [
        ("round-robin", "kuhn-poker", ["random", "remote:alice"], 'deals = "fresh" deals each game of a pair apart'),
        ("duplicate", "kuhn-poker", ["random", "remote:alice", "equilibrium"], 'a round-robin with deals = "fresh" does not'),
        ("duplicate", HANABI3, ["random", "remote:alice", "hanabi-heuristic", "remote:bob"], "list a multiple of 3"),
    ],
)
def test_the_warning_names_a_remedy_the_format_takes(
    tmp_path: Path, fmt: str, game: str, people: list[str], instead: str
) -> None:
    """It told a duplicate to set deals = "fresh", which a duplicate refuses."""
    path = tmp_path / "cup.toml"
    path.write_text(FILE.replace("FORMAT", fmt).replace("GAME", game).replace("PEOPLE", repr(people).replace("'", '"')))
    [(_, said)] = remembered_deals(load(path))
    assert instead in said


def test_fresh_deals_are_part_of_the_schedule_and_shared_ones_keep_the_digest_made_before_the_key(tmp_path: Path) -> None:
    """A store's tournament begun before ``deals`` existed must rerun from the same file."""
    path = tmp_path / "cup.toml"
    path.write_text(GOOD)
    assert schedule_id(load(path)) == "1d9dd94e912e3b9e"  # the digest of this file before the key
    path.write_text(GOOD.replace('name = "cup"', 'name = "cup"\ndeals = "shared"'))
    assert schedule_id(load(path)) == "1d9dd94e912e3b9e"
    path.write_text(GOOD.replace('name = "cup"', 'name = "cup"\ndeals = "fresh"'))
    assert load(path).deals == "fresh" and schedule_id(load(path)) != "1d9dd94e912e3b9e"


def test_not_toml_is_reported_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("name = ")
    with pytest.raises(TournamentConfigError, match=r"broken\.toml: not valid TOML"):
        load(path)


@pytest.mark.parametrize(
    ("game", "participants"),
    [('name = "pig"\nconfig = { players = 3 }', '["random", "pig-hold-at"]'), ('name = "tic-tac-toe"', '["perfect"]')],
)
def test_a_table_needs_a_participant_for_every_seat(tmp_path: Path, game: str, participants: str) -> None:
    """Else one bot sits in two seats of a table: self-play, which rates nobody."""
    path = tmp_path / "cup.toml"
    path.write_text(
        GOOD.replace('format = "round-robin"', 'format = "tables"')
        .replace('name = "tic-tac-toe"', game)
        .replace('["perfect", "random"]', participants)
    )
    with pytest.raises(TournamentConfigError, match=r"cup\.toml: games\[0\]\.participants: .*at least \d participants"):
        load(path)


def test_a_two_seat_game_of_opponents_at_rotating_tables_is_refused_for_round_robin(tmp_path: Path) -> None:
    """Rotating by one seat a round, each participant met only its neighbours, always in one
    seat order: tit-for-tat never met grim, and the same player moved first every time (found by QA)."""
    path = tmp_path / "cup.toml"
    path.write_text(GOOD.replace('format = "round-robin"', 'format = "tables"'))
    said = r"cup\.toml: format: tic-tac-toe is a two-seat game: .* round-robin or swiss"
    with pytest.raises(TournamentConfigError, match=said):
        load(path)


@pytest.mark.parametrize("content", [None, b"\xff\xfe name"])
def test_a_directory_or_a_file_not_in_utf8_is_reported_with_the_file(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "cup.toml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(TournamentConfigError, match=r"cup\.toml: "):
        load(path)


def test_a_file_that_schedules_too_many_matches_is_refused_before_any_is_built(tmp_path: Path) -> None:
    """Each count has its cap, their product had none: 4.35 million matches took 3.6 GB of
    memory before the first was played."""
    field = '["tit-for-tat", "always-defect", "always-cooperate", "random", "win-stay-lose-shift", "grim"]'
    entry = 'name = "iterated-prisoners-dilemma"\nlabel = "{label}"\nparticipants = ' + field
    path = tmp_path / "big.toml"
    path.write_text(
        'name = "big"\nformat = "round-robin"\ngames_per_pairing = 10000\n'
        + "".join(f"[[games]]\n{entry.format(label=label)}\n" for label in ("a", "b"))
    )
    with pytest.raises(TournamentConfigError, match=r"games: schedule 300,000 matches or so, more than the 200,000"):
        load(path)
    path.write_text(path.read_text().replace("games_per_pairing = 10000", "games_per_pairing = 6000"))
    assert len(load(path).games) == 2  # 180,000
