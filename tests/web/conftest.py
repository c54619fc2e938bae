"""The browser fixtures of the console's tests (tests/browser_support.py)."""

from tests.browser_support import browser, person  # noqa: F401 - fixtures
