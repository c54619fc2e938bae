"""The allow-list semantics (orchestrator/egress/hosts.py): canonical hosts, patterns, deny before allow, literals
and what a name may resolve to."""

from __future__ import annotations

import ipaddress

import pytest

from orchestrator.egress import hosts
from orchestrator.egress.hosts import HostError, canonical, parse_entry, rules


@pytest.mark.parametrize("spelling", ["127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.1", "0x7f000001",
                                      "127.0.0.1.", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "0X7F.0.0.1"])
def test_every_numeric_spelling_of_loopback_is_loopback(spelling: str) -> None:
    assert canonical(spelling) == ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize("bad", ["", "[]", "fe80::1%eth0", "a b.com", "evil.com/x", "exa$mple.com", "[example.com]",
                                 "ünicode.com", "-leading.com", "x" * 64 + ".com", "1.2.3.4.5", "08.1.1.1"])
def test_what_is_neither_a_name_nor_an_address_is_refused(bad: str) -> None:
    with pytest.raises(HostError):
        canonical(bad)


def test_names_are_lower_case_without_the_trailing_dot() -> None:
    assert canonical("PyPI.org.") == "pypi.org"
    assert canonical("[2001:DB8::1]") == ipaddress.IPv6Address("2001:db8::1")


@pytest.mark.parametrize("pattern", ["*", "*.", "*.com", "*.*.example.com", "exa*mple.com", "*.10.0.0.1",
                                     "example.com:0", "example.com:99999", "[::1", "10.0.0.0/33"])
def test_patterns_that_would_allow_too_much_or_do_not_parse_are_refused(pattern: str) -> None:
    with pytest.raises(HostError):
        parse_entry(pattern)


def test_a_suffix_pattern_matches_subdomains_only() -> None:
    r = rules([("*.example.com", "policy")], [])
    assert r.decide("api.example.com", 443).allowed
    assert r.decide("a.b.example.com", 443).allowed
    assert not r.decide("example.com", 443).allowed
    assert not r.decide("badexample.com", 443).allowed
    assert not r.decide("example.com.evil.org", 443).allowed


def test_an_exact_pattern_and_a_port() -> None:
    r = rules([("github.com:22", "policy"), ("pypi.org", "policy")], [])
    assert r.decide("github.com", 22).allowed and not r.decide("github.com", 443).allowed
    assert r.decide("PYPI.ORG.", 8443).allowed  # no port in the pattern: every port


def test_deny_wins_over_allow_and_names_its_key() -> None:
    r = rules([("*.example.com", "sandbox.network.allow")], [("secret.example.com", "sandbox.network.deny")])
    d = r.decide("secret.example.com", 443)
    assert not d.allowed and "sandbox.network.deny" in d.message and "secret.example.com" in d.message
    assert r.decide("public.example.com", 443).allowed


def test_a_refusal_names_the_host_and_the_policy_key() -> None:
    d = rules([], []).decide("data.attacker.tld", 443)
    assert not d.allowed
    assert "data.attacker.tld:443" in d.message and hosts.ALLOW_KEY in d.message


def test_ip_literals_only_when_listed() -> None:
    r = rules([("10.1.2.3", "cfg"), ("192.168.0.0/16:8080", "cfg"), ("[::1]:9000", "cfg")], [])
    assert r.decide("10.1.2.3", 443).allowed
    assert not r.decide("10.1.2.4", 443).allowed
    assert r.decide("192.168.7.7", 8080).allowed and not r.decide("192.168.7.7", 80).allowed
    assert r.decide("[::1]", 9000).allowed
    assert not r.decide("127.0.0.1", 9000).allowed
    assert not r.decide("0x7f.1", 80).allowed  # loopback in disguise, not listed


def test_a_listed_loopback_address_is_not_reached_through_another_spelling_of_another_address() -> None:
    r = rules([("127.0.0.2", "cfg")], [])
    assert r.decide("2130706434", 80).allowed  # the same address
    assert not r.decide("2130706433", 80).allowed  # 127.0.0.1


def test_denied_addresses_hold_for_the_ipv4_an_ipv6_address_carries() -> None:
    r = rules([("*.example.com", "a"), ("::/0", "a")], [("127.0.0.0/8", "sandbox.network.deny")])
    assert not r.decide("[::ffff:127.0.0.1]", 80).allowed
    assert r.check_address("x.example.com", ipaddress.IPv6Address("64:ff9b::7f00:1"), 80, exact=False) is not None


@pytest.mark.parametrize("addr", ["127.0.0.1", "10.0.0.5", "172.20.1.1", "192.168.1.1", "100.64.0.1", "169.254.1.1",
                                  "0.0.0.0", "::1", "fd12::1", "fe80::1", "::ffff:10.0.0.1", "2002:7f00:1::1"])
def test_a_wildcard_name_may_not_resolve_to_a_non_public_address(addr: str) -> None:
    r = rules([("*.example.com", "policy")], [])
    why = r.check_address("x.example.com", ipaddress.ip_address(addr), 443, exact=False)
    assert why is not None and "x.example.com" in why


def test_an_exactly_listed_name_may_resolve_to_a_private_address_but_never_to_metadata() -> None:
    r = rules([("registry.corp", "npm registry (~/.npmrc)")], [])
    d = r.decide("registry.corp", 443)
    assert d.allowed and d.exact
    assert r.check_address("registry.corp", ipaddress.ip_address("10.0.0.5"), 443, exact=True) is None
    for metadata in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"):
        why = r.check_address("registry.corp", ipaddress.ip_address(metadata), 443, exact=True)
        assert why is not None and "metadata" in why


def test_a_listed_metadata_address_is_reachable() -> None:
    r = rules([("169.254.169.254", "policy")], [])
    assert r.decide("169.254.169.254", 80).allowed


def test_public_addresses_pass() -> None:
    r = rules([("*.example.com", "policy")], [])
    assert r.check_address("x.example.com", ipaddress.ip_address("93.184.216.34"), 443, exact=False) is None


def test_patterns_that_do_not_parse_allow_nothing() -> None:
    r = rules([("*", "bad"), ("*.com", "bad")], [])
    assert not r.allow and not r.decide("example.com", 443).allowed
