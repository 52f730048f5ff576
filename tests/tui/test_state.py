"""The spectator's model: parsing /watch messages, move lines, who moves, clocks, results."""

from __future__ import annotations

import pytest

import games
from tests.tui.screens import load, lobby_message
from tui.state import Board, Lobby, Malformed, MatchState, ReplayState, Result, describe_change, movers, scrub, sort_rows

TTT = {"match": "m1", "game": "tic-tac-toe", "players": ["bob", "alice"], "clock": {"move_ms": 10000, "grace_ms": 1000}}


def board(rows: list[str], text: str = "") -> dict:
    return {
        "text": text,
        "render": [
            {"type": "grid", "rows": [list(r) for r in rows], "row_labels": ["1", "2", "3"], "col_labels": ["a", "b", "c"]}
        ],
    }


def test_a_grid_change_names_the_cell() -> None:
    assert describe_change(board(["...", "...", "..."]), board(["...", ".X.", "..."]), ["bob", "alice"]) == "b2 X"


def test_new_chat_messages_are_quoted_with_the_seat_name_and_counters_are_left_out() -> None:
    before = {"text": "", "render": [{"type": "facts", "items": [["turn", "1 of 10"]]}, {"type": "chat", "messages": []}]}
    after = {
        "text": "",
        "render": [{"type": "facts", "items": [["turn", "2 of 10"]]}, {"type": "chat", "messages": [{"seat": 1, "text": "hi"}]}],
    }
    assert describe_change(before, after, ["bob", "alice"]) == 'alice: "hi"'


def test_a_fact_the_step_adds_is_said_with_the_message_sent_beside_it() -> None:
    """buyer-seller's first offer is a new fact: the log showed only the message that came with it (found by QA)."""
    game = games.get("buyer-seller").new(None, 3)
    before = game.public_view()
    game.step({0: "offer 55: That is a fair price."})
    said = describe_change(before, game.public_view(), ["frank", "gina"])
    assert said == 'offer by seat 0 (seller): 55; frank: "That is a fair price."'


def test_a_new_grid_column_reads_per_row() -> None:
    before = {"text": "", "render": [{"type": "grid", "rows": [["C"], ["D"]], "row_labels": ["seat 0", "seat 1"]}]}
    after = {"text": "", "render": [{"type": "grid", "rows": [["C", "D"], ["D", "D"]], "row_labels": ["seat 0", "seat 1"]}]}
    assert describe_change(before, after, []) == "seat 0 D; seat 1 D"


def test_without_a_visible_change_the_last_line_of_the_text_is_used() -> None:
    assert describe_change({"text": "a"}, {"text": "x\nSeat 1 to act."}, []) == "Seat 1 to act."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X (seat 0) to move.", (0,)),
        ("Round 2, seat 1 to propose.", (1,)),
        ("Round 1 of 10, move step. Score: seat 0 0, seat 1 0.", (0, 1)),
        ("Seat 0: ?, seat 1: ?. Pot: 2.", None),
    ],
)
def test_who_moves_is_read_from_the_view(text: str, expected: tuple[int, ...] | None) -> None:
    assert movers({"text": text, "render": []}, 2) == expected


def test_the_seat_to_move_counts_down_from_the_last_step_seen() -> None:
    state = MatchState("m1")
    state.apply_snapshot(
        {
            "t": "snapshot",
            **TTT,
            "status": "live",
            "step": 0,
            "started": 100.0,
            "view": board(["..."] * 3, "X (seat 0) to move."),
        },
        now=50.0,
        wall_now=102.0,
    )
    left = state.clocks(now=51.0)
    assert left[0].running and left[0].ms_left == pytest.approx(7000)  # started 2 s before, then 1 s more
    assert not left[1].running and left[1].ms_left == 10000
    state.apply_delta(
        {"t": "delta", "match": "m1", "step": 1, "view": board(["X..", "...", "..."], "O (seat 1) to move.")}, now=60.0
    )
    left = state.clocks(now=62.5)
    assert left[1].running and left[1].ms_left == pytest.approx(7500)
    assert [line.text for line in state.log] == ["a1 X"]


def test_each_seat_counts_its_bank_with_the_move_budget() -> None:
    state = MatchState("m1")
    snapshot = {
        "t": "snapshot",
        **TTT,
        "status": "live",
        "step": 0,
        "clocks": [3000, 3000],
        "view": board(["..."] * 3, "X (seat 0) to move."),
    }
    state.apply_snapshot(snapshot, now=10.0, wall_now=0.0)
    assert [c.ms_left for c in state.clocks(now=12.0)] == [pytest.approx(11000), 13000]
    after = board(["X..", "...", "..."], "O (seat 1) to move.")
    state.apply_delta({"t": "delta", "match": "m1", "step": 1, "view": after, "clocks": [1500, 3000]}, now=20.0)
    assert [c.ms_left for c in state.clocks(now=21.0)] == [11500, pytest.approx(12000)]
    with pytest.raises(Malformed):
        state.apply_delta({"t": "delta", "match": "m1", "step": 2, "view": after, "clocks": ["soon", 0]}, now=22.0)


def test_a_resent_delta_is_not_logged_twice_and_a_gap_is_said() -> None:
    state = MatchState("m1")
    state.apply_snapshot({"t": "snapshot", **TTT, "status": "live", "step": 0, "view": board(["..."] * 3)}, 0.0, 0.0)
    state.apply_delta({"t": "delta", "match": "m1", "step": 1, "view": board(["X..", "...", "..."])}, 1.0)
    state.apply_delta({"t": "delta", "match": "m1", "step": 1, "view": board(["X..", "...", "..."])}, 2.0)
    state.apply_delta({"t": "delta", "match": "m1", "step": 3, "view": board(["X..", "O..", "X.."])}, 3.0)
    assert [(line.step, line.text) for line in state.log] == [(1, "a1 X"), (3, "(steps 2-2 missed) a2 O; a3 X")]


def test_the_result_brings_the_full_view_and_stops_the_clocks() -> None:
    messages = load("matches")["kuhn-poker"]
    state = MatchState(messages[0]["match"])
    for msg in messages[:-1]:
        state.apply_snapshot(msg, 0, 0) if msg["t"] == "snapshot" else state.apply_delta(msg, 0)
    assert "?" in str(state.view)  # live: the cards are hidden
    state.apply_result(messages[-1])
    assert "?" not in str(state.view["render"][0])
    assert state.result is not None and state.result.outcome_text() == "equilibrium won"
    assert all(c.ms_left is None for c in state.clocks(5.0))


def test_the_lobby_keeps_the_results_it_heard_and_says_when_it_may_have_missed_some() -> None:
    """Each lobby lists the last 20: the list held those alone, and the matches that ended
    between them (more than 20 on a busy server) were gone from the screen, no gap shown."""

    def lobby_of(*ids: str, returns: list[float] | None = None) -> dict:
        ended = [{"match": i, "game": "nim", "players": ["a", "b"], "status": "finished", "reason": "complete"} for i in ids]
        return {"t": "lobby", "live": [], "recent": [{**e, "returns": returns} for e in ended], "waiting": []}

    lobby = Lobby()
    lobby.apply(lobby_of("b", "a"))
    assert not lobby.missed
    lobby.apply(lobby_of("c", "b", returns=[1.0, -1.0]))
    assert not lobby.missed and [r.match for r in lobby.recent] == ["c", "b", "a"]
    assert lobby.recent[1].returns == [1.0, -1.0]  # told again (a withheld result shown): the newer word
    lobby.apply(lobby_of("f", "e"))  # d ended between the two lobbies, unheard
    assert lobby.missed and [r.match for r in lobby.recent] == ["f", "e", "c", "b", "a"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"outcomes": ["draw", "draw"], "returns": [0, 0]}, "draw"),
        ({"outcomes": ["ranked"] * 3, "ranks": [2, 1, 3], "players": ["a", "b", "c"]}, "#1 b, #2 a, #3 c"),
        ({"outcomes": ["win", "forfeit"], "forfeit_seat": 1, "reason": "timeout"}, "a won; b forfeited (timeout)"),
        ({"status": "void", "reason": "void", "detail": "aborted"}, "void: aborted"),
        ({"reason": None, "withheld": True}, "held while its deal is played at another table"),
    ],
)
def test_outcomes_read_as_words(fields: dict, expected: str) -> None:
    base = {"match_id": "m", "game": "g", "players": ["a", "b"], "status": "finished", "reason": "complete"}
    assert Result.parse(base | fields).outcome_text() == expected


def test_the_lobby_merges_recent_and_stored_results() -> None:
    lobby = Lobby()
    lobby.apply(lobby_message())
    stored = Result.parse(
        {"id": "old", "game": "nim", "players": ["a", "b"], "status": "finished", "reason": "complete"}, stored=True
    )
    lobby.stored = [stored, Result.parse({**lobby_message()["recent"][0], "status": "finished"}, stored=True)]
    assert [r.match for r in lobby.results()][-1] == "old"
    assert len(lobby.results()) == len(lobby.recent) + 1
    assert "public-goods" in lobby.games()


@pytest.mark.parametrize(
    "msg",
    [
        {"t": "lobby", "live": "x", "recent": []},
        {"t": "lobby", "live": [{"match": 1, "game": "g", "players": []}], "recent": []},
        {"t": "lobby", "live": [], "recent": [{"game": "g"}]},
    ],
)
def test_a_malformed_lobby_is_refused_with_a_reason(msg: dict) -> None:
    with pytest.raises(Malformed):
        Lobby().apply(msg)


def test_a_replay_logs_the_actions_of_its_turn_records() -> None:
    replay = ReplayState.parse(load("replay"))
    assert replay.last == len(replay.views) - 1
    assert [line.text for line in replay.log()[:2]] == ["(the start)", "perfect-bot: c1"]
    replay.go(99)
    assert replay.index == replay.last
    replay.go(-5)
    assert replay.index == 0


def test_leaderboards_sort_with_missing_values_last() -> None:
    game = Board.parse(load("leaderboards")["tic-tac-toe"])
    rows = game.variant_rows()
    assert [r["bot"] for r in sort_rows(rows, "mu", True)] == ["perfect-bot", "minimax", "random-bot"]
    assert [r["bot"] for r in sort_rows(rows, "bot", False)] == ["minimax", "perfect-bot", "random-bot"]
    assert sort_rows([{"x": None}, {"x": 2}, {"x": 1}], "x", True) == [{"x": 2}, {"x": 1}, {"x": None}]
    overall = Board.parse(load("leaderboards")["overall"])
    assert overall.game is None and {r["bot"] for r in overall.bots} >= {"equilibrium", "random-bot"}


def test_a_bot_not_rated_yet_shows_no_trueskill_and_sorts_last() -> None:
    """Its numbers are the prior's: all such bots read as tied at 25.00."""
    rows = [
        {"bot": "new", "rated": False, "mu": 25.0, "sigma": 8.33, "conservative": 0.0},
        {"bot": "old", "rated": True, "mu": 20.0, "sigma": 2.0, "conservative": 14.0},
    ]
    shown = Board.parse({"t": "leaderboard", "game": "coordination", "variants": {"coordination": rows}}).variant_rows()
    assert [(r["bot"], r["mu"]) for r in sort_rows(shown, "mu", True)] == [("old", 20.0), ("new", None)]


def test_control_characters_from_bots_are_made_visible() -> None:
    msg = {"t": "delta", "view": {"render": [{"type": "chat", "messages": [{"seat": 0, "text": "hi\x1b[2J\x07 there\n"}]}]}}
    assert scrub(msg)["view"]["render"][0]["messages"][0]["text"] == "hi\ufffd[2J\ufffd there\n"


def test_a_bidirectional_override_from_a_bot_is_made_visible() -> None:
    """A right-to-left override would show 'I accept' as its mirror image, or hide a reversed
    phrase inside an innocent one: the spectator shows the character instead of obeying it."""
    text = "offer 3 \u202e5 tpecca I\u202c, \u2067isolated\u2069"
    assert scrub(text) == "offer 3 \ufffd5 tpecca I\ufffd, \ufffdisolated\ufffd"


def test_a_grid_and_chat_showing_their_latest_rounds_say_only_the_new_round() -> None:
    """An iterated game's view shows its latest rounds: matched by place, every cell of the
    moving grid read as changed, and the chat's dropped first message hid the new one."""

    def view(first: int, moves: list[str], talk: list[str]) -> dict:
        labels = [str(first + i) for i in range(len(moves))]
        grid = {"type": "grid", "rows": [moves], "row_labels": ["seat 0"], "col_labels": labels}
        chat = {"type": "chat", "messages": [{"seat": 0, "text": text} for text in talk]}
        return {"text": "", "render": [grid, chat]}

    before = view(1, ["C", "D", "C"], ["one", "two", "three"])
    after = view(2, ["D", "C", "D"], ["two", "three", "four"])
    assert describe_change(before, after, ["bob"]) == 'seat 0 D; bob: "four"'


def test_a_grid_whose_rows_are_its_latest_rounds_says_only_the_new_round() -> None:
    """Lewis signalling's view lists its latest rounds as rows: matched by place, every row
    of the moving grid read as changed."""

    def view(first: int, acts: list[str]) -> dict:
        rows = [[act, "match"] for act in acts]
        labels = [str(first + i) for i in range(len(acts))]
        grid = {"type": "grid", "rows": rows, "row_labels": labels, "col_labels": ["act", "result"]}
        return {"text": "", "render": [grid]}

    assert describe_change(view(1, ["1", "2", "3"]), view(2, ["2", "3", "1"]), ["bob"]) == "4: 1 match"
