"""Reading an action out of a language model's free-text reply.

One helper for every game and every language-model bot (and the trainer): the action
is the content of the last ``[...]`` in the reply, so a model may think aloud first.
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


def extract_action(reply: str) -> str | None:
    """The stripped content of the last non-empty ``[...]`` in ``reply``; "" when every
    ``[...]`` is empty, since a talk step's message may be empty and ``[]`` is how a model
    sends one; None when there is no ``[...]`` at all (a format error)."""
    found = _BRACKETED.findall(reply)
    for match in reversed(found):
        content = match.strip()
        if content:
            return content
    return "" if found else None
