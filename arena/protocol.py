"""The wire protocol: message shapes, versions, error and close codes.

The one contract every client shares (bots in any language, the SDK, the spectator
TUI), documented for humans in docs/PROTOCOL.md. Every message is a map with a type
``t`` and the protocol version ``v``; msgpack travels in binary frames, JSON in text
frames, and the server answers in the encoding it was spoken to.

This module is pure: it encodes, decodes and checks shapes. It imports nothing of the
arena's, so the TUI can use it without pulling in trio or the games.
"""

from __future__ import annotations

import json
import math
import re
import urllib.request
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import msgpack
from websockets.exceptions import InvalidStatus

PROTOCOL_VERSION = 1

_OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # the last two: bidi overrides


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with what a terminal obeys rather than shows (control characters, C1 codes,
    bidirectional overrides) as U+FFFD; tabs and newlines stay, unless ``one_line``. The wire
    carries any text, and what a player wrote (a chat line, an illegal action quoted back, a
    resignation's reason) must not move the cursor, clear the screen, retitle or recolour the
    terminal of a client that shows it, show its words in another order, or, inside a line of
    its own, forge the next lines of the output."""
    shown = _OBEYED.sub("\ufffd", text)
    return shown.replace("\n", "\ufffd").replace("\t", "\ufffd") if one_line else shown


# ---- close codes (websocket close frames) ----------------------------------------------

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001  # the server shuts down
CLOSE_POLICY = 1008  # repeated abuse: flooding, endless bad frames
CLOSE_TOO_BIG = 1009  # a frame over the hard cap (the websocket layer closes)
CLOSE_INTERNAL = 1011  # a fault of the server's, such as a store it cannot read
CLOSE_TRY_AGAIN = 1013  # the server holds as many connections as it may, or too many tries to log in failed
CLOSE_AUTH_FAILED = 4001  # unknown bot or wrong token
CLOSE_SUPERSEDED = 4002  # another connection logged in with the same token
CLOSE_BAD_VERSION = 4003  # a protocol version this server does not speak
CLOSE_NO_HELLO = 4004  # the first message was not a hello, or it came too late

# ---- addresses ---------------------------------------------------------------------------

BOT_PATH, WATCH_PATH = "/bot", "/watch"


def endpoint(url: str, path: str) -> str:
    """The websocket address of ``path`` on a server given by its base URL (``ws://host:port``,
    with the prefix of a reverse proxy if any) or by one endpoint's address, the form
    PROTOCOL.md gives bots (``ws://host:port/bot``): clients take either. A query (a proxy may
    route or admit by it) stays on the address; a fragment, which a websocket URI may not
    carry (RFC 6455), is dropped."""
    parts = urlsplit(url)
    base = parts.path.rstrip("/")
    for known in (BOT_PATH, WATCH_PATH):
        if base.endswith(known):
            base = base.removesuffix(known)
            break
    return parts._replace(path=base + path, fragment="").geturl()


def http_base(url: str) -> str:
    """The plain-HTTP address (``/health``, ``/api/...``) of the server at a websocket URL:
    ws becomes http, wss https. ValueError, saying "bad server URL", for any other URL or one
    no connection can be made to (a port out of range or not a number, a broken IPv6 host)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port out of range or not a number)
    except ValueError as error:
        raise ValueError(f"bad server URL {url!r}: {error}") from None
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme)
    if parts.scheme in ("http", "https") and parts.hostname:
        said = parts._replace(scheme="ws" if parts.scheme == "http" else "wss").geturl()
        raise ValueError(f"bad server URL {url!r}: its clients speak websocket: give {said}")
    if scheme is None or not parts.hostname:
        raise ValueError(f"bad server URL {url!r}: give its base URL, ws://host:port")
    return scheme + endpoint(parts._replace(query="").geturl(), "").removeprefix(parts.scheme)


def get_json(url: str, path: str, timeout: float) -> Any:
    """``GET`` the JSON at ``path`` of the server at websocket URL ``url``. Blocking: call it in
    a thread. Raises what urllib raises (HTTPError for a 404 and such, URLError unreachable)."""
    request = urllib.request.Request(f"{http_base(url)}{path}", headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def server_full_wait(error: BaseException) -> float | None:
    """For a client whose handshake failed: the seconds a full server asked it to wait (its
    ``503 server_full`` and ``Retry-After``, section 15), or None when that was not the cause."""
    if not isinstance(error, InvalidStatus) or error.response.status_code != HTTPStatus.SERVICE_UNAVAILABLE:
        return None
    try:
        return max(0.0, float(error.response.headers.get("Retry-After", "")))
    except ValueError:  # absent, or an HTTP date (a proxy's): the client's backoff alone paces it
        return 0.0


# ---- error codes (the `code` of an `error` message) ------------------------------------

BAD_FRAME = "bad_frame"  # not msgpack / JSON, or not a map
BAD_MESSAGE = "bad_message"  # a field missing or of the wrong type
UNKNOWN_TYPE = "unknown_type"
TOO_LARGE = "too_large"  # over the soft size cap
RATE_LIMITED = "rate_limited"  # with retry_after (seconds)
NOT_ADMIN = "not_admin"
NOT_YOUR_MATCH = "not_your_match"  # a move or resign for a match/seat this bot does not hold
STALE_MOVE = "stale_move"  # a move for a step or attempt that is no longer asked: ignored
UNKNOWN_BOT = "unknown_bot"
UNKNOWN_GAME = "unknown_game"
UNKNOWN_MATCH = "unknown_match"
BAD_CONFIG = "bad_config"
BOT_EXISTS = "bot_exists"
BOT_OFFLINE = "bot_offline"
BUSY = "busy"  # the bot already plays as many matches as it may
NOT_SEEKING = "not_seeking"  # a challenged bot has no waiting seek for that game and config
READ_ONLY = "read_only"
STORE_UNAVAILABLE = "store_unavailable"  # the store cannot be read: removed, locked, or from a newer arena
COMPUTING = "computing"  # a leaderboard still being computed: ask again after retry_after
SERVER_FULL = "server_full"  # HTTP 503 to a websocket handshake (never an `error` message): too many connections

ERROR_CODES = (
    BAD_FRAME,
    BAD_MESSAGE,
    UNKNOWN_TYPE,
    TOO_LARGE,
    RATE_LIMITED,
    NOT_ADMIN,
    NOT_YOUR_MATCH,
    STALE_MOVE,
    UNKNOWN_BOT,
    UNKNOWN_GAME,
    UNKNOWN_MATCH,
    BAD_CONFIG,
    BOT_EXISTS,
    BOT_OFFLINE,
    BUSY,
    NOT_SEEKING,
    READ_ONLY,
    STORE_UNAVAILABLE,
    COMPUTING,
)


class ProtocolError(Exception):
    """A message that cannot be accepted; ``code`` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after  # seconds, where asking again later is the answer


# ---- what clients may send -------------------------------------------------------------

_NUMBER = (int, float)

# type -> {field: (accepted python types, required)}
BOT_MESSAGES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "hello": {
        "bot": ((str,), True),
        "token": ((str,), True),
        "resume": ((dict,), False),
        "acks": ((bool,), False),
        "max_matches": ((int,), False),
    },
    "seek": {"games": ((list,), True), "config": ((dict,), False), "self_play": ((bool,), False), "standing": ((bool,), False)},
    "cancel": {"games": ((list,), False)},
    "challenge": {"bot": ((str,), True), "game": ((str,), True), "config": ((dict,), False)},
    "move": {
        "match": ((str,), True),
        "seat": ((int,), True),
        "step": ((int,), True),
        "attempt": ((int,), True),
        "action": ((str, type(None)), False),
        "format_error": ((bool,), False),
        "raw": ((str,), False),
        "prompt": ((str,), False),
        "tokens_in": ((int,), False),
        "tokens_out": ((int,), False),
        "cost": ((int, float, type(None)), False),  # null: JSON's spelling of a cost that is not finite
        "logprobs": ((list,), False),
    },
    "resign": {"match": ((str,), True), "detail": ((str,), False)},
    "ping": {},
    # admin messages: only from a session that said hello with the admin token
    "register": {"name": ((str,), True), "owner": ((str,), False)},
    "rotate": {"name": ((str,), True), "owner": ((str,), False)},
    "create_match": {
        "bots": ((list,), True),
        "game": ((str,), True),
        "config": ((dict,), False),
        "seed": ((int,), False),
        "clock": ((dict,), False),
        "max_retries": ((int,), False),
        "tournament": ((str,), False),
        "round": ((int,), False),
        "group": ((str,), False),
        "group_size": ((int,), False),
        "key": ((str,), False),
    },
    "abort_match": {"match": ((str,), True), "reason": ((str,), False)},
    "seed_salt": {"tournament": ((str,), True), "schedule": ((str,), False), "configs": ((dict,), False)},
}
# maps inside a message, checked like the message itself: type -> {field: its fields}
NESTED_MAPS: dict[str, dict[str, dict[str, tuple[tuple[type, ...], bool]]]] = {
    "hello": {"resume": {"session": ((str,), True), "last_seq": ((int,), True)}},
}
ADMIN_TYPES = frozenset({"register", "rotate", "create_match", "abort_match", "seed_salt"})

WATCH_MESSAGES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "watch": {"match": ((str,), True)},
    "unwatch": {"match": ((str,), True)},
    "replay": {"match": ((str,), True)},
    "lobby": {"game": ((str, type(None)), False)},
    "leaderboard": {"game": ((str,), False)},
    "admin": {"token": ((str,), True)},
    "ping": {},
}


def encode(message: Mapping[str, Any], binary: bool) -> bytes | str:
    """One frame: msgpack bytes for binary frames, JSON text otherwise."""
    if binary:
        return msgpack.packb(message, use_bin_type=True)
    return dumps(message, separators=(",", ":"), default=_json_default)


MAX_TOKENS = 10**9
"""The most tokens a move may say its call read or wrote: no model's context comes near, and
the leaderboards sum them over every turn of a game."""

MAX_LOGPROBS = 16_384
"""The most log-probs one move may carry: more than a frame under the soft cap holds as
floats (9 bytes each in msgpack, 5 as float32), so only a list of tiny integers (1 byte each)
reaches it, which the server would hold as 8-byte numbers until the match ends."""


def move_values(move: Mapping[str, Any]) -> tuple[int | None, int | None, list[float] | None]:
    """A ``move``'s token counts and log-probs, checked past their types (``check``): counts
    in range, log-probs numbers. The server refuses a move that fails with ``bad_message``;
    the SDK asks first, so that its policy's mistake is said, not left to the clock."""
    counts = [move.get(key) for key in ("tokens_in", "tokens_out")]
    for key, count in zip(("tokens_in", "tokens_out"), counts, strict=True):
        if count is not None and not 0 <= count <= MAX_TOKENS:
            raise ProtocolError(BAD_MESSAGE, f"'move.{key}' must be from 0 to {MAX_TOKENS:,}, got {count}")
    values = move.get("logprobs")
    if values is None:
        return counts[0], counts[1], None
    if len(values) > MAX_LOGPROBS:
        raise ProtocolError(BAD_MESSAGE, f"'move.logprobs' holds at most {MAX_LOGPROBS:,} numbers, got {len(values):,}")
    if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
        raise ProtocolError(BAD_MESSAGE, "'move.logprobs' must be a list of numbers (null for -inf)")
    try:
        # null is how JSON writes -inf (the log-probability of a token the model ruled out):
        # a JSON client's encoder, ours included, turns it into null
        return counts[0], counts[1], [-math.inf if v is None else float(v) for v in values]
    except OverflowError:  # an integer beyond any float
        raise ProtocolError(BAD_MESSAGE, "'move.logprobs' holds a number too large for a float") from None


def check_encodable(value: Any) -> None:
    """Raise (TypeError, ValueError, OverflowError) unless both encodings carry ``value``: a
    client may switch encodings at any message, and msgpack holds no integer beyond 64 bits,
    which JSON does."""
    msgpack.packb(value, use_bin_type=True)
    _check_json(value)


_JSON_KEYS = frozenset((str, int, float, bool, type(None)))
_JSON_VALUES = _JSON_KEYS | {bytes}  # bytes as ``_json_default`` writes them


def _check_json(value: Any) -> None:
    """JSON's half of ``check_encodable``, for a value msgpack took: walked here, and handed to
    the encoder only where a type is not one of the plain ones. The server checks every turn's
    observation, and ``json.dumps`` spends twice msgpack's whole time setting up for a small one."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) not in _JSON_KEYS:
                encode({key: None}, False)
            if type(item) not in _JSON_KEYS:  # a plain value needs no call of its own
                _check_json(item)
    elif kind is list or kind is tuple:
        for item in value:
            if type(item) not in _JSON_KEYS:
                _check_json(item)
    elif kind not in _JSON_VALUES:
        encode(value, False)


def dumps(value: Any, **options: Any) -> str:
    """JSON text that any parser reads: a number that is not finite (a logprob of -inf, an
    infinite cost) becomes null, as in JavaScript, instead of the NaN or Infinity that
    Python writes and browsers, jq and most JSON libraries refuse."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:  # only when a number is not finite: the common case costs nothing more
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


class Prepared:
    """A message encoded ahead of its sending (``prepare``) but for its ``seq``, appended when
    it is sent: it can then be made off the event loop while the client's other messages
    go out, numbered in the order they are sent."""

    def __init__(self, head: bytes | str) -> None:
        self.head = head  # the message less its seq and, in JSON, its closing brace

    def framed(self, seq: int) -> bytes | str:
        if isinstance(self.head, str):
            return f'{self.head},"seq":{seq}}}'
        return self.head + msgpack.packb("seq") + msgpack.packb(seq)


def prepare(message: Mapping[str, Any], binary: bool) -> Prepared:
    """``message`` encoded as ``encode`` does, with a list value encoded item by item.

    For a message of megabytes (a long match's replay), run in a worker thread: one call of
    the C encoders holds the GIL throughout, so encoding it whole, even in a thread, stops
    the event loop for as long; between items the loop gets its turn."""
    if binary:
        packer = msgpack.Packer(use_bin_type=True)
        parts = [packer.pack_map_header(len(message) + 1)]  # + 1: the seq, appended last
        for key, value in message.items():
            parts.append(packer.pack(key))
            if isinstance(value, list):
                parts.append(packer.pack_array_header(len(value)))
                parts += [packer.pack(item) for item in value]
            else:
                parts.append(packer.pack(value))
        return Prepared(b"".join(parts))
    return Prepared(json_in_pieces(message)[:-1])


def json_in_pieces(value: Mapping[str, Any]) -> str:
    """The JSON of a map as ``encode`` writes it, a list value item by item (``prepare``)."""
    fields = []
    for key, item in value.items():
        text = "[" + ",".join(map(_json, item)) + "]" if isinstance(item, list) else _json(item)
        fields.append(f"{_json(key)}:{text}")
    return "{" + ",".join(fields) + "}"


def _json(value: Any) -> str:
    text = encode(value, False)
    assert isinstance(text, str)
    return text


class Encoder:
    """``encode`` for one connection, keeping one msgpack packer: ``packb`` builds a new packer
    on every call, which costs about as much as packing a small message. Not thread-safe."""

    def __init__(self) -> None:
        self._packer = msgpack.Packer(use_bin_type=True)

    def __call__(self, message: Mapping[str, Any] | bytes | str, binary: bool) -> bytes | str:
        if isinstance(message, (bytes, str)):  # a frame made ahead (``Prepared.framed``)
            return message
        if binary:
            return self._packer.pack(message)
        return encode(message, binary)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(frame: bytes | str) -> dict[str, Any]:
    """A frame's message, or ProtocolError(BAD_FRAME) when it is not a map."""
    try:
        if isinstance(frame, bytes):
            message = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        else:
            message = json.loads(frame, parse_constant=_not_json, parse_float=_finite_float)
    except _BeyondDouble as error:
        raise ProtocolError(BAD_FRAME, f"the frame's JSON holds a number beyond a double's range: {error}") from None
    except Exception:  # malformed input raises many types (ValueError, TypeError, msgpack's own)
        kind = "msgpack" if isinstance(frame, bytes) else "JSON"
        raise ProtocolError(BAD_FRAME, f"the frame is not valid {kind}") from None
    if not isinstance(message, dict):
        raise ProtocolError(BAD_FRAME, f"a message must be a map, got {wire_name(message)}")
    # a move, the one frequent message, has no nested field that is walked (log-probs are checked flat)
    if message.get("t") != "move" and _nests_deeper(message, MAX_NESTING):
        raise ProtocolError(BAD_FRAME, f"a message nests at most {MAX_NESTING} maps and lists deep")
    if isinstance(frame, str) and "\\u" in frame and not _is_text(message):
        raise ProtocolError(BAD_FRAME, "the frame's JSON escapes a lone surrogate (\\ud800-\\udfff), which is not text")
    return message


MAX_NESTING = 32
"""Maps and lists in one another, the message itself counted: no message needs more than a few
(a config's list of numbers is three deep). Deeper, a seek's config of a thousand levels
passed msgpack and broke the server's checks on Python's recursion limit: each was answered
as the server's own failure, with its traceback logged (8 MB a second from one bot)."""


def _nests_deeper(message: Mapping[str, Any], most: int) -> bool:
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, (dict, list)):
                if depth == most:
                    return True
                stack.append((child, depth + 1))
    return False


def _not_json(literal: str) -> Any:
    """Python reads NaN, Infinity and -Infinity; JSON has no such literals."""
    raise ValueError(f"{literal} is not JSON")


class _BeyondDouble(ValueError):
    """A JSON number too large for a double, which Python would read as infinity."""


def _finite_float(text: str) -> float:
    """A JSON number as Python reads it, but 1e999 is refused: read as infinity, it was a
    value JSON has no word for (a cost, a log-prob of +inf) slipped past the strict reading."""
    value = float(text)
    if math.isinf(value):
        raise _BeyondDouble(text[:40])
    return value


def _is_text(message: Any) -> bool:
    """False when a string holds a lone surrogate: JSON can escape one, but UTF-8 (msgpack,
    SQLite) cannot carry it, so it would fail later, when the server stores or relays it."""
    try:
        json.dumps(message, ensure_ascii=False).encode()
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


def check(message: Mapping[str, Any], schema: Mapping[str, Mapping[str, tuple[tuple[type, ...], bool]]]) -> str:
    """The message's type after checking its fields against ``schema``; ProtocolError otherwise."""
    kind = message.get("t")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, "every message needs a string field 't' naming its type")
    fields = schema.get(kind)
    if fields is None:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {kind!r}; known: {', '.join(sorted(schema))}")
    _check_fields(kind, message, fields)
    for name, inner in NESTED_MAPS.get(kind, {}).items():
        if name in message:
            _check_fields(f"{kind}.{name}", message[name], inner)
    return kind


def _check_fields(where: str, message: Mapping[str, Any], fields: Mapping[str, tuple[tuple[type, ...], bool]]) -> None:
    for name, (types, required) in fields.items():
        if name not in message:
            if required:
                raise ProtocolError(BAD_MESSAGE, f"'{where}' needs the field '{name}'")
            continue
        value = message[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ProtocolError(BAD_MESSAGE, f"'{where}.{name}' must be {_names(types)}, got {wire_name(value)}")
        if isinstance(value, int) and not -(2**63) <= value < 2**63:  # what msgpack and SQLite can carry
            raise ProtocolError(BAD_MESSAGE, f"'{where}.{name}' must fit in a signed 64-bit integer")


def is_version(value: Any) -> bool:
    """Whether a hello's ``v`` is this protocol's: an int, so neither ``1.0`` nor ``true``."""
    return type(value) is int and value == PROTOCOL_VERSION


WIRE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "a map",
    bytes: "binary data",
    type(None): "null",
}
"""Values as a client in any language knows them: a JSON or msgpack type, not a Python class."""


def _names(types: tuple[type, ...]) -> str:
    return " or ".join(WIRE_NAMES[t] for t in types)


def wire_name(value: Any) -> str:
    return WIRE_NAMES.get(type(value), type(value).__name__)


def message(kind: str, **fields: Any) -> dict[str, Any]:
    """A message of type ``kind`` with the protocol version."""
    return {"t": kind, "v": PROTOCOL_VERSION, **fields}


def error(code: str, text: str, **fields: Any) -> dict[str, Any]:
    return message("error", code=code, message=text, **fields)
