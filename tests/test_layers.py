"""The layering table of ARCHITECTURE.md, enforced by parsing every import with ast.

A package may only import what its row allows; the composition root (arena/cli.py) may
import anything, but only inside a function, so `arena serve` never loads torch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("games", "arena", "bots", "tournaments", "trainer", "tui")
FORBIDDEN = {
    "games": ("arena", "bots", "tournaments", "trainer", "tui", "trio", "torch", "transformers", "textual", "websockets"),
    "arena": ("bots", "tournaments", "trainer", "tui", "torch", "transformers", "textual"),
    "bots": ("arena.server", "arena.store", "arena.lobby", "tournaments", "trainer", "tui", "torch", "transformers"),
    "trainer": ("tui", "arena.server"),
    "tournaments": ("tui",),
    "tui": ("trio", "torch", "transformers", "websockets.trio", "games", "bots", "trainer", "tournaments"),
}
ONLY_INSIDE_FUNCTIONS = {"tournaments": ("trainer", "torch", "transformers")}
TUI_MAY_USE_FROM_ARENA = ("arena.protocol",)
COMPOSITION_ROOT = "arena/cli.py"
ROOT_ONLY_INSIDE_FUNCTIONS = ("games", "bots", "tournaments", "trainer", "tui", "torch", "transformers", "textual")


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def _matches(name: str, prefixes: tuple[str, ...]) -> list[str]:
    return [p for p in prefixes if name == p or name.startswith(p + ".")]


def violations(root: Path) -> list[str]:
    """Every import under ``root`` that breaks the table, as 'path:line: why'."""
    found: list[str] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), rel)
            in_function = {
                id(inner)
                for fn in ast.walk(tree)
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                for inner in ast.walk(fn)
                if inner is not fn
            }
            for node in ast.walk(tree):
                lazy = id(node) in in_function
                for name in _names(node):
                    where = f"{rel}:{node.lineno}"
                    if rel == COMPOSITION_ROOT:
                        if not lazy and _matches(name, ROOT_ONLY_INSIDE_FUNCTIONS):
                            found.append(f"{where}: the composition root imports {name} at module level")
                        continue
                    if (
                        package == "tui"
                        and _matches(name, ("arena",))
                        and name != "arena"
                        and not _matches(name, TUI_MAY_USE_FROM_ARENA)
                    ):
                        found.append(f"{where}: tui imports {name} (only arena.protocol)")
                    found += [f"{where}: {package} imports {name}" for _ in _matches(name, FORBIDDEN[package])]
                    if not lazy:
                        found += [
                            f"{where}: {package} imports {name} at module level"
                            for _ in _matches(name, ONLY_INSIDE_FUNCTIONS.get(package, ()))
                        ]
    return found


def test_the_project_keeps_the_layering_table() -> None:
    assert violations(ROOT) == []


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("games/bad.py", "import trio\n", "games imports trio"),
        ("games/bad.py", "from arena.match import play_match\n", "games imports arena.match"),
        ("arena/bad.py", "from bots.registry import make_bot\n", "arena imports bots.registry"),
        ("bots/bad.py", "import arena.store\n", "bots imports arena.store"),
        ("tui/bad.py", "from arena.match import play_match\n", "tui imports arena.match (only arena.protocol)"),
        ("tournaments/bad.py", "import trainer.policy\n", "tournaments imports trainer.policy at module level"),
        ("arena/cli.py", "import torch\n", "the composition root imports torch at module level"),
    ],
)
def test_a_planted_violation_is_reported(tmp_path: Path, path: str, source: str, expected: str) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True)
    target.write_text(source)
    assert any(expected in line for line in violations(tmp_path)), violations(tmp_path)


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("arena/cli.py", "def serve():\n    import torch\n"),
        ("tournaments/run.py", "def train():\n    import trainer.policy\n"),
        ("tui/app.py", "from arena.protocol import decode\n"),
        ("bots/client.py", "from arena.seats import Turn\n"),
    ],
)
def test_allowed_imports_pass(tmp_path: Path, path: str, source: str) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True)
    target.write_text(source)
    assert violations(tmp_path) == []
