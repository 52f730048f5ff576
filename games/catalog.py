"""The game catalog as markdown (and as data for the server's ``/api/games``), built from
the registered specs so the docs cannot drift.

Pure: it only builds strings and plain data. Everything it says comes from a game's spec, its config
dataclass and its initial state. Sections that need other packages (the bots that can
play a game) come from the caller as extra ``(heading, markdown)`` pairs, because games
import nothing from the rest of the project.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any

from games.api import CATEGORIES, Game, GameSpec
from games.registry import all_games
from games.render import number

Extra = Callable[[type[Game]], Sequence[tuple[str, str]]]
"""Extra sections for a game's entry: (heading, markdown body) pairs."""

REGENERATE = "arena games --doc all > docs/GAMES.md"
MAX_LISTED_ACTIONS = 120
"""A fixed action space up to this size is listed in full; a larger one is summarised."""
_SPECIAL = re.compile(r"([\\`*_<>\[\]|&])")
_LIST_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)(.*)$")


def escape(text: str) -> str:
    """Text shown as written: markdown's inline syntax characters are escaped."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return "\\" + escaped if escaped.startswith("#") else escaped


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def prose(text: str) -> str:
    """Plain text as markdown: each line its own paragraph, runs of list items kept as lists."""
    blocks: list[str] = []
    previous_was_item = False
    for line in text.splitlines():
        if not line.strip():
            previous_was_item = False
            continue
        item = _LIST_ITEM.match(line)
        rendered = item.group(1) + escape(item.group(2)) if item else escape(line)
        if item and previous_was_item:
            blocks[-1] += "\n" + rendered
        else:
            blocks.append(rendered)
        previous_was_item = item is not None
    return "\n\n".join(blocks)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def code(text: str) -> str:
    return f"`{text}`" if text else "(empty)"


def players_text(spec: GameSpec) -> str:
    default = spec.default_config.players
    if spec.min_players == spec.max_players:
        return str(default)
    return f"{spec.min_players} to {spec.max_players} (default {default})"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def type_label(expected: Any) -> str:
    """A config field's type in words, as it is written after ``--config key=``."""
    if typing.get_origin(expected) is tuple:
        return f"comma-separated list of {type_label(typing.get_args(expected)[0])}s"
    words = {int: "integer", float: "number", bool: "boolean", str: "text"}
    return words.get(expected, getattr(expected, "__name__", str(expected)))


def value_text(value: Any) -> str:
    """A config value as it is written on the command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, tuple):
        return ",".join(value_text(v) for v in value)
    return str(value)


def _facts(spec: GameSpec) -> str:
    low, high = spec.default_config.return_bounds()
    rows = [
        ("category", spec.category),
        ("players", players_text(spec)),
        ("moves", "simultaneous (every mover chooses at once)" if spec.simultaneous else "in turn"),
        ("chance", _yes(spec.chance)),
        ("hidden information", _yes(spec.hidden_information)),
        ("free-text actions", _free_text(spec)),
        ("zero-sum", _yes(spec.zero_sum)),
        ("teams", "all seats share one return" if spec.teams == "all" else "none: every seat plays for itself"),
        ("returns", f"{number(low)} to {number(high)} per seat (default config)"),
    ]
    return table(("", ""), rows)


def _free_text(spec: GameSpec) -> str:
    """Whether the default config's actions are text; a game with a cheap-talk switch says what
    turning it over does, and one that lists its actions up to ``max_listed`` that a config
    with more takes them as text (a PettingZoo user met it as a refusal)."""
    default = spec.default_config
    talk = getattr(default, "cheap_talk", None)
    notes = [] if talk is None else [f"`cheap_talk={'false' if talk else 'true'}` makes it {_yes(not talk)}"]
    if not spec.free_text and hasattr(default, "max_listed"):
        notes.append("so does a config with more possible actions than `max_listed`")
    return _yes(spec.free_text) + (f" ({'; '.join(notes)})" if notes else "")


def _config_fields(game: type[Game]) -> list[tuple[str, Any, Any]]:
    """(key, type, default value) of each config key."""
    default = game.spec.default_config
    hints = typing.get_type_hints(type(default))
    return [(f.name, hints[f.name], getattr(default, f.name)) for f in dataclasses.fields(default)]


def _config(game: type[Game]) -> str:
    rows = [(code(key), type_label(kind), code(value_text(value))) for key, kind, value in _config_fields(game)]
    return table(("key", "type", "default"), rows) + "\n\nSet a key with `--config key=value` (`arena play`)."


def wire_type(expected: Any) -> str:
    """A config field's type in the wire protocol's words (PROTOCOL.md's notation)."""
    if typing.get_origin(expected) is tuple:
        return f"list of {wire_type(typing.get_args(expected)[0])}"
    words = {int: "int", float: "number", bool: "bool", str: "string"}
    return words.get(expected, getattr(expected, "__name__", str(expected)))


def game_entry(game: type[Game]) -> dict[str, Any]:
    """One game as data, for a client in any language: its spec, its rules as a player
    reads them, the config keys a seek may set, and this catalog's entry in markdown."""
    return {
        **game.spec.to_dict(),
        "rules": game.spec.rules,
        "config": [
            {"key": key, "type": wire_type(kind), "default": list(value) if isinstance(value, tuple) else value}
            for key, kind, value in _config_fields(game)
        ],
        "doc": game_doc(game),
    }


def _actions(game: type[Game]) -> str:
    space = game.spec.action_space
    if space is not None:
        shown = space if len(space) <= MAX_LISTED_ACTIONS else space[: MAX_LISTED_ACTIONS // 2]
        listed = ", ".join(code(action) for action in shown)
        more = "" if len(shown) == len(space) else f", … and {len(space) - len(shown)} more"
        return (
            f"A fixed set of {len(space)} actions under the default config (the observation lists those legal "
            f"at each turn): {listed}{more}."
        )
    state = game.new()
    seat = state.to_move()[0]
    kind = "free-form: text in the format the rules give" if state.legal_actions(seat) is None else "listed at each turn"
    return (
        f"No fixed action space; the actions are {kind}. For example, the first mover of a match with seed 0 is asked for: "
        f"{escape(state.action_format(seat))}."
    )


def _observation(game: type[Game]) -> str:
    """A first turn's structured observation, one key a line: the fields a script in any
    language reads, which the wire protocol leaves to each game."""
    state = game.new()
    data = state.observe(state.to_move()[0]).data
    body = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in data.items())
    return (
        "A seat is shown its `text` (for a language model) and its `data` (for a script) at every turn. "
        "The data of the first mover of a match with seed 0:\n\n"
        f"```json\n{{\n{body}\n}}\n```"
    )


def game_doc(game: type[Game], extra: Sequence[tuple[str, str]] = ()) -> str:
    """One game's section of the catalog, with any extra (heading, body) sections at the end."""
    spec = game.spec
    parts = [
        f"## {escape(spec.title)}",
        f"{code(spec.name)}: {escape(spec.description)}",
        _facts(spec),
        "### Rules",
        prose(spec.rules),
        "### Config",
        _config(game),
        "### Actions",
        _actions(game),
        "### Observation",
        _observation(game),
    ]
    for heading, body in extra:
        parts += [f"### {heading}", body]
    return "\n\n".join(parts) + "\n"


def contents(catalog: Sequence[type[Game]]) -> str:
    """The table of contents: one table per category, in the order of CATEGORIES."""
    parts = []
    for category in CATEGORIES:
        members = [game for game in catalog if game.spec.category == category]
        if not members:
            continue
        rows = [
            (
                f"[{escape(g.spec.title)}](#{anchor(g.spec.title)})",
                code(g.spec.name),
                players_text(g.spec),
                "simultaneous" if g.spec.simultaneous else "in turn",
                escape(g.spec.description),
            )
            for g in members
        ]
        title = category.replace("_", " ").capitalize()
        parts += [f"### {title} ({len(members)})", table(("game", "name", "players", "moves", "description"), rows)]
    return "\n\n".join(parts)


def ordered(catalog: Sequence[type[Game]]) -> list[type[Game]]:
    """Games in catalog order: by category (as in CATEGORIES), then by name."""
    return sorted(catalog, key=lambda g: (CATEGORIES.index(g.spec.category), g.spec.name))


def catalog_doc(extra: Extra | None = None, catalog: Sequence[type[Game]] | None = None) -> str:
    """The whole catalog page: an introduction, the contents, then a section per game."""
    games_in_order = ordered(all_games() if catalog is None else catalog)
    header = [
        "# Games",
        f"<!-- Generated from the game registry by `{REGENERATE}`; do not edit by hand. -->",
        (
            f"{len(games_in_order)} games. Each entry says what kind of game it is, its rules as a player "
            "(or a language model) reads them, the config keys a match can set, and its actions. "
            "`arena games` lists them; `arena games --doc NAME` prints one entry."
        ),
        "## Contents",
        contents(games_in_order),
    ]
    sections = [game_doc(game, extra(game) if extra else ()) for game in games_in_order]
    return "\n\n".join(header) + "\n\n" + "\n".join(sections)
