"""Reading an action out of a language model's free-text reply.

One helper for every game and every language-model bot (and the trainer): the action
is the content of the last ``[...]`` in the reply, so a model may think aloud first.
"""

from __future__ import annotations

_WRAPPERS = (("**", "**"), ("`", "`"), ('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"))
"""Quotes and emphasis a model may put around a whole action: the action formats quote
their examples ('offer 50: your message'), and models echo that."""


def _unquoted(content: str) -> str:
    """``content`` less quotes or emphasis wrapping all of it; a quote found inside too
    (``'hi' and 'bye'``) means the quotes are the text's own, and they stay."""
    unwrapped = True
    while unwrapped:
        unwrapped = False
        for opening, closing in _WRAPPERS:
            inner = content[len(opening) : -len(closing)]
            if (
                len(content) > len(opening) + len(closing)
                and content.startswith(opening)
                and content.endswith(closing)
                and opening not in inner
                and closing not in inner
            ):
                content, unwrapped = inner.strip(), True
    return content


def _groups(reply: str) -> list[tuple[int, int]]:
    """The (``[``, ``]``) positions of each balanced ``[...]`` in the order it closes, so an
    enclosing group comes after the groups inside it: a message that holds brackets of its
    own stays whole. A ``]`` with nothing open and a ``[`` never closed are left out."""
    opened: list[int] = []
    groups: list[tuple[int, int]] = []
    for index, char in enumerate(reply):
        if char == "[":
            opened.append(index)
        elif char == "]" and opened:
            groups.append((opened.pop(), index))
    return groups


def extract_action(reply: str) -> str | None:
    """The stripped content of the last non-empty ``[...]`` in ``reply``, less brackets, quotes
    or emphasis that wrap all of it (``[[defect]]`` and ``['defect']`` play ``defect``); ""
    when every ``[...]`` is empty, since a talk step's message may be empty and ``[]`` is how
    a model sends one; None when there is no ``[...]`` at all (a format error)."""
    groups = _groups(reply)
    closing = dict(groups)
    for start, end in reversed(groups):
        low, high = start + 1, end
        while True:
            while low < high and reply[low].isspace():
                low += 1
            while low < high and reply[high - 1].isspace():
                high -= 1
            if low == high or reply[low] != "[" or closing.get(low) != high - 1:
                break
            low, high = low + 1, high - 1
        content = _unquoted(reply[low:high])
        if content:
            return content
    return "" if groups else None
