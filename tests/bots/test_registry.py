"""Bot specs: the one ``name:key=value,...`` form every command and config uses."""

from __future__ import annotations

import pytest

from bots.registry import BotSpecError, make_bot


def test_an_option_given_twice_is_refused_not_silently_overridden() -> None:
    with pytest.raises(BotSpecError, match="option 'depth' is given twice"):
        make_bot("alphabeta:depth=3,depth=4", "connect-four")
