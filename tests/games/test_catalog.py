"""The markdown catalog is built from the specs: every fact, key and action of a game
appears in its entry, written so that markdown shows it as the game states it."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

import games
from games import catalog
from games.api import CATEGORIES
from games.tic_tac_toe import TicTacToe, TicTacToeConfig


def test_an_entry_carries_the_specs_facts_config_and_actions() -> None:
    doc = catalog.game_doc(games.get("iterated-prisoners-dilemma"))
    assert doc.startswith("## Iterated prisoner's dilemma\n\n`iterated-prisoners-dilemma`: Cooperate or defect")
    assert "| category | social_dilemma |" in doc
    assert "| moves | simultaneous (every mover chooses at once) |" in doc
    assert "| zero-sum | no |" in doc and "| returns | 0 to 50 per seat (default config) |" in doc
    assert "| `rounds` | integer | `10` |" in doc
    assert "| `temptation` | number | `5` |" in doc and "| `cheap_talk` | boolean | `false` |" in doc
    assert "A fixed set of 2 actions" in doc and "`cooperate`, `defect`." in doc
    assert 'Answer "cooperate" or "defect"' in doc


def test_player_ranges_list_types_and_every_config_key_appear() -> None:
    for game in games.all():
        doc = catalog.game_doc(game)
        assert f"| players | {catalog.players_text(game.spec)} |" in doc
        for field in dataclasses.fields(game.spec.default_config):
            assert f"| `{field.name}` |" in doc
    assert catalog.type_label(tuple[int, ...]) == "comma-separated list of integers"
    assert catalog.value_text((3, 4, 5)) == "3,4,5" and catalog.value_text(2.5) == "2.5" and catalog.value_text(True) == "true"


def test_a_free_form_game_shows_the_format_it_asks_for() -> None:
    doc = catalog.game_doc(games.get("item-negotiation"))
    assert "No fixed action space; the actions are free-form" in doc
    assert "'propose \\<books\\> \\<hats\\> \\<balls\\>'" in doc


@dataclasses.dataclass(frozen=True)
class WideConfig(TicTacToeConfig):
    def action_space(self) -> tuple[str, ...]:
        return tuple(f"move {i}" for i in range(500))


class Wide(TicTacToe):
    spec = dataclasses.replace(TicTacToe.spec, name="wide", title="Wide", default_config=WideConfig())
    Config = WideConfig


def test_every_entry_shows_a_first_turns_structured_observation_as_json() -> None:
    """A bot in another language reads ``observation.data``, which the protocol leaves to each
    game: without its fields shown, a script had to reverse-engineer them from live turns (found by QA)."""
    for game in games.all():
        doc = catalog.game_doc(game)
        [shown] = re.findall(r"### Observation\n\n.*?```json\n(.*?)\n```", doc, re.DOTALL)
        state = game.new()
        assert json.loads(shown) == state.observe(state.to_move()[0]).data, game.spec.name


def test_a_large_action_space_is_summarised_and_extra_sections_follow() -> None:
    doc = catalog.game_doc(Wide, [("Bots", "none yet")])
    assert "A fixed set of 500 actions" in doc and "`move 59`, … and 440 more." in doc and "`move 60`" not in doc
    assert doc.endswith("### Bots\n\nnone yet\n")


def test_markdown_syntax_in_rules_is_escaped_and_lists_stay_lists() -> None:
    assert catalog.escape("take <n> from *heap* | a_b") == "take \\<n\\> from \\*heap\\* \\| a\\_b"
    assert catalog.escape("# not a heading") == "\\# not a heading"
    text = "Intro line.\nOn your turn:\n- play <slot>\n- discard\nAfter that, draw.\n\nEnd."
    assert catalog.prose(text) == "Intro line.\n\nOn your turn:\n\n- play \\<slot\\>\n- discard\n\nAfter that, draw.\n\nEnd."


@pytest.mark.parametrize(
    ("heading", "fragment"),
    [
        ("Iterated prisoner's dilemma", "iterated-prisoners-dilemma"),
        ("Connect Four", "connect-four"),
        ("Tic-tac-toe", "tic-tac-toe"),
    ],
)
def test_anchors_are_githubs_heading_fragments(heading: str, fragment: str) -> None:
    assert catalog.anchor(heading) == fragment


def test_the_page_links_every_game_to_its_section_in_category_order() -> None:
    page = catalog.catalog_doc()
    headings = re.findall(r"^## (.+)$", page, flags=re.MULTILINE)
    links = re.findall(r"\]\(#([^)]+)\)", page)
    entries = [catalog.anchor(h.replace("\\", "")) for h in headings if h != "Contents"]
    assert sorted(links) == sorted(entries) and len(entries) == len(games.names())
    assert links == entries, "the contents and the sections list the games in the same order"
    order = [CATEGORIES.index(game.spec.category) for game in catalog.ordered(games.all())]
    assert order == sorted(order)
    assert f"{len(games.names())} games." in page and catalog.REGENERATE in page


def test_extra_sections_come_from_the_caller_for_every_game() -> None:
    page = catalog.catalog_doc(lambda game: [("Seen", game.spec.name.upper())], [games.get("nim"), games.get("tic-tac-toe")])
    assert "### Seen\n\nNIM\n" in page and "### Seen\n\nTIC-TAC-TOE\n" in page
    assert "2 games." in page
