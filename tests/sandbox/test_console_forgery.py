"""A sandboxed command cannot produce a decision nor an intent change (issue 29): not by writing into the approval
broker's directory, the approvers file, the grants or the intents file, and not through the web console — which the
default network rule keeps out of its reach, and which, reached anyway (``sandbox.network: allow``), takes nothing
without the approver's passkey: no decision, no intent created or changed.

Judged on what the REAL waiting hook decides, with the real pipeline, the real launcher and a real console."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.approvals import Broker
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from tests.approval_support import ROOT
from tests.approvals.signed_support import (
    answer_of,
    decide,
    passkey_workspace,
    pending_request,
    sign,
    spawn_hook,
    still_pending,
)
from tests.approvals.softkey import SoftKey
from tests.sandbox.conftest import needs_landlock
from tests.sandbox.test_pidns import _can_isolate
from tests.web.support import free_port, served

pytestmark = needs_landlock

#: the attacker: answers every pending request it finds, registers itself as an approver, plants a grant, edits the
#: intents file, and asks the console to approve and to create an intent owning everything (with the page's own
#: CSRF token and Origin, and an assertion of its own making)
FORGE = r"""
import glob, json, os, re, sys, urllib.request
approvals, orch_dir, url, assertion = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
done = []
def attempt(what, fn):
    try:
        fn()
        done.append(what)
    except OSError as exc:
        done.append("refused " + what + ": " + type(exc).__name__)
ids = [os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(approvals, "*.request.json"))]
for rid in ids:
    def answer(rid=rid):
        with open(os.path.join(approvals, rid + ".decision.json"), "w") as fh:
            json.dump({"id": rid, "decision": "approve", "scope": "once", "by": "forged", "assertion": assertion}, fh)
    attempt("answered", answer)
attempt("registered", lambda: open(os.path.join(orch_dir, "approvers"), "a").write("passkey mallory x\n"))
attempt("granted", lambda: open(os.path.join(approvals, "grants.json"), "w").write('{"grants": []}'))
attempt("wrote intents", lambda: open(os.path.join(orch_dir, "active_intents.yaml"), "a").write("# mine\n"))
try:
    page = urllib.request.urlopen(url + "/", timeout=5).read().decode()
    done.append("reached the console")
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    # the run dir is hidden from the sandbox: the console's own state names the pending requests
    state = json.loads(urllib.request.urlopen(url + "/api/state", timeout=5).read())
    ids = [i["id"] for i in state["items"]]
    done.append(f"read {len(ids)} pending")
    for rid in ids:
        attempt("answered", lambda rid=rid: open(os.path.join(approvals, rid + ".decision.json"), "w").write("{}"))
        body = json.dumps({"decision": "approve", "scope": "once", "assertion": assertion}).encode()
        req = urllib.request.Request(url + f"/api/items/approval/{rid}/decide", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Origin": url,
                                              "X-CSRF-Token": token})
        try:
            urllib.request.urlopen(req, timeout=5)
            done.append("console approved")
        except urllib.error.HTTPError as exc:
            done.append(f"console refused {exc.code}: " + json.loads(exc.read())["error"]["message"])
    def post(path, body):
        req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Origin": url,
                                              "X-CSRF-Token": token})
        return json.loads(urllib.request.urlopen(req, timeout=5).read())
    try:
        prepared = post("/api/intents/challenge", {"op": "new", "fields": {"name": "mine", "owned_scope": ["**"]}})
        done.append("prepared an intent change")
        post("/api/intents/apply", {"operation": prepared["operation"]["nonce"], "assertion": assertion})
        done.append("changed an intent")
    except urllib.error.HTTPError as exc:
        done.append(f"intent change refused {exc.code}: " + json.loads(exc.read())["error"]["message"])
except OSError as exc:
    done.append("console unreachable: " + type(getattr(exc, "reason", exc)).__name__)
print(json.dumps(done))
"""


def _sandboxed(ws_root: Path, command: str) -> list[str]:
    """``command`` as a governed agent's Bash call: allowed into the kernel sandbox (it only runs code), run."""
    gov = Governor(ws_root)
    call = to_call("Bash", {"command": command}, session_id="attacker", agent="claude-code", cwd=str(ws_root))
    gov.select_intent("INT-1", "attacker")
    verdict = gov.pre(call, sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    proc = subprocess.run(["/bin/bash", "-c", verdict.command], cwd=ws_root, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    gov.post(call)
    assert proc.returncode == 0, proc
    return json.loads(proc.stdout)


@pytest.mark.parametrize("network", ["default", "allow"])
def test_a_sandboxed_script_produces_no_decision(tmp_path: Path, network: str) -> None:
    port = free_port()
    alice = SoftKey("alice", origin=f"http://localhost:{port}")
    extra = "sandbox:\n  network: allow\n" if network == "allow" else ""
    ws = passkey_workspace(tmp_path, alice, port=port)
    ws.policy_file.write_text(ws.policy_file.read_text() + extra)
    approvers_before = (ws.orch_dir / "approvers").read_bytes()
    intents_before = ws.intents_file.read_bytes()
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "forge.py").write_text(FORGE)
    victim = spawn_hook(ws, "rm -rf build")
    req = pending_request(ws)
    mallory = SoftKey("mallory", origin=f"http://localhost:{port}")
    with served(ws, port):
        done = _sandboxed(tmp_path, f"{sys.executable} src/forge.py {ws.shared_run_dir / 'approvals'} "
                                    f"{ws.orch_dir} http://localhost:{port} '{json.dumps(sign(mallory, req))}'")
        assert still_pending(ws, req) and victim.poll() is None, done
        assert not Broker(ws.shared_run_dir).decision_path(req.id).exists()
        # the person answers: the waiting hook gets *that* answer
        decide(ws, req, sign(alice, req, "reject", reason="not now"), "reject", reason="not now")
        answer = answer_of(victim)
    assert answer["permissionDecision"] == "deny" and "not now" in answer["permissionDecisionReason"], done
    assert not {"answered", "registered", "granted", "console approved", "wrote intents", "changed an intent"} \
        & set(done), done
    assert (ws.orch_dir / "approvers").read_bytes() == approvers_before
    assert ws.intents_file.read_bytes() == intents_before
    if network == "default":
        # egress by host: the command's own network namespace, whose loopback has no console (connection refused);
        # where the kernel refuses one, Landlock's port rules refuse the connect
        expected = "ConnectionRefusedError" if _can_isolate() else "PermissionError"
        assert f"console unreachable: {expected}" in done, done
    else:
        assert "reached the console" in done and "read 1 pending" in done, done
        assert any(d.startswith("console refused 400") and "not a registered approver" in d for d in done), done
        assert any(d.startswith("intent change refused 400") and "not a registered approver" in d for d in done), done
