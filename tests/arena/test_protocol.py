"""The wire's pure helpers, without a server: what ``check_encodable`` lets through."""

from __future__ import annotations

import enum
from typing import Any

import msgpack
import pytest

from arena import protocol as p


class Seat(enum.IntEnum):
    FIRST = 0


class Label(str):
    pass


def both_encodings_carry(value: Any) -> bool:
    """The definition ``check_encodable`` must agree with: each encoding, asked whole."""
    try:
        msgpack.packb(value, use_bin_type=True)
        p.encode(value, False)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


@pytest.mark.parametrize(
    "value",
    [
        {"text": "x", "data": {"board": [[0, 1], [2, 0]], "mark": "X", "done": False, "score": 1.5, "note": None}},
        {"cards": ("Kh", "Qs"), 3: "an int key", 2.5: "a float key", True: "a bool key", None: "a null key"},
        {"raw": b"\xff\x00"},
        {"logprob": float("-inf"), "nan": float("nan")},
        {Seat.FIRST: Seat.FIRST, "label": Label("kept")},  # subclasses: both encoders judge them
        {"deep": [{"deeper": [{(1, 2): "a tuple key, far down"}]}]},
        {"bytes": [bytearray(b"x")]},
        {"huge": [1, {"n": 2**64}]},
        {"thing": (object(),)},
        {"set": {1, 2}},
    ],
)
def test_check_encodable_refuses_exactly_what_one_encoding_refuses(value: Any) -> None:
    carried = both_encodings_carry(value)
    try:
        p.check_encodable(value)
    except (TypeError, ValueError, OverflowError):
        assert not carried
    else:
        assert carried
