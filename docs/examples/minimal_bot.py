"""A complete arena bot in one file, written from docs/PROTOCOL.md alone.

It uses only the ``websockets`` and ``msgpack`` packages and the standard library, as a
bot in another language would use its own websocket and msgpack libraries. It speaks
protocol version 1 on ``/bot`` with msgpack in binary frames: it says ``hello``, sends a
``seek``, answers every ``turn`` with a random legal action, and seeks again after each
``match_end`` until it has played ``--matches`` matches; then it exits with status 0.

Kept short on purpose, it supports only games whose turns list their legal actions
(``legal`` is a list). A free-form turn (``legal`` is null, with a ``format`` to follow)
stops it with status 2. It does not resume a dropped connection (PROTOCOL.md section 8).

    python docs/examples/minimal_bot.py --url ws://127.0.0.1:8765 --name my-bot \\
        --token TOKEN --game tic-tac-toe --matches 3
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from typing import Any

import msgpack
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

PROTOCOL_VERSION = 1


def encode(kind: str, **fields: Any) -> bytes:
    """One message: a map with its type ``t`` and the protocol version ``v``, in msgpack."""
    return msgpack.packb({"t": kind, "v": PROTOCOL_VERSION, **fields})


async def play(url: str, name: str, token: str, game: str, matches: int) -> int:
    rng = random.Random()
    # max_size=None: a turn of a long talk game can pass websockets' default cap of 1 MiB
    async with connect(url.rstrip("/") + "/bot", max_size=None) as ws:
        await ws.send(encode("hello", bot=name, token=token))
        welcome = msgpack.unpackb(await ws.recv())  # a bad token closes the connection instead (4001)
        print(f"logged in as {welcome['bot']}, session {welcome['session']}")
        await ws.send(encode("seek", games=[game]))
        played = 0
        async for frame in ws:  # binary frames, since we speak msgpack
            msg = msgpack.unpackb(frame)
            kind = msg["t"]
            if kind == "turn":
                if msg["legal"] is None:
                    print(f"free-form turn ({msg['format']}): this bot needs a list of legal actions", file=sys.stderr)
                    return 2
                fields = {key: msg[key] for key in ("match", "seat", "step", "attempt")}  # echo them back
                await ws.send(encode("move", action=rng.choice(msg["legal"]), **fields))
            elif kind == "match_end":
                played += 1
                outcome = msg["outcomes"][msg["seat"]] if msg["outcomes"] else msg["status"]
                print(f"match {msg['match']} ended ({msg['reason']}): {outcome}")
                if played >= matches:
                    return 0
                await ws.send(encode("seek", games=[game]))
            elif kind == "error":  # e.g. unknown_game after a seek, or stale_move
                print(f"error {msg['code']}: {msg['message']}", file=sys.stderr)
                if msg.get("ref") == "seek":
                    return 1
            # seeking, match_start, move_ack, move_rejected (a new turn follows),
            # opponent_gone, opponent_back and pong need no answer from this bot.
    print("the server closed the connection", file=sys.stderr)
    return 1


def main() -> int:
    parser = argparse.ArgumentParser(description="A random bot for the arena, using only websockets and msgpack.")
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="the server's base URL (the bot adds /bot)")
    parser.add_argument("--name", required=True, help="the bot's registered name")
    parser.add_argument("--token", required=True, help="the bot's token")
    parser.add_argument("--game", default="tic-tac-toe", help="the game to seek (one with legal action lists)")
    parser.add_argument("--matches", type=int, default=1, help="how many matches to play before exiting")
    args = parser.parse_args()
    try:
        return asyncio.run(play(args.url, args.name, args.token, args.game, args.matches))
    except ConnectionClosed as closed:  # 4001 bad token, 4003 bad version, 4004 bad hello, ...
        code, reason = (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, "")
        print(f"connection closed by the server: {code} {reason}", file=sys.stderr)
        return 1
    except (OSError, InvalidHandshake) as error:  # no server there; a 503 when it is full, a 404 for a wrong URL
        print(f"cannot connect to {args.url}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
