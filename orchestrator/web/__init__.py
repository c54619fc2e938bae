"""The web console (``orch console``): pending decisions, intents, sessions, the ledger and the Activity view in a
browser, every decision signed by the approver's passkey.

It owns the HTTP side only: the Starlette app and its request guard (:mod:`~orchestrator.web.guard`: Host,
Origin, CSRF, body size), the page (``static/``: one HTML file, its CSS and a small vanilla script, no CDN),
the pending-item sources the page renders (:mod:`~orchestrator.web.items`), passkey registration tickets
(:mod:`~orchestrator.web.registration`) and serving with uvicorn (:mod:`~orchestrator.web.server`). What a
signature proves and how it is checked lives below it, in :mod:`orchestrator.approvals` (``passkey``,
``approvers``, ``signed``), where the approval hook uses it without this package. It may import everything the
TUI may (it sits next to it in the layers: the approval broker, the views, ``tui.data``'s readers), never the CLI
or the commands; nothing on a hook's path imports it. Starlette, uvicorn and webauthn are imported here only.
"""
