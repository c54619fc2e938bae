"""The console's request guard against a real server: Host, Origin, Sec-Fetch-Site, CSRF, content type, size,
and no decision by GET — every refusal is a clear JSON error and leaves the waiting call pending."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from orchestrator.approvals import Broker
from tests.approvals.signed_support import answer_of, decide, passkey_workspace, pending_request, sign, spawn_hook
from tests.approvals.softkey import SoftKey
from tests.web.support import free_port, served


@pytest.fixture
def scene(tmp_path: Path) -> Any:
    port = free_port()
    alice = SoftKey("alice", origin=f"http://localhost:{port}")
    ws = passkey_workspace(tmp_path, alice, port=port)
    proc = spawn_hook(ws, "rm -rf build")
    req = pending_request(ws)
    with served(ws, port) as console:
        yield ws, console, req, proc, alice
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _post(console: Any, path: str, body: Any = None, *, raw: bytes | None = None, **headers: str) -> httpx.Response:
    base = {"Origin": console.url, "X-CSRF-Token": console.csrf_token, "Content-Type": "application/json"}
    base.update(headers)
    data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
    return httpx.post(console.url + path, content=data, headers={k: v for k, v in base.items() if v})


def test_the_page_is_served_with_its_token_and_a_strict_policy(scene: Any) -> None:
    _ws, console, _req, _proc, _alice = scene
    page = httpx.get(console.url + "/")
    assert page.status_code == 200 and f'content="{console.csrf_token}"' in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "http" not in csp
    assert page.headers["x-frame-options"] == "DENY"
    for asset in ("/static/console.js", "/static/console.css"):
        text = httpx.get(console.url + asset).text
        assert "http://" not in text.replace("http://localhost", "") and "https://" not in text  # no CDN
    state = httpx.get(console.url + "/api/state").json()
    (item,) = state["items"]
    assert item["title"] == "rm -rf build" and item["signed"] and item["preview"]["text"] == "rm -rf build"
    assert state["passkey"]["approvers"] == ["alice"] and state["passkey"]["origin_ok"]


@pytest.mark.parametrize("headers, status, error", [
    ({"Origin": ""}, 403, "origin-refused"),
    ({"Origin": "http://evil.example"}, 403, "origin-refused"),
    ({"Origin": "http://localhost:1"}, 403, "origin-refused"),
    ({"Sec-Fetch-Site": "cross-site"}, 403, "origin-refused"),
    ({"X-CSRF-Token": ""}, 403, "csrf-refused"),
    ({"X-CSRF-Token": "wrong"}, 403, "csrf-refused"),
    ({"Content-Type": "text/plain"}, 403, "content-type-refused"),
])
def test_state_changing_requests_need_origin_csrf_and_json(scene: Any, headers: dict, status: int,
                                                          error: str) -> None:
    ws, console, req, proc, alice = scene
    body = {"decision": "approve", "scope": "once", "assertion": sign(alice, req)}
    got = _post(console, f"/api/items/approval/{req.id}/decide", body, **headers)
    assert got.status_code == status and got.json()["error"]["type"] == error
    assert not Broker(ws.shared_run_dir).decision_path(req.id).exists() and proc.poll() is None


def test_wrong_host_oversized_malformed_and_get_are_refused(scene: Any) -> None:
    ws, console, req, proc, alice = scene
    path = f"/api/items/approval/{req.id}/decide"
    assert httpx.get(console.url + "/", headers={"Host": "evil.example"}).status_code == 421
    assert httpx.get(console.url + path).status_code == 405  # no decision by GET
    big = _post(console, path, raw=b'{"decision": "approve", "pad": "' + b"x" * 70_000 + b'"}')
    assert big.status_code == 413 and big.json()["error"]["type"] == "body-too-large"
    bad = _post(console, path, raw=b'{"decision": ')
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]["message"]
    unsigned = _post(console, path, {"decision": "approve", "scope": "once"})
    assert unsigned.status_code == 400 and "no passkey assertion" in unsigned.json()["error"]["message"]
    forged = _post(console, path, {"decision": "approve", "scope": "once",
                                   "assertion": SoftKey("mallory").assertion(b"x" * 32)})
    assert "not a registered approver" in forged.json()["error"]["message"]
    other = _post(console, "/api/items/approval/19aa2b3c4d5-000000/challenge", {"decision": "approve"})
    assert other.status_code == 409 and "no pending approval" in other.json()["error"]["message"]
    assert not Broker(ws.shared_run_dir).decision_path(req.id).exists() and proc.poll() is None
    # and after all that, a good decision through the same endpoint still works
    ok = _post(console, path, {"decision": "approve", "scope": "once", "assertion": sign(alice, req)})
    assert ok.status_code == 200 and ok.json()["approver"] == "alice"
    assert answer_of(proc).get("permissionDecision", "allow") == "allow"


def test_the_challenge_endpoint_gives_the_hash_of_the_canonical_request(scene: Any) -> None:
    from orchestrator.approvals.approvers import b64url
    from orchestrator.approvals.passkey import approval_fields, challenge

    _ws, console, req, _proc, alice = scene
    got = _post(console, f"/api/items/approval/{req.id}/challenge",
                {"decision": "reject", "scope": "once", "reason": "no"}).json()
    assert got["challenge"] == b64url(challenge(approval_fields(req, "reject", "once", "no")))
    assert got["rpId"] == "localhost" and got["userVerification"] == "required"
    assert got["allowCredentials"] == [{"type": "public-key", "id": alice.approver().credential_id}]


def test_a_decision_already_used_cannot_be_sent_twice(scene: Any) -> None:
    ws, console, req, proc, alice = scene
    decide(ws, req, sign(alice, req))
    assert answer_of(proc).get("permissionDecision", "allow") == "allow"
    again = _post(console, f"/api/items/approval/{req.id}/decide",
                  {"decision": "approve", "scope": "once", "assertion": sign(alice, req)})
    assert again.status_code == 409 and "already resolved" in again.json()["error"]["message"]
