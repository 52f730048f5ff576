"""Reading an action out of a language model's free-text reply.

One helper for every game and every language-model bot (and the trainer): the action
is the content of the last ``[...]`` in the reply, so a model may think aloud first.
"""

from __future__ import annotations


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
    """The stripped content of the last non-empty ``[...]`` in ``reply``, less brackets that
    wrap all of it (``[[defect]]`` plays ``defect``); "" when every ``[...]`` is empty, since
    a talk step's message may be empty and ``[]`` is how a model sends one; None when there
    is no ``[...]`` at all (a format error)."""
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
        if low < high:
            return reply[low:high]
    return "" if groups else None
