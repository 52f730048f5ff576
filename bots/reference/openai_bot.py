"""A bot backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp...).

Each turn it builds the shared prompt (``bots.prompts``), POSTs it to
``{base_url}/chat/completions`` and reads the action from the model's own reply
(``bots.parsing.extract_action``: the last ``[...]``).

Design:

- **Async.** ``act`` is ``async def`` on httpx's AsyncClient (anyio underneath, so it runs
  under trio in the match loop and the SDK): when the match clock runs out, the request is
  cancelled, not left running in an abandoned thread.
- **Time.** Every request, retries and back-off included, fits in a budget shorter than
  the move clock: ``timeout_ms`` if set, else the turn's ``deadline_ms`` less a margin
  (a tenth, at least 100 ms), and never more than that margin below it.
- **Transient errors.** 429 and 5xx answers and connection errors are retried with
  exponential back-off (honouring ``Retry-After``) while the budget allows; other 4xx
  answers are not retried.
- **No reply.** When the endpoint gives no chat completion (unreachable, an HTTP error
  left after the retries, a budget spent waiting, an answer that is not a completion) the
  model never spoke, so it is no format error of the model's and no retry can help: the
  bot raises ``SeatForfeit`` naming the cause and the URL, reason ``timeout`` when the
  budget ran out waiting and ``crash`` otherwise. ``play_match`` records it as the seat's
  forfeit, and the SDK resigns the match with it as the detail.
- **Rethink.** There is no second, hidden rethink inside the bot: a reply without an
  action is a ``format_error`` move, and an illegal one is refused by the game; the match
  loop then asks again with ``turn.retry_reason``, which the prompt shows. So every reply
  the model wrote is one turn record, with its own prompt, tokens and cost.
- **Money.** Each move carries the tokens of the endpoint's ``usage`` and their cost
  (``price_in``/``price_out`` in USD per million tokens); ``spent`` accumulates over the
  bot's life. Once ``spent`` reaches ``max_cost`` (0: no cap; a cap needs a price, or
  it could never be reached) the bot raises
  ``SeatForfeit("spending_cap")`` on its next turn, and ``exhausted`` tells a runner to
  stop seeking matches. A capped bot whose endpoint answers without the usage a cost
  needs stops the same way, at once: it could not tell when the cap was reached.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from arena.match import CRASH, TIMEOUT
from arena.seats import Move, SeatForfeit, Turn
from bots.base import Bot
from bots.parsing import extract_action
from bots.prompts import build_prompt
from bots.registry import BotSpecError, register

log = logging.getLogger("arena.bot.openai")

NO_DEADLINE_MS = 60_000
"""The request budget when a turn has no deadline and ``timeout_ms`` is 0."""
MIN_REQUEST_S = 0.05
"""Below this much time left, no request is started."""
FIRST_BACKOFF_S = 0.2
MAX_BACKOFF_S = 4.0


def without_secrets(url: str) -> str:
    """``url`` without a user and password or a query: it is logged and, in a forfeit's
    detail, published with the match."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True)
class Completion:
    """What one chat-completions call gave: the reply and its usage."""

    content: str | None
    tokens_in: int | None = None
    tokens_out: int | None = None


def request_budget_ms(deadline_ms: int | None, timeout_ms: int = 0) -> int:
    """Milliseconds the bot may spend on a turn: always under the move clock."""
    if deadline_ms is None:
        return timeout_ms or NO_DEADLINE_MS
    derived = max(0, deadline_ms - max(100, deadline_ms // 10))
    return min(timeout_ms, derived) if timeout_ms > 0 else derived


def retry_after_s(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


@register
class OpenAIBot(Bot):
    name = "openai"
    description = "a language model behind an OpenAI-compatible /chat/completions endpoint"
    games = None

    def __init__(
        self,
        game: str,
        seed: int = 0,
        base_url: str = "",
        model: str = "",
        api_key_env: str = "OPENAI_API_KEY",
        max_cost: float = 0.0,
        price_in: float = 0.0,
        price_out: float = 0.0,
        temperature: float = 0.7,
        timeout_ms: int = 0,
        max_tokens: int = 512,
    ) -> None:
        super().__init__(game, seed)
        if not base_url or not model:
            raise BotSpecError("bot 'openai' needs base_url and model, e.g. openai:base_url=http://localhost:8000/v1,model=qwen")
        for key, value in (("max_cost", max_cost), ("price_in", price_in), ("price_out", price_out), ("timeout_ms", timeout_ms)):
            if value < 0:
                raise BotSpecError(f"bot 'openai': {key} must be >= 0, got {value}")
        if max_cost > 0 and price_in == 0 and price_out == 0:
            raise BotSpecError(
                "bot 'openai': max_cost needs price_in or price_out (USD per million tokens): "
                "with no prices every move costs 0 and the cap is never reached"
            )
        if max_tokens <= 0:
            raise BotSpecError(f"bot 'openai': max_tokens must be > 0, got {max_tokens}")
        if temperature < 0:
            raise BotSpecError(f"bot 'openai': temperature must be >= 0, got {temperature}")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BotSpecError(f"bot 'openai': base_url must be an http:// or https:// URL, got {without_secrets(base_url)!r}")
        if parts.query or parts.fragment:
            raise BotSpecError(
                "bot 'openai': base_url takes no query (the path /chat/completions goes after it, and the URL is shown "
                "with the match): give a key through api_key_env"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.shown_url = without_secrets(self.url)  # what logs and the public match record may say
        self.model = model
        self.api_key_env = api_key_env
        self.max_cost = max_cost
        self.price_in = price_in
        self.price_out = price_out
        self.temperature = temperature
        self.timeout_ms = timeout_ms
        self.max_tokens = max_tokens
        self.spent = 0.0
        """USD spent over this bot's life, by the endpoint's usage and the prices given."""
        self.unmetered = False
        """Whether a reply came without the usage its cost needs, so spending is unknown."""

    @property
    def exhausted(self) -> bool:
        """Whether the spending cap is reached: the bot plays no further turn."""
        return self.max_cost > 0 and (self.unmetered or self.spent >= self.max_cost)

    def cap_reached(self) -> SeatForfeit:
        if self.unmetered:
            return SeatForfeit(
                "spending_cap",
                f"the endpoint gave a reply without token usage, so spending cannot be held to the "
                f"${self.max_cost:g} cap ({self.shown_url})",
            )
        return SeatForfeit("spending_cap", f"spent ${self.spent:.6f} of the ${self.max_cost:g} cap")

    def cost_of(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """USD for these counts; None when a priced count is missing, since counting it as
        zero would record less than was paid."""
        if tokens_in is None and tokens_out is None:
            return None
        if (self.price_in and tokens_in is None) or (self.price_out and tokens_out is None):
            return None
        return ((tokens_in or 0) * self.price_in + (tokens_out or 0) * self.price_out) / 1_000_000

    async def act(self, turn: Turn) -> Move:  # type: ignore[override]
        if self.exhausted:
            raise self.cap_reached()
        prompt = build_prompt(turn)
        budget_s = request_budget_ms(turn.deadline_ms, self.timeout_ms) / 1000
        completion = await self.complete(prompt.messages(), budget_s)
        cost = self.cost_of(completion.tokens_in, completion.tokens_out)
        if cost is not None:
            self.spent += cost
        elif self.max_cost > 0:
            self.unmetered = True
            raise self.cap_reached()
        action = extract_action(completion.content) if completion.content else None
        return Move(
            action=action,
            raw=completion.content,
            prompt=prompt.to_json(),
            tokens_in=completion.tokens_in,
            tokens_out=completion.tokens_out,
            cost=cost,
            format_error=action is None,
        )

    @classmethod
    def public_options(cls, options: Mapping[str, str]) -> dict[str, str]:
        """The base_url without a user and password: the label goes into the match record."""
        return {key: without_secrets(value) if key == "base_url" else value for key, value in options.items()}

    def headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    def no_reply(self, reason: str, cause: str) -> SeatForfeit:
        """The forfeit of a turn the endpoint left unanswered, naming where it failed."""
        log.warning("%s: no reply from %s: %s", self.label, self.shown_url, cause)
        return SeatForfeit(reason, f"{cause} ({self.shown_url})")

    def refused(self, response: httpx.Response) -> SeatForfeit:
        """The forfeit of a request the endpoint refused. Its body stays in this bot's log: the
        forfeit's detail is published with the match, and a refusal echoes the key it was given."""
        log.warning("%s: HTTP %s from %s: %s", self.label, response.status_code, self.shown_url, response.text[:300])
        unset = response.status_code in (401, 403) and self.api_key_env and not os.environ.get(self.api_key_env)
        hint = f"; {self.api_key_env} is not set" if unset else ""
        return self.no_reply(CRASH, f"HTTP {response.status_code} {response.reason_phrase} (its body is in the bot's log{hint})")

    async def complete(self, messages: list[dict[str, str]], budget_s: float) -> Completion:
        """One chat completion within ``budget_s``, retrying 429, 5xx and connection errors;
        ``SeatForfeit`` (see ``no_reply``) when there is none."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        deadline = anyio.current_time() + budget_s
        delay = FIRST_BACKOFF_S
        error: str | None = None
        timed_out = f"the endpoint did not answer within {budget_s * 1000:.0f} ms"
        async with httpx.AsyncClient(headers=self.headers()) as client:
            while (left := deadline - anyio.current_time()) > MIN_REQUEST_S:
                wait: float | None = None
                with anyio.move_on_after(left):
                    try:
                        response = await client.post(self.url, json=body, timeout=left)
                    except httpx.TimeoutException as failure:
                        raise self.no_reply(TIMEOUT, timed_out) from failure
                    except httpx.TransportError as failure:
                        error = f"{type(failure).__name__}: {failure}"
                    else:
                        if response.status_code == 429 or response.status_code >= 500:
                            error = f"HTTP {response.status_code}"
                            wait = retry_after_s(response.headers.get("retry-after"))
                        elif response.status_code >= 400:
                            raise self.refused(response)
                        else:
                            try:
                                return parse_completion(response)
                            except ValueError as bad:  # the body stays in this bot's log, as a refusal's does
                                log.warning("%s: %s from %s: %s", self.label, bad, self.shown_url, response.text[:300])
                                raise self.no_reply(CRASH, f"{bad} (its body is in the bot's log)") from bad
                if anyio.current_time() >= deadline:
                    raise self.no_reply(TIMEOUT, timed_out)
                if wait is None:
                    wait = delay * (0.5 + self.rng.random())
                    delay = min(MAX_BACKOFF_S, delay * 2)
                wait = max(wait, FIRST_BACKOFF_S)  # 'Retry-After: 0' made 40 requests in 2 s
                if anyio.current_time() + wait + MIN_REQUEST_S >= deadline:
                    break
                await anyio.sleep(wait)
        if error is None:
            raise self.no_reply(TIMEOUT, f"no time left for a request ({budget_s * 1000:.0f} ms)")
        raise self.no_reply(CRASH, f"{error}; no time left to retry")


def reply_text(content: Any) -> str | None:
    """The reply's text: ``content`` itself, or the joined text parts when a server sends a
    list of typed parts (thinking parts left out, so a bracket there is no answer)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        ]
        return "".join(texts) if texts else None
    return None


def parse_completion(response: httpx.Response) -> Completion:
    """The reply text and token usage of a chat-completions answer; ValueError if it is none."""
    try:
        data = response.json()
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as bad:
        # not its body: an answer of 200 that is no completion may echo the key it was given
        raise ValueError("the answer is not a chat completion") from bad
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(reply_text(content), token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")))


MAX_TOKEN_COUNT = 1_000_000_000
"""A usage count past this is no count (what the wire takes for a move's tokens)."""


def token_count(value: Any) -> int | None:
    """A usage count the endpoint gave, or None for one that is no count: a negative one
    lowered the spending and no cap was ever reached, and 10**20 could not be stored."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value != int(value):
        return None
    return int(value) if 0 <= value <= MAX_TOKEN_COUNT else None
