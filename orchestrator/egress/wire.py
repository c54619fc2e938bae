"""What the proxy reads and writes on a client connection: HTTP proxy requests, SOCKS5, and the byte relay.

Every parser here is strict and bounded: a request head over :data:`MAX_HEAD` bytes, a line that is not CRLF
terminated, a SOCKS version or command we do not serve, or a client that stops talking before its request is
complete ends the connection with a clear error (an HTTP status, a SOCKS reply code) and never opens one upstream.

The relay copies bytes both ways until each side has finished: an end of stream from one side is passed on as a
half-close (``write_eof``) once everything read before it was written, and the connection closes only when both
directions are done, so the last bytes of a download arrive whatever order the two ends close in.
"""

from __future__ import annotations

import asyncio
from typing import NamedTuple
from urllib.parse import urlsplit

from orchestrator.egress.hosts import HostError, parse_port, split_target

#: largest request head (request line + headers) accepted
MAX_HEAD = 16 * 1024
#: seconds a client has to send its complete request head or SOCKS request
HEAD_TIMEOUT = 30.0
CHUNK = 256 * 1024
#: request headers that concern the hop to the proxy, never the origin
HOP_HEADERS = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
                         "te", "trailer", "upgrade"})


class BadRequest(Exception):
    """A malformed or unsupported request: ``status`` (HTTP) and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class HttpRequest(NamedTuple):
    """An HTTP proxy request: CONNECT host:port (``head`` empty) or an absolute-URI request to forward (``head``:
    the origin-form head to send instead), and what the client sent after its head."""

    connect: bool
    host: str
    port: int
    head: bytes
    rest: bytes


async def read_head(reader: asyncio.StreamReader, first: bytes) -> tuple[bytes, bytes]:
    """The request head (up to and including the blank line) and the bytes after it."""
    buf = bytearray(first)
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            return bytes(buf[:end + 4]), bytes(buf[end + 4:])
        if len(buf) > MAX_HEAD:
            raise BadRequest(431, f"request head over {MAX_HEAD} bytes")
        chunk = await reader.read(4096)
        if not chunk:
            raise BadRequest(400, "the client closed before its request head was complete")
        buf += chunk


def parse_http(head: bytes, rest: bytes) -> HttpRequest:
    """Parse a proxy request head; raises :class:`BadRequest`."""
    if len(head) > MAX_HEAD + 4:
        raise BadRequest(431, f"request head over {MAX_HEAD} bytes")
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise BadRequest(400, "the request head is not ASCII") from None
    lines = text[:-4].split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[0].isalpha():
        raise BadRequest(400, f"malformed request line {lines[0][:200]!r}")
    method, target, version = parts
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or any(c in name for c in " \t"):
            raise BadRequest(400, f"malformed header line {line[:200]!r}")
        headers.append((name, value.strip()))
    try:
        if method.upper() == "CONNECT":
            host, port = split_target(target)
            return HttpRequest(True, host, port, b"", rest)
        return _absolute(method, target, version, headers, rest)
    except HostError as exc:
        raise BadRequest(400, str(exc)) from None


def _absolute(method: str, target: str, version: str, headers: list[tuple[str, str]], rest: bytes) -> HttpRequest:
    """A plain-HTTP request to forward (``GET http://host:port/path HTTP/1.1``): origin-form, hop-by-hop headers
    dropped, ``Host`` set to the URI's authority (what was checked is what the origin is asked for), and
    ``Connection: close`` (one request per connection: a second one on it could name another host)."""
    if not target.lower().startswith("http://"):
        if target.lower().startswith("https://"):
            raise BadRequest(400, "use CONNECT for https:// (the proxy does not speak TLS for the client)")
        raise BadRequest(400, "this is a proxy: send CONNECT host:port or an absolute http:// URI")
    parts = urlsplit(target)
    netloc = parts.netloc.rpartition("@")[2]
    host = parts.hostname or ""
    port_text = netloc.rpartition("]")[2].partition(":")[2] if netloc.startswith("[") else netloc.partition(":")[2]
    port = parse_port(port_text, target) if port_text else 80
    if not host:
        raise BadRequest(400, f"no host in {target[:200]!r}")
    drop = HOP_HEADERS | {v.strip().lower() for n, v in headers if n.lower() == "connection" for v in v.split(",")}
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    lines = [f"{method} {path} {version}", f"Host: {netloc}"]
    lines += [f"{n}: {v}" for n, v in headers if n.lower() not in drop and n.lower() != "host"]
    lines.append("Connection: close")
    return HttpRequest(False, host, port, ("\r\n".join(lines) + "\r\n\r\n").encode("ascii"), rest)


def http_error(status: int, message: str) -> bytes:
    """A complete error response: the message as reason phrase (clients such as pip show it) and as body."""
    reason = " ".join(message.split())[:400] or "error"
    body = (message + "\n").encode("utf-8", "replace")
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
            f"X-Orchestrator-Egress: refused\r\nContent-Length: {len(body)}\r\n\r\n").encode("utf-8", "replace") + body


CONNECTED = b"HTTP/1.1 200 Connection established\r\n\r\n"

# SOCKS5 (RFC 1928): reply codes
SOCKS_OK, SOCKS_FAILURE, SOCKS_NOT_ALLOWED, SOCKS_NET_UNREACHABLE, SOCKS_HOST_UNREACHABLE = 0, 1, 2, 3, 4
SOCKS_REFUSED, SOCKS_COMMAND, SOCKS_ADDRESS = 5, 7, 8


def socks_reply(code: int) -> bytes:
    return bytes((5, code, 0, 1, 0, 0, 0, 0, 0, 0))


async def read_socks5(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[str, int]:
    """The SOCKS5 greeting and request (the version byte already read); (host, port) of a CONNECT. Raises
    :class:`BadRequest` with a SOCKS reply code as ``status`` (already sent when the greeting got that far)."""
    count = (await reader.readexactly(1))[0]
    methods = await reader.readexactly(count)
    if 0 not in methods:  # only "no authentication": the peer was authenticated by the kernel (SO_PEERCRED)
        writer.write(b"\x05\xff")
        raise BadRequest(SOCKS_FAILURE, "SOCKS5: the client offers no 'no authentication' method")
    writer.write(b"\x05\x00")
    version, command, _, atyp = await reader.readexactly(4)
    if version != 5:
        raise BadRequest(SOCKS_FAILURE, f"SOCKS5: request version {version}")
    if atyp == 1:
        import ipaddress

        host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
    elif atyp == 4:
        import ipaddress

        host = f"[{ipaddress.IPv6Address(await reader.readexactly(16))}]"
    elif atyp == 3:
        size = (await reader.readexactly(1))[0]
        host = (await reader.readexactly(size)).decode("ascii", "replace")
    else:
        raise BadRequest(SOCKS_ADDRESS, f"SOCKS5: address type {atyp}")
    port = int.from_bytes(await reader.readexactly(2), "big")
    if command != 1:
        what = {2: "BIND", 3: "UDP ASSOCIATE"}.get(command, f"command {command}")
        raise BadRequest(SOCKS_COMMAND, f"SOCKS5 {what} is refused: only CONNECT is served")
    if port == 0:
        raise BadRequest(SOCKS_NOT_ALLOWED, "SOCKS5: port 0")
    return host, port


async def relay(a_reader: asyncio.StreamReader, a_writer: asyncio.StreamWriter, b_reader: asyncio.StreamReader,
                b_writer: asyncio.StreamWriter) -> tuple[int, int]:
    """Copy both ways until both directions ended (half-closes passed on); bytes (a->b, b->a). Closes both."""
    try:
        up, down = await asyncio.gather(_pipe(a_reader, b_writer), _pipe(b_reader, a_writer))
    finally:
        for w in (a_writer, b_writer):
            w.close()
    return up, down


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> int:
    total = 0
    try:
        while True:
            data = await src.read(CHUNK)
            if not data:
                break
            dst.write(data)
            total += len(data)
            await dst.drain()
        if dst.can_write_eof() and not dst.is_closing():
            dst.write_eof()  # everything read was handed over first: the half-close loses nothing
    except (ConnectionError, OSError):
        dst.transport.abort()  # one side broke: the other must not wait for bytes that will not come
    return total
