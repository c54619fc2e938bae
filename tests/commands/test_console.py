"""``orch console``, ``orch approver`` and the doctor's passkey check: real processes, real sockets, real TLS."""

from __future__ import annotations

import datetime
import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from orchestrator.adapters.installer import PRE_TIMEOUT_S
from orchestrator.approvals.signed import HOST_HOOK_TIMEOUT
from orchestrator.cli import main
from orchestrator.commands.doctor import run_checks
from orchestrator.config.workspace import Workspace, init
from tests.approval_support import ROOT
from tests.approvals.signed_support import passkey_policy
from tests.approvals.softkey import SoftKey, approvers_file
from tests.waiting import TIMEOUT, wait_until
from tests.web.support import free_port

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _ws(tmp_path: Path, policy: str | None = None) -> Workspace:
    init(tmp_path)
    ws = Workspace.at(tmp_path)
    if policy is not None:
        ws.policy_file.write_text(policy, encoding="utf-8")
    return ws


def _self_signed(tmp_path: Path) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_listening_beyond_loopback_needs_tls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ws(tmp_path)
    assert main(["console", "-C", str(tmp_path), "--host", "0.0.0.0", "--port", str(free_port())]) == 1
    assert "needs TLS" in capsys.readouterr().err
    assert main(["console", "-C", str(tmp_path), "--host", "0.0.0.0", "--tls-cert", "x.pem"]) == 1
    assert "go together" in capsys.readouterr().err


def test_the_console_serves_https_with_a_certificate_and_says_where(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    ws = _ws(tmp_path / "ws")
    cert, key = _self_signed(tmp_path)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "console", "-C", str(ws.root), "--host",
                             "0.0.0.0", "--port", str(port), "--tls-cert", cert, "--tls-key", key],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert f"https://localhost:{port}" in first
        wait_until(lambda: (ws.run_dir / "console.json").exists(), what="the console's state file")
        context = ssl.create_default_context(cafile=cert)
        page = wait_until(lambda: _get(f"https://localhost:{port}/", context), what="the page over TLS")
        assert page.status_code == 200 and "csrf-token" in page.text
        # a plain-HTTP client gets no page
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://localhost:{port}/", timeout=5)
        url = subprocess.run([sys.executable, "-m", "orchestrator", "console", "--url", "-C", str(ws.root)],
                             capture_output=True, text=True, env=ENV, timeout=TIMEOUT)
        assert url.stdout.strip() == f"https://localhost:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
    assert not (ws.run_dir / "console.json").exists()


def _get(url: str, context: ssl.SSLContext) -> httpx.Response | None:
    try:
        return httpx.get(url, verify=context, timeout=5)
    except httpx.ConnectError:
        return None


def test_console_url_without_a_console_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ws(tmp_path)
    assert main(["console", "--url", "-C", str(tmp_path)]) == 1
    assert "no console is running" in capsys.readouterr().err


def test_approver_list_and_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _ws(tmp_path)
    assert main(["approver", "list", "-C", str(tmp_path)]) == 1
    assert "no approvers file" in capsys.readouterr().err
    alice, bob = SoftKey("alice"), SoftKey("bob")
    approvers_file(ws.orch_dir, alice, bob)
    assert main(["approver", "list", "-C", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "alice" in out and "bob" in out and "localhost" in out
    assert main(["approver", "remove", "alice", "-C", str(tmp_path)]) == 0
    assert "removed 1 passkey" in capsys.readouterr().out
    assert main(["approver", "remove", "alice", "-C", str(tmp_path)]) == 1
    assert main(["approver", "add", "bad name", "-C", str(tmp_path), "--no-wait"]) == 1
    assert "invalid approver name" in capsys.readouterr().err


def test_doctor_says_whether_anybody_can_approve(tmp_path: Path) -> None:
    ws = _ws(tmp_path, passkey_policy())
    check = ["orchestrator.approvals.signed:check_passkey"]
    (finding,) = run_checks(ws, check)
    assert finding.status == "fail" and "no approvers file" in finding.message
    approvers_file(ws.orch_dir, SoftKey("alice", rp_id="example.org"))
    (finding,) = run_checks(ws, check)
    assert finding.status == "fail" and "for 'localhost'" in finding.message
    approvers_file(ws.orch_dir, SoftKey("alice"))
    (finding,) = run_checks(ws, check)
    assert (finding.status, finding.message) == ("ok", "approvers for localhost: alice")
    ws.policy_file.write_text(passkey_policy().replace("channel: passkey", "channel: passkey\n  timeout_seconds: 900"))
    findings = {f.check: f for f in run_checks(ws, check)}
    assert findings["approvals.timeout"].status == "warn"
    ws.policy_file.write_text("version: 1\napproval:\n  channel: tui\n")
    assert run_checks(ws, check) == []


def test_the_doctor_knows_the_hosts_hook_timeout() -> None:
    assert HOST_HOOK_TIMEOUT == PRE_TIMEOUT_S


def test_the_hook_client_forwards_claude_codes_entry_point_to_the_daemon() -> None:
    from orchestrator import hookclient

    wire = hookclient.encode_request("claude-code", {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli", "HOME": "/h",
                                                     "ORCH_X": "1"}, b"{}")
    lines = wire.split(b"\n\n")[0].split(b"\n")
    assert b"ORCH_CLAUDE_ENTRYPOINT=sdk-cli" in lines and b"ORCH_X=1" in lines
    assert not any(line.startswith((b"HOME", b"CLAUDE_CODE")) for line in lines)
