"""The one helper that reads an action out of a language model's reply."""

from __future__ import annotations

import pytest

from bots.parsing import extract_action
from games.registry import get


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("I think the centre is best. [b2]", "b2"),
        ("First [a1]? No, better [ c3 ] ", "c3"),
        ("[propose 1 2 0: I need the hats]", "propose 1 2 0: I need the hats"),
        ("thinking [] then [bet] and []", "bet"),
        ("no brackets at all", None),
        ("unclosed [b2", None),
    ],
)
def test_the_action_is_the_last_non_empty_bracketed_text(reply: str, action: str | None) -> None:
    assert extract_action(reply) == action


@pytest.mark.parametrize("reply", ["I will stay silent: []", "[   ]", "nothing to say [ ] [\n]"])
def test_only_empty_brackets_are_the_empty_action_a_talk_step_accepts(reply: str) -> None:
    action = extract_action(reply)
    assert action == ""
    state = get("iterated-prisoners-dilemma").new({"cheap_talk": True}, 0)
    assert "it may be empty" in state.action_format(0)
    assert state.validate(0, action) == ""


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("[offer 50: that is my [final] price]", "offer 50: that is my [final] price"),
        ("Deal? [propose 1 2 0: you said [hats] matter]", "propose 1 2 0: you said [hats] matter"),
        ("[[defect]]", "defect"),
        ("First [a1? then [b2]", "b2"),
        ("[offer 50: fine] and a stray ]", "offer 50: fine"),
    ],
)
def test_a_message_may_hold_brackets_of_its_own(reply: str, action: str) -> None:
    assert extract_action(reply) == action


def test_a_proposal_whose_message_holds_brackets_is_played_whole() -> None:
    state = get("buyer-seller").new(None, 0)
    action = extract_action("My answer: [offer 60: my [final] offer]")
    assert action is not None and state.validate(0, action).startswith("offer 60")


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("[ 'offer 50: your message' ]", "offer 50: your message"),
        ('["defect"]', "defect"),
        ("[`b2`]", "b2"),
        ("[**defect**]", "defect"),
        ("[offer 50: 'final']", "offer 50: 'final'"),
        ("['hi' and 'bye']", "'hi' and 'bye'"),
        ("[']", "'"),
    ],
)
def test_quotes_or_emphasis_around_the_whole_action_are_not_part_of_it(reply: str, action: str) -> None:
    """The action formats quote their examples ('offer 50: your message'), so a model may too."""
    assert extract_action(reply) == action


def test_a_quoted_action_is_legal() -> None:
    state = get("buyer-seller").new(None, 0)
    action = extract_action("I copy the example: ['offer 50: your message']")
    assert action is not None and state.validate(0, action) == "offer 50: your message"
