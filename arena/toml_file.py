"""Reading the project's TOML files (tournaments, training runs, nightly plans) one way.

Every error of such a file starts with the file's name, so the reader knows which file of
several is wrong; each kind of file raises its own error class.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: str | Path, error: type[Exception]) -> dict[str, Any]:
    """The parsed document of ``path``; a missing file or bad TOML raises ``error``."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as problem:
        raise error(f"{path}: cannot read: {problem.strerror or problem}") from None
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not valid TOML: not UTF-8 text ({problem.reason} at byte {problem.start})") from None
    except tomllib.TOMLDecodeError as problem:
        raise error(f"{path}: not valid TOML: {problem}") from None
