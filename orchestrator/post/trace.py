"""Interim trace post-hook (replaced by the ledger implementation, issue 3)."""

from __future__ import annotations

from typing import Any


def capture(gov: Any, call: Any) -> None:
    """Snapshot pre-images of the call's targets (interim: nothing)."""


def record(gov: Any, call: Any, result: dict[str, Any] | None) -> dict[str, Any] | None:
    """Append a ledger record (interim: nothing)."""
    return None
