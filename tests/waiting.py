"""Waiting for a condition in tests: the one place a test may poll with a sleep.

Why: CI runs on a loaded 2-core machine, so a test must never pass or fail on how fast the machine is. A test that
needs something to happen (a daemon to come up, a request to be filed, a file to grow) waits for *that condition*
with a generous deadline, which fails only when something is truly stuck; it never sleeps for a fixed time and then
assumes the thing happened (or did not). ``tests/test_no_sleeps.py`` keeps ``time.sleep`` out of the other tests.
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

#: seconds before a wait gives up. Generous on purpose: only a stuck process or a real bug takes this long, and a
#: passing test never waits for the deadline, so a large value costs nothing.
TIMEOUT = 60.0
#: seconds between two checks of the condition
INTERVAL = 0.02


class _Pilot(Protocol):
    def pause(self, delay: float | None = None) -> Awaitable[None]: ...


def wait_until(cond: Callable[[], T], *, what: str, timeout: float = TIMEOUT, interval: float = INTERVAL) -> T:
    """Call ``cond`` until it returns something truthy and return that; fail naming ``what`` after ``timeout`` s.

    ``what`` says what was awaited ("the daemon's socket to answer"), so a failure reads as a sentence. An exception
    raised by ``cond`` propagates at once: a condition that can tell it will never hold should raise."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


async def until(pilot: _Pilot, cond: Callable[[], Any], *, what: str = "the app to reach the expected state",
                timeout: float = TIMEOUT, interval: float = 0.05) -> None:
    """:func:`wait_until` for a Textual app under Pilot: the app's workers and timers run while we wait."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pilot.pause(interval)
