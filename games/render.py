"""The generic view structure, so a spectator can draw any game without its code.

A view is ``{"text": str, "render": [block, ...]}``. Each block is a dict with a
``type``: ``grid`` (rows of cell strings, optional labels), ``cards`` (labelled groups
of cards, a hidden card written ``"?"``), ``chat`` (messages by seat), ``facts``
(label-value pairs such as pot or round), or ``text``. A client that meets an unknown
type shows the view's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.api import View


def number(value: float) -> str:
    """A number as a player reads it: a whole one in full (1234567, not 1.23457e+06), another
    exactly when it has a decimal form of 15 significant digits or fewer (1.0000001, not 1),
    else to six significant digits (2/3 as 0.666667), which also hides float noise (0.1 + 0.2
    as 0.3; a sum of payoffs as 61.6, which 16 digits showed as 61.60000000000001)."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    exact = f"{value:.15g}"  # 15 digits: all a double holds for certain (arena.match.settled)
    return exact if float(exact) == value else f"{value:.6g}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, plural unless one: "1 round", "3 rounds", "2 matches" (``plural``
    where an s is not enough)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def signed(value: float) -> str:
    """``number`` with its sign, + for zero and above: what a round paid."""
    return f"+{number(value)}" if value >= 0 else number(value)  # NaN has no sign either


def grid(
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "grid", "rows": [list(r) for r in rows]}
    if title:
        block["title"] = title
    if row_labels is not None:
        block["row_labels"] = list(row_labels)
    if col_labels is not None:
        block["col_labels"] = list(col_labels)
    return block


def cards(groups: Sequence[tuple[str, Sequence[str]]], *, title: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "cards", "groups": [{"label": label, "cards": list(cs)} for label, cs in groups]}
    if title:
        block["title"] = title
    return block


def chat(messages: Sequence[tuple[int, str]], *, title: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "chat", "messages": [{"seat": seat, "text": text} for seat, text in messages]}
    if title:
        block["title"] = title
    return block


def facts(items: Mapping[str, Any], *, title: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "facts", "items": [[str(k), str(v)] for k, v in items.items()]}
    if title:
        block["title"] = title
    return block


def text(body: str) -> dict[str, Any]:
    return {"type": "text", "text": body}


def view(summary: str, *blocks: dict[str, Any]) -> View:
    return {"text": summary, "render": list(blocks)}
