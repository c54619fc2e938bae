"""Which destinations a sandboxed command may reach: allow-list patterns, canonical hosts, address classes.

A destination is a host and a port, as a CONNECT line, an absolute URI or a SOCKS5 request names it. The decision
(:meth:`Rules.decide`) is made on the *name* first, before anything is resolved, so a name no rule allows never
reaches a resolver (DNS carries nothing out); then, for an allowed name, on every address it resolves to
(:meth:`Rules.check_address`), and the proxy dials exactly an address that passed.

Patterns (``sandbox.network.allow`` / ``deny``, an intent's ``network``, and the hosts derived from the person's own
configuration, :mod:`orchestrator.egress.sources`):

- ``example.com``: that name exactly (case-insensitive, a trailing dot ignored);
- ``*.example.com``: its subdomains only, not ``example.com`` itself; ``*`` and ``*.tld`` (one label) are refused;
- an IP address (``10.1.2.3``, ``::1``, ``[::1]``) or a network (``10.0.0.0/8``): those addresses, as literals and as
  what a name resolves to;
- any of these with ``:PORT`` (``github.com:22``, ``[::1]:8080``): that port only; without one, every port.

Deny wins over allow. An IP literal is refused unless an address pattern lists it. A name that resolves to a
loopback, private, link-local, CGNAT, unspecified, multicast or reserved address is refused unless the name is
listed *exactly* (not by a ``*.`` pattern: a wildcard's owner may point a subdomain anywhere) or the address itself
is listed; a cloud metadata address (``169.254.169.254``, ``fd00:ec2::254``…) only when the address is listed.

Host canonical forms: lower case, no trailing dot, no brackets; every numeric spelling of an IPv4 address that the
C resolver accepts (``0x7f.1``, ``2130706433``, ``0177.0.0.1``, ``127.1``) is that address; an IPv4-mapped IPv6
address (``::ffff:127.0.0.1``) is its IPv4 address; an IPv6 zone (``%eth0``) and anything that is neither a
name nor an address is refused.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import NamedTuple, Union

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)\Z")
#: the policy key a refusal names (docs/configuration.md)
ALLOW_KEY = "sandbox.network.allow"
DENY_KEY = "sandbox.network.deny"

#: cloud instance metadata and platform endpoints (outside link-local space too): only an address entry opens one
METADATA = tuple(ipaddress.ip_network(n) for n in (
    "169.254.169.254/32", "169.254.170.2/32", "100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32",
    "fd00:ec2::/32", "fd20:ce::254/128", "fd00:c1::a9fe:a9fe/128", "fd00:42::42/128", "fd00:a9fe:a9fe::1/128",
    "fd00:100::100:200/128"))
#: address classes a name may resolve to only when the name (or the address) is listed, with what a refusal says
NON_PUBLIC = tuple((ipaddress.ip_network(n), why) for n, why in (
    ("0.0.0.0/8", "an unspecified address"), ("127.0.0.0/8", "a loopback address"),
    ("10.0.0.0/8", "a private address"), ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"), ("100.64.0.0/10", "a CGNAT address"),
    ("169.254.0.0/16", "a link-local address"), ("192.0.0.0/24", "a reserved address"),
    ("198.18.0.0/15", "a reserved address"), ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"), ("::/128", "an unspecified address"), ("::1/128", "a loopback address"),
    ("fc00::/7", "a private address"), ("fe80::/10", "a link-local address"), ("ff00::/8", "a multicast address")))


class HostError(ValueError):
    """A host or pattern that is neither a valid name nor an address."""


def embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address delivers to: mapped (``::ffff:a.b.c.d``), compatible (``::a.b.c.d``),
    NAT64 (``64:ff9b::/96``) or 6to4 (``2002::/16``). Denials apply to it too (never allows)."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    packed = addr.packed
    if packed[:12] == b"\0" * 12 or packed[:12] == b"\x00\x64\xff\x9b" + b"\0" * 8:
        return ipaddress.IPv4Address(packed[12:])
    return None


def canonical(host: str) -> str | Address:
    """``host`` as a canonical name (str) or an address; raises :class:`HostError`."""
    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
        if ":" not in h:
            raise HostError(f"{host!r}: brackets hold an IPv6 address")
    if not h or "%" in h:
        raise HostError(f"{host!r} is not a host name or address (IPv6 zones are refused)")
    if ":" in h:
        try:
            addr6 = ipaddress.IPv6Address(h)
        except ValueError:
            raise HostError(f"{host!r} is not an IPv6 address") from None
        return addr6.ipv4_mapped or addr6
    if h.endswith("."):
        h = h[:-1]
    labels = h.split(".")
    if all(_NUMERIC_LABEL.match(label) for label in labels):
        try:  # the C resolver's reading of every numeric spelling (0x7f.1, 2130706433, 0177.0.0.1, 127.1)
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            raise HostError(f"{host!r} is not an IPv4 address") from None
    if len(h) > 253 or not all(_LABEL.match(label) for label in labels):
        raise HostError(f"{host!r} is not a host name (letters, digits, '-', '_'; non-ASCII names in punycode)")
    return h


def split_target(target: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``) of a CONNECT line into (host, port); raises :class:`HostError`."""
    host, sep, port = target.rpartition(":")
    if not sep or not host or (":" in host and not (host.startswith("[") and host.endswith("]"))):
        raise HostError(f"{target!r} is not host:port")
    return host, parse_port(port, target)


def parse_port(text: str, context: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 5 or not 1 <= int(text) <= 65535:
        raise HostError(f"{context!r}: the port must be 1..65535")
    return int(text)


class Entry(NamedTuple):
    """One allow/deny pattern: a name (``suffix`` False: exact; True: its subdomains) or a network of addresses,
    an optional port, and where it came from (what ``orch explain`` and the proxy's log show)."""

    name: str | None
    suffix: bool
    network: Network | None
    port: int | None
    source: str
    text: str

    def matches_name(self, host: str, port: int) -> bool:
        if self.name is None or (self.port is not None and self.port != port):
            return False
        return host.endswith("." + self.name) if self.suffix else host == self.name

    def matches_address(self, addr: Address, port: int) -> bool:
        if self.network is None or (self.port is not None and self.port != port):
            return False
        return addr.version == self.network.version and addr in self.network


def parse_entry(text: str, source: str = ALLOW_KEY) -> Entry:
    """One pattern (see the module doc); raises :class:`HostError` with the reason."""
    raw = text.strip()
    port: int | None = None
    host = raw
    if raw.startswith("["):
        close = raw.find("]")
        if close < 0:
            raise HostError(f"{text!r}: unclosed '['")
        host, rest = raw[:close + 1], raw[close + 1:]
        if rest:
            if not rest.startswith(":"):
                raise HostError(f"{text!r}: only ':PORT' may follow ']'")
            port = parse_port(rest[1:], text)
    elif raw.count(":") == 1:
        host, _, port_text = raw.partition(":")
        port = parse_port(port_text, text)
    if "/" in host:
        try:
            net = ipaddress.ip_network(host.strip("[]"), strict=False)
        except ValueError:
            raise HostError(f"{text!r} is not an address network (10.0.0.0/8, fd00::/8)") from None
        return Entry(None, False, net, port, source, raw)
    if host in ("*", "*."):
        raise HostError(f"{text!r}: '*' would allow every host; name the hosts (or '*.example.com')")
    suffix = host.startswith("*.")
    value = canonical(host[2:] if suffix else host)
    if isinstance(value, str):
        if suffix and "." not in value:
            raise HostError(f"{text!r}: a wildcard over a whole top-level domain is refused")
        if "*" in value:
            raise HostError(f"{text!r}: '*' only as the first label ('*.example.com')")
        return Entry(value, suffix, None, port, source, raw)
    if suffix:
        raise HostError(f"{text!r}: '*.' needs a name, not an address")
    return Entry(None, False, ipaddress.ip_network(value), port, source, raw)


class Decision(NamedTuple):
    """What :meth:`Rules.decide` concluded: allowed or not, why (a sentence naming the host and the policy key),
    the canonical host, and whether an exact entry listed it (which allows non-public resolutions)."""

    allowed: bool
    message: str
    host: str | Address
    exact: bool = False


class Rules:
    """The allow and deny entries of one plan."""

    def __init__(self, allow: list[Entry], deny: list[Entry]) -> None:
        self.allow = allow
        self.deny = deny

    def decide(self, host: str, port: int) -> Decision:
        """Deny before allow, on the name (nothing resolved yet) or the literal address."""
        try:
            value = canonical(host)
        except HostError as exc:
            return Decision(False, f"{exc}", host)
        shown = f"{_show(value)}:{port}"
        if not isinstance(value, str):
            return self._decide_literal(value, port, shown)
        for entry in self.deny:
            if entry.matches_name(value, port):
                return Decision(False, f"{shown} is denied by {entry.source} entry {entry.text!r}", value)
        exact = [e for e in self.allow if e.matches_name(value, port) and not e.suffix]
        if exact:
            return Decision(True, f"{shown} allowed by {exact[0].source} ({exact[0].text})", value, exact=True)
        for entry in self.allow:
            if entry.matches_name(value, port):
                return Decision(True, f"{shown} allowed by {entry.source} ({entry.text})", value)
        return Decision(False, f"{shown} is not an allowed host: add {_show(value)!r} to {ALLOW_KEY} "
                               "(.orchestration/policy.yaml) or to the intent's network.allow", value)

    def _decide_literal(self, addr: Address, port: int, shown: str) -> Decision:
        why = self.address_denied(addr, port)
        if why is not None:
            return Decision(False, f"{shown} is denied by {why}", addr)
        for entry in self.allow:
            if entry.matches_address(addr, port):
                return Decision(True, f"{shown} allowed by {entry.source} ({entry.text})", addr, exact=True)
        return Decision(False, f"{shown}: IP address literals are refused unless listed: add {_show(addr)!r} to "
                               f"{ALLOW_KEY}", addr)

    def address_denied(self, addr: Address, port: int) -> str | None:
        """A deny entry covering ``addr`` (or the IPv4 address it carries), as text, or None."""
        carried = embedded_ipv4(addr) if isinstance(addr, ipaddress.IPv6Address) else None
        for entry in self.deny:
            if entry.matches_address(addr, port) or (carried is not None and entry.matches_address(carried, port)):
                return f"{entry.source} entry {entry.text!r}"
        return None

    def check_address(self, name: str, addr: Address, port: int, exact: bool) -> str | None:
        """Why the allowed ``name`` may not be dialled at ``addr`` (what it resolved to), or None."""
        denied = self.address_denied(addr, port)
        if denied is not None:
            return f"{name} resolves to {addr}, denied by {denied}"
        if any(e.matches_address(addr, port) for e in self.allow):
            return None
        carried = embedded_ipv4(addr) if isinstance(addr, ipaddress.IPv6Address) else None
        for candidate in (addr, carried):
            if candidate is None:
                continue
            if any(candidate in net for net in METADATA if net.version == candidate.version):
                return (f"{name} resolves to a cloud metadata address ({candidate}): refused unless {ALLOW_KEY} "
                        "lists that address")
            if exact:
                continue
            for net, why in NON_PUBLIC:
                if net.version == candidate.version and candidate in net:
                    return (f"{name} resolves to {why} ({candidate}), refused for a name matched by a wildcard: "
                            f"list {name!r} itself in {ALLOW_KEY}")
        return None


def _show(value: str | Address) -> str:
    return f"[{value}]" if isinstance(value, ipaddress.IPv6Address) else str(value)


def rules(allow: list[tuple[str, str]], deny: list[tuple[str, str]]) -> Rules:
    """:class:`Rules` from (pattern, source) pairs; a pattern that does not parse is skipped (validated where the
    policy is loaded: one that slipped past allows nothing, and denies nothing it could not name)."""
    def parsed(pairs: list[tuple[str, str]]) -> list[Entry]:
        out = []
        for text, source in pairs:
            try:
                out.append(parse_entry(text, source))
            except HostError:
                continue
        return out

    return Rules(parsed(allow), parsed(deny))


__all__ = ["ALLOW_KEY", "DENY_KEY", "Decision", "Entry", "HostError", "Rules", "canonical", "embedded_ipv4",
           "parse_entry", "rules", "split_target"]
