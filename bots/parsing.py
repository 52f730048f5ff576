"""Reading an action out of a language model's free-text reply.

One helper for every game and every language-model bot (and the trainer): the action
is the content of the last ``[...]`` in the reply, so a model may think aloud first.
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


def extract_action(reply: str) -> str | None:
    """The stripped content of the last non-empty ``[...]`` in ``reply``, or None."""
    for match in reversed(_BRACKETED.findall(reply)):
        content = match.strip()
        if content:
            return content
    return None
