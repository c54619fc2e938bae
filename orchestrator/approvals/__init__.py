"""Approvals: a destructive call waits for a person's decision in ``orch tui`` or the CLI.

The package: :mod:`~orchestrator.approvals.request` (the request a person answers, its errors and ids),
:mod:`~orchestrator.approvals.broker` (request/wait/decide/resolve files and remembered grants),
:mod:`~orchestrator.approvals.risk` (risk classes and grant signatures), :mod:`~orchestrator.approvals.preview`
(the diff a person reads). *Whether* a call needs a person, and the channel that asks, is the approval pre-hook's
decision (:mod:`orchestrator.pre.approval`).

Files under the workspace's :attr:`~orchestrator.config.workspace.Workspace.approvals_dir` — the main worktree's
``.orchestration/run/approvals/`` in a git worktree (:mod:`orchestrator.vcs.worktrees`; never the git dir, which a
git-mode sandboxed command may write), shared by every worktree of the repository so one ``orch tui`` /
``orch approvals`` serves them all; ``.orchestration/run/approvals/`` otherwise (runtime state, never committed). Each request names the worktree and branch that asked:

``<id>.request.json``   a pending request, written by the waiting hook process
``<id>.decision.json``  the person's decision (TUI/CLI), written atomically
``resolved/<id>.json``  request + decision + outcome, once the waiting side has picked it up (audit)
``grants.json``         remembered approvals ("for this session", "for this intent"), each expiring
``audit.jsonl``         one line per event (requested, decided, resolved, granted, grant-used)
``.lock``               serialises decide / resolve / grant updates between processes

The waiting side blocks until the decision file appears — a watchdog observer wakes it at once,
with a polling fallback when watchdog is missing or cannot start — or the timeout passes, which
denies (fail-closed). watchdog is imported lazily inside :meth:`Broker.wait`, never on the hot path.

Grants. A remembered grant matches a later call when **all** of these hold: the same scope key
(the same session for a session grant, the same effective intent for an intent grant), the same
risk class, the same *signature* (see :func:`signature`), and it has not expired. Risk classes
listed in policy ``approval.forbid_remember`` are never remembered: :meth:`Broker.decide` refuses
to create such grants and :func:`request_decision` ignores any that exist.

May import: ``core``, ``state``, ``vcs``, ``shell`` and ``config``; never a pre-hook (``pre/approval.py`` imports
this package).
"""

from __future__ import annotations

from orchestrator.approvals.broker import (
    CALL_ENV,
    DECISIONS,
    SCOPES,
    SWEEP_GRACE_SECONDS,
    Broker,
    _start_observer,  # noqa: F401 - bench/bench_approvals.py times the observer start
    broker_for,
    timeout_of,
)
from orchestrator.approvals.preview import PREVIEW_MAX_CHARS, PREVIEW_MAX_FILE, PREVIEW_MAX_LINES, bound, preview
from orchestrator.approvals.request import (
    ApprovalError,
    ApprovalRequest,
    BrokenRequest,
    CorruptRequest,
    GrantRefused,
    new_id,
    valid_id,
)
from orchestrator.approvals.risk import RISK_CLASSES, risk_class, signature

__all__ = [
    "CALL_ENV", "DECISIONS", "PREVIEW_MAX_CHARS", "PREVIEW_MAX_FILE", "PREVIEW_MAX_LINES", "RISK_CLASSES", "SCOPES",
    "SWEEP_GRACE_SECONDS", "ApprovalError", "ApprovalRequest", "BrokenRequest", "Broker", "CorruptRequest",
    "GrantRefused", "bound", "broker_for", "new_id", "preview", "risk_class", "signature", "timeout_of", "valid_id",
]
