"""ssh's ``ProxyCommand`` inside a sandboxed command: ``python -I -S sshproxy.py HOST PORT``.

A command in its own network namespace reaches other hosts only through the egress proxy (``127.0.0.1:3128``),
and ssh speaks no HTTP proxy protocol itself. ``GIT_SSH_COMMAND`` (set by the launcher: network.py's
``proxy_environment``) runs ssh with this as its ``ProxyCommand``: it asks the proxy for ``CONNECT HOST:PORT`` and
then relays stdin and stdout to the tunnel, so ``git fetch``/``git push`` over SSH to an allowed remote work; a
refused host ends with the proxy's message on stderr and exit 1. Stdlib only (it runs under ``-I -S``).
"""

from __future__ import annotations

import os
import select
import socket
import sys

PROXY = ("127.0.0.1", 3128)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: sshproxy.py HOST PORT\n")
        return 2
    host, port = argv
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        sock = socket.create_connection(PROXY, timeout=30)
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("ascii"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(1)  # one byte at a time: nothing of the tunnel may be read here
            if not chunk or len(head) > 16384:
                break
            head += chunk
    except OSError as exc:
        sys.stderr.write(f"orchestrator: cannot reach the egress proxy at 127.0.0.1:3128 ({exc}): no network\n")
        return 1
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    if not status.startswith("HTTP/1.") or status.split(" ")[1:2] != ["200"]:
        sys.stderr.write(f"orchestrator: ssh to {target} refused: {status.partition(' ')[2] or 'no answer'}\n")
        return 1
    sock.settimeout(None)
    return _relay(sock)


def _relay(sock: socket.socket) -> int:
    """stdin -> tunnel, tunnel -> stdout, until both ends are done."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    poller = select.poll()
    poller.register(stdin, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    open_ends = 2
    while open_ends:
        for fd, _ in poller.poll():
            if fd == stdin:
                data = os.read(stdin, 65536)
                if data:
                    sock.sendall(data)
                    continue
                poller.unregister(stdin)
                sock.shutdown(socket.SHUT_WR)
            else:
                data = sock.recv(65536)
                if data:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(stdout, view):]
                    continue
                poller.unregister(sock.fileno())
                os.close(stdout)
            open_ends -= 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
