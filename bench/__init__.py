"""Benchmarks that print JSON; the flag types below make a bad value a usage error (status 2)
before any work starts, rather than a traceback minutes in, a hang or a report of zeros."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator

from arena.cli import POSITIVE as positive_int


def positive_ints(text: str) -> list[int]:
    """A comma-separated list of positive whole numbers (``200,1000``)."""
    return [positive_int(part.strip()) for part in text.split(",")]


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def game_name(text: str) -> str:
    """A registered game's name; a typo is refused with the registry's suggestion."""
    import games  # here, not at the top: bench.server's worker processes start without the catalog
    from games.registry import UnknownGame

    try:
        games.get(text)
    except UnknownGame as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def game_names(text: str) -> list[str]:
    """Comma-separated game names; empty means every registered game."""
    return [game_name(part.strip()) for part in text.split(",") if part.strip()]


@contextlib.contextmanager
def quiet_interrupt(name: str, *also: type[Exception], cleaned: bool = False) -> Iterator[None]:
    """Ctrl-C (and ``also``, what a bench turns SIGTERM into) ends the run with one line and
    status 130, not a traceback; ``except*`` because trio raises it inside an exception group."""
    try:
        yield
    except* (KeyboardInterrupt, *also):
        print(f"{name}: interrupted{'; every process it started is stopped' if cleaned else ''}", file=sys.stderr)
        sys.exit(130)
