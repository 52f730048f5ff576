"""How games write numbers for players: exact where a short form exists."""

from __future__ import annotations

import pytest

import games
from games.render import count, number, signed


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (1234567.0, "1234567"),  # :g said 1.23457e+06
        (1000001, "1000001"),  # :g said 1e+06, as for 1000000
        (1.0000001, "1.0000001"),  # :g said 1
        (2.5, "2.5"),
        (-0.0, "0"),
        (2 / 3, "0.666667"),
        (0.1 + 0.2, "0.3"),
        (1e20, "100000000000000000000"),
        (1000000000000001.0, "1000000000000001"),  # 1e+15 for 1e15 too
        (10**400, "1" + "0" * 400),  # an int too large for a float
        (1.00000000001, "1.00000000001"),
        (1e22, "1e+22"),
        (61.60000000000001, "61.6"),  # a sum of payoffs, shown in public goods' view (found by a QA helper)
        (53.90909090909091, "53.9091"),
    ],
)
def test_a_number_is_written_exactly_when_it_has_a_short_form(value: float, said: str) -> None:
    assert number(value) == said


def test_signed_numbers_carry_plus_from_zero_up() -> None:
    assert [signed(x) for x in (3.0, 0.0, -0.0, -2.5, float("nan"))] == ["+3", "+0", "+0", "-2.5", "nan"]


def test_payoffs_and_scores_that_differ_in_the_seventh_digit_read_apart() -> None:
    """Six significant digits showed hare_stag 1000001 and hare_hare 1000000 both as 1e+06,
    hiding the order the rules rest on, and a score of 1234567 as 1.23457e+06 (found by QA)."""
    config = {"stag_stag": 1234567, "hare_stag": 1000001, "hare_hare": 1000000, "rounds": 2}
    state = games.get("iterated-stag-hunt").new(config, 0)
    text = state.observe(0).text
    assert "1000001" in text and "1000000" in text and "e+06" not in text
    state.step({0: "stag", 1: "stag"})
    assert "Score so far: you 1234567, them 1234567." in state.observe(0).text
    goods = games.get("public-goods").new({"multiplier": 1.0000001, "players": 2}, 0)
    assert "the pot is multiplied by 1.0000001 " in goods.observe(0).text


def test_a_game_of_one_round_ends_after_1_round() -> None:
    """It said "Game over after 1 rounds" (found by QA)."""
    commons = games.get("commons-harvest").new({"players": 2, "stock": 5}, 0)
    commons.step({0: "5", 1: "5"})
    ultimatum = games.get("iterated-ultimatum").new({"rounds": 1}, 0)
    ultimatum.step({0: "offer 5"})
    ultimatum.step({1: "accept"})
    assert commons.public_view()["text"].startswith("Game over after 1 round: the stock collapsed.")
    assert ultimatum.public_view()["text"].startswith("Game over after 1 round.")
    assert count(3, "round") == "3 rounds"


def test_count_takes_an_irregular_plural() -> None:
    """arena export said "wrote 1 turns of 1 matches"."""
    assert count(1, "match", "matches") == "1 match"
    assert count(2, "match", "matches") == "2 matches"
    assert count(0, "turn") == "0 turns"
