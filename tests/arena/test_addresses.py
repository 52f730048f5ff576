"""Server addresses as clients take them: the base URL or an endpoint's, as PROTOCOL.md gives it."""

from __future__ import annotations

import pytest

from arena import protocol as p


@pytest.mark.parametrize(
    ("url", "bot", "watch", "http"),
    [
        ("ws://h:8765", "ws://h:8765/bot", "ws://h:8765/watch", "http://h:8765"),
        ("ws://h:8765/", "ws://h:8765/bot", "ws://h:8765/watch", "http://h:8765"),
        ("ws://h:8765/bot", "ws://h:8765/bot", "ws://h:8765/watch", "http://h:8765"),
        ("ws://h:8765/watch/", "ws://h:8765/bot", "ws://h:8765/watch", "http://h:8765"),
        ("wss://h/arena/bot", "wss://h/arena/bot", "wss://h/arena/watch", "https://h/arena"),  # behind a proxy's prefix
        ("ws://h/robot", "ws://h/robot/bot", "ws://h/robot/watch", "http://h/robot"),  # a prefix that ends like one
        # a proxy's query stays on the websocket addresses, off the HTTP base that paths are added to
        ("ws://h:8765/bot?k=1", "ws://h:8765/bot?k=1", "ws://h:8765/watch?k=1", "http://h:8765"),
        ("ws://h:8765/?k=1", "ws://h:8765/bot?k=1", "ws://h:8765/watch?k=1", "http://h:8765"),
        ("ws://h:8765/bot#top", "ws://h:8765/bot", "ws://h:8765/watch", "http://h:8765"),  # no fragment in a ws URI
    ],
)
def test_every_endpoint_and_the_http_base_follow_from_either_form(url: str, bot: str, watch: str, http: str) -> None:
    assert (p.endpoint(url, p.BOT_PATH), p.endpoint(url, p.WATCH_PATH), p.http_base(url)) == (bot, watch, http)


@pytest.mark.parametrize("url", ["ftp://h:8765", "h:8765", "ws://"])
def test_a_url_that_is_not_a_websocket_servers_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="give its base URL, ws://host:port"):
        p.http_base(url)


@pytest.mark.parametrize(("url", "said"), [("http://h:8765", "ws://h:8765"), ("https://h/arena", "wss://h/arena")])
def test_the_servers_http_address_is_refused_naming_its_websocket_one(url: str, said: str) -> None:
    with pytest.raises(ValueError, match=f"its clients speak websocket: give {said}$"):
        p.http_base(url)
