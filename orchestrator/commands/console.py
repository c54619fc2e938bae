"""``orch console``: the web console — approve, reject, follow intents, sessions, the ledger and the Activity view
from a browser, each decision signed with the approver's passkey (docs/console.md).

    orch console                         serve http://localhost:8470 on 127.0.0.1 until Ctrl-C
    orch console --port 9000             another port (add its origin to approval.passkey.origins)
    orch console --origin https://approve.example.org
                                         the page is also reached there (a tunnel to 127.0.0.1)
    orch console --host 0.0.0.0 --tls-cert cert.pem --tls-key key.pem
                                         listen beyond loopback: TLS is required
    orch console --url                   print the running console's address and exit
"""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import out


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_workspace_arg(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8470)")
    parser.add_argument("--origin", action="append", default=[], metavar="URL",
                        help="a public origin of the page (e.g. through a tunnel); repeatable")
    parser.add_argument("--tls-cert", default=None, metavar="FILE", help="TLS certificate (PEM)")
    parser.add_argument("--tls-key", default=None, metavar="FILE", help="TLS private key (PEM)")
    parser.add_argument("--url", action="store_true", help="print the running console's address and exit")


def origins_for(port: int, extra: list[str], tls: bool) -> list[str]:
    """The page's origins: ``http(s)://localhost:PORT`` first (the passkey relying party is a host name, so the
    page is opened at localhost, not 127.0.0.1), then the public ones."""
    local = f"{'https' if tls else 'http'}://localhost:{port}"
    return [local, *[o.rstrip("/") for o in extra if o.rstrip("/") != local]]


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    from orchestrator.web.server import running

    if args.url:
        info = running(ws.run_dir)
        if info is None:
            raise UsageError("no console is running for this workspace", hint="start one with `orch console`")
        out(str(info.get("url")))
        return 0
    from orchestrator.web.console import DEFAULT_PORT, Console
    from orchestrator.web.server import serve

    port = args.port or DEFAULT_PORT
    console = Console(ws, origins=origins_for(port, args.origin, args.tls_cert is not None), port=port)
    settings = console.settings()
    out(f"orch console: {console.url}  (workspace {ws.root}; Ctrl-C stops)")
    missing = [o for o in console.origins if o.lower() not in {x.lower() for x in settings.origins}]
    if missing:
        out(f"  note: {', '.join(missing)} not in approval.passkey.origins {list(settings.origins)}: the approval "
            "hook refuses decisions signed there")
    serve(console, host=args.host, certfile=args.tls_cert, keyfile=args.tls_key)
    return 0
