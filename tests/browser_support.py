"""A real browser for the console's tests: Debian's ``chromium`` driven by Playwright for Python (no ``playwright
install``), with a CDP virtual authenticator, and passkey registration through ``orch approver add``.

Fixtures ``browser`` and ``person`` (tests/conftest.py imports them: one browser per test module).

Missing locally: the tests are skipped (``apt-get install -y chromium``); missing under ``CI=true``: they fail
(.ci/run installs it). Flags per the machine notes: headless, no sandbox (root), no GPU, no background networking
(this machine's network is closed; Chromium would otherwise keep trying Google's hosts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = os.environ.get("ORCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


#: module scope, not session: Playwright's sync API keeps an event loop running in this thread while it is open,
#: and Textual's Pilot tests (tests/tui/) cannot start theirs beside it
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Authenticated:
    """A browser page with a CDP virtual authenticator (CTAP2, internal, resident keys, user verification)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1100, "height": 900})
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable")
        self.authenticator = self.cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True}})["authenticatorId"]

    def credentials(self) -> list[dict[str, Any]]:
        return self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})["credentials"]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def person(browser: Any) -> Iterator[Authenticated]:
    """One person's browser with their authenticator."""
    p = Authenticated(browser)
    yield p
    p.close()


def register(root: Path, port: int, person: Authenticated, name: str = "alice", timeout: float = 60.0) -> str:
    """``orch approver add NAME`` (a real process, serving the console meanwhile); the person opens the link and
    creates the passkey. Returns the page's confirmation."""
    from playwright.sync_api import expect

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "approver", "add", name, "-C", str(root),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    link = ""
    while "#register=" not in link:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "orch approver add ended"
        link = line.strip()
    page = person.page
    page.goto(link)
    page.wait_for_selector("#register-button:not([disabled])")
    assert page.is_visible("#register") and name in (page.text_content("#register-text") or "")
    page.click("#register-button")
    expect(page.locator("#register-result")).to_contain_text("registered", timeout=timeout * 1000)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    assert f"registered {name}'s passkey" in out
    return page.text_content("#register-result") or ""
