"""`orch key` and the signature side of `orch trace verify` / `anchor` (docs/ledger.md §4a), through the real CLI
entry point on ledgers written by the real post-hook in a real git repository."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from orchestrator import ledger
from orchestrator.state import keys
from orchestrator.cli import main
from orchestrator.ledger.signing import Signer
from tests.commands.test_trace import WS, git, make_ws
from tests.ledger.test_ledger import rec


@pytest.fixture()
def kws(tmp_path, monkeypatch: pytest.MonkeyPatch) -> WS:
    return make_ws(tmp_path, monkeypatch)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def teammate() -> tuple[Signer, str]:
    k = Ed25519PrivateKey.generate()
    raw = keys.raw_public(k)
    return Signer(k, keys.key_id(raw)), keys.public_line(raw, "bob@laptop")


def test_show_prints_the_public_line_and_never_the_private_key(kws: WS, capsys) -> None:
    rc, out, _ = cli(capsys, "key", "show")
    line = out.splitlines()[0]
    raw, _ = keys.parse_public_line(line)
    assert rc == 0 and keys.key_id(raw) in out and "PRIVATE" not in out
    rc, out, _ = cli(capsys, "key", "show", "--json")
    assert json.loads(out)["public"] == line


def test_trust_a_teammate_then_untrust(kws: WS, capsys) -> None:
    kws.edit("a.py", "x = 1\n")
    bob, line = teammate()
    ledger.append(kws.ledger, rec(1), fsync=False, signer=bob)
    rc, _, err = cli(capsys, "trace", "verify")
    assert rc == 1 and f"signed by a key that is not trusted (not in trusted_keys) (key {bob.key_id})" in err
    assert "hint: to trust a teammate's key" in err and "orch key trust" in err
    rc, out, _ = cli(capsys, "key", "trust", line)
    assert rc == 0 and f"trusted: {bob.key_id}" in out
    assert cli(capsys, "key", "trust", line)[1].startswith("already trusted")
    rc, out, _ = cli(capsys, "trace", "verify")
    assert rc == 0 and "signatures: 2 signed, 0 unsigned legacy" in out, out
    rc, out, _ = cli(capsys, "key", "list")
    assert bob.key_id in out and "(this machine)" in out
    assert cli(capsys, "key", "untrust", bob.key_id[:8])[0] == 0
    assert cli(capsys, "trace", "verify")[0] == 1


def test_trust_rejects_a_malformed_line(kws: WS, capsys) -> None:
    rc, _, err = cli(capsys, "key", "trust", "ed25519 not-base64!")
    assert rc == 1 and "not base64" in err


def test_verify_lists_every_problem_and_json_counts(kws: WS, capsys) -> None:
    for i in range(3):
        kws.edit("a.py", f"x = {i}\n")
    ledger.append(kws.ledger, rec(7), fsync=False)  # unsigned after signed
    ledger.append(kws.ledger, rec(8), fsync=False, signer=teammate()[0])
    rc, _, err = cli(capsys, "trace", "verify")
    assert rc == 1
    assert "agent_trace.jsonl:4: unsigned record after signed history" in err
    assert "agent_trace.jsonl:5: signed by a key that is not trusted" in err
    rc, out, _ = cli(capsys, "trace", "verify", "--json")
    d = json.loads(out)
    assert d["counts"] == {"unsigned": 1, "unknown-key": 1} and d["signed"] == 3 and d["bad_line"] == 4


def test_anchor_verb_and_history(kws: WS, capsys) -> None:
    for i in range(2):
        kws.edit("a.py", f"x = {i}\n")
    rc, out, _ = cli(capsys, "trace", "anchor")
    assert rc == 0 and out.startswith("anchor: line 2,")
    git(kws.root, "add", "-A")
    git(kws.root, "commit", "-qm", "two records")
    rc, out, _ = cli(capsys, "trace", "verify", "--history")
    assert rc == 0 and "history ok: 1 committed version(s)" in out
    kws.ledger.write_bytes(kws.ledger.read_bytes().splitlines(keepends=True)[0])  # the last record deleted
    rc, _, err = cli(capsys, "trace", "verify", "--history")
    assert rc == 1 and "this machine appended record" in err and "history: the working ledger" in err
    assert "orch trace anchor --reset" in err
    rc, out, _ = cli(capsys, "trace", "anchor", "--reset")
    assert rc == 0 and out.startswith("re-anchored: line 1,")
    assert cli(capsys, "trace", "verify")[0] == 0


def test_doctor_reports_the_key_and_whether_it_is_trusted(kws: WS, capsys) -> None:
    from orchestrator.commands.doctor import run_checks
    from orchestrator.config.workspace import Workspace

    kws.edit("a.py", "x = 1\n")  # creates the key and trusted_keys
    found = {f.check: f for f in run_checks(Workspace(kws.root), ["orchestrator.state.keys:check_signing"])}
    assert found["ledger.key"].status == "ok" and found["ledger.trust"].status == "ok"
    keys.trusted_path(kws.root / ".orchestration").write_text("# nobody\n")
    found = {f.check: f for f in run_checks(Workspace(kws.root), ["orchestrator.state.keys:check_signing"])}
    assert found["ledger.trust"].status == "warn" and "orch key trust --self" in found["ledger.trust"].fix
