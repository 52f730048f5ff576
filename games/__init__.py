"""Pure, deterministic game rules, found by name through one registry.

``games.get("tic-tac-toe")`` gives the game class; ``games.all()`` every registered one.
Third-party packages add games through the ``arena.games`` entry-point group, each
entry naming a ``Game`` subclass.
"""

from __future__ import annotations

from games.registry import all_games as all
from games.registry import get, names

__all__ = ["all", "get", "names"]
