"""The modules of docs/examples, loaded as a plugin's package would be imported."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def example_module(name: str) -> ModuleType:
    """``docs/examples/NAME.py`` as a module (kept in sys.modules, where dataclasses look themselves up)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
