"""The console's ASGI application: the Starlette routes behind the :class:`~orchestrator.web.guard.Guard`
middleware (handlers in :mod:`orchestrator.web.api`)."""

from __future__ import annotations

from typing import Any

from orchestrator.web.console import STATIC, Console


def create_app(console: Console) -> Any:
    """The ASGI app of ``console``: the guard in front of the Starlette routes."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from orchestrator.web import api
    from orchestrator.web.guard import Guard

    routes = [
        Route("/", api.index),
        Route("/api/state", api.state),
        Route("/api/activity", api.activity),
        Route("/api/items/{kind}/{item_id}/challenge", api.challenge, methods=["POST"]),
        Route("/api/items/{kind}/{item_id}/decide", api.decide, methods=["POST"]),
        Route("/api/intents/challenge", api.intent_challenge, methods=["POST"]),
        Route("/api/intents/apply", api.intent_apply, methods=["POST"]),
        Route("/api/register/options", api.register_options, methods=["POST"]),
        Route("/api/register/finish", api.register_finish, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.console = console
    return Guard(app, hosts=console.hosts, origins=console.origins,  # type: ignore[arg-type]  # Starlette's
                 csrf_token=console.csrf_token)  # ASGI types use MutableMapping where Guard's use dict


__all__ = ["create_app"]
