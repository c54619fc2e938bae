"""Signed, anchored ledger (issue 22 item 2): every forgery below is reported by ``verify``; untampered ledgers
(legacy history, union merges, repaired torn tails) verify ok. Real files, real keys (``cryptography``), real git.

The attacker of these tests can rewrite any byte of the workspace (the ledger, ``trusted_keys``) and recompute any
hash, but cannot read this machine's private key (outside the workspace; the sandbox denies it:
tests/sandbox) nor the local anchor.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from orchestrator import ledger
from orchestrator.state import keys
from orchestrator.ledger import anchor, signing
from orchestrator.ledger.format import GENESIS, make_line, sig_fields  # noqa: F401  (sig_fields: layout doc)
from orchestrator.ledger.read import DuplicateKeyError, loads_record
from orchestrator.ledger.schema import _canonical
from tests.ledger.test_ledger import rec

N = 6


# ----------------------------------------------------------------------------------------------------- helpers

def rehash(line: bytes) -> bytes:
    """The attacker recomputes a line's chain hash (no key needed)."""
    h = ledger.line_hash(line)
    return line[:-(len('"}}}}') + 71)] + h.encode() + b'"}}}}'


def set_prev(line: bytes, prev: str) -> bytes:
    return re.sub(rb'"prev":"sha256:[0-9a-f]{64}"', b'"prev":"' + prev.encode() + b'"', line)


def hash_of(line: bytes) -> str:
    return json.loads(line)["metadata"][ledger.NS]["chain"]["hash"]


def rechain(lines: list[bytes], start: int = 0) -> list[bytes]:
    """Re-link and re-hash every line from ``start`` on (what an attacker without the key can do)."""
    out = list(lines)
    for i in range(start, len(out)):
        out[i] = rehash(set_prev(out[i], GENESIS if i == 0 else hash_of(out[i - 1])))
    return out


def attacker_signer() -> signing.Signer:
    k = Ed25519PrivateKey.generate()
    return signing.Signer(k, keys.key_id(keys.raw_public(k)))


def resign(line: bytes, signer: signing.Signer, prev: str, ledger_id: str) -> bytes:
    """A line re-made (content kept) with ``prev`` and signed by ``signer``."""
    obj = json.loads(line)
    ns = obj["metadata"][ledger.NS]
    for k in ("sig", "chain", "merge_parents"):
        ns.pop(k, None)
    return make_line(obj, prev, signer=signer, ledger_id=ledger_id)[0]


class Ledger:
    """A signed ledger in a real (non-git) workspace, this machine's key trusted, with its local anchor."""

    def __init__(self, root: Path, n: int = N, legacy: int = 0) -> None:
        self.root = root
        self.orch = root / ".orchestration"
        self.path = self.orch / "agent_trace.jsonl"
        self.anchor = anchor.for_workspace(root, self.path)
        self.signer = signing.local_signer()
        keys.add_trusted(self.orch, keys.own_public_line())
        for i in range(legacy):
            ledger.append(self.path, rec(i), fsync=False)
        for i in range(legacy, legacy + n):
            ledger.append(self.path, rec(i), fsync=False, signer=self.signer, anchor=self.anchor)

    def lines(self) -> list[bytes]:
        return self.path.read_bytes().splitlines()

    def write(self, lines: list[bytes]) -> None:
        self.path.write_bytes(b"".join(x + b"\n" for x in lines))

    def verify(self, **kw) -> ledger.VerifyResult:
        return ledger.verify(self.path, anchor=self.anchor, **kw)

    def identity(self) -> str:
        return signing.ledger_identity(self.lines()[0])


@pytest.fixture
def led(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "repo")


def described(res: ledger.VerifyResult) -> str:
    return " | ".join([str(res.reason), *res.counts, *(p["message"] for p in res.problems)])


# ----------------------------------------------------------------------------------------------------- forgeries

def f_edit_last_rehash(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-9"'))
    L.write(ls)


def f_delete_last(L: Ledger) -> None:
    L.write(L.lines()[:-1])


def f_rewrite_middle_rechain(L: Ledger) -> None:
    ls = L.lines()
    ls[2] = ls[2].replace(b'"tool_name":"Edit"', b'"tool_name":"Read"')
    L.write(rechain(ls, 2))


def f_append_unsigned_chained(L: Ledger) -> None:
    ledger.append(L.path, rec(99), fsync=False)  # the real writer, without a key


def f_dup_key(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-1","intent_id":"EVIL"'))
    L.write(ls)


def f_empty_file(L: Ledger) -> None:
    L.path.write_bytes(b"")


def f_delete_file(L: Ledger) -> None:
    L.path.unlink()


def f_append_attacker_signed(L: Ledger) -> None:
    ledger.append(L.path, rec(99), fsync=False, signer=attacker_signer())


def f_resign_all_attacker(L: Ledger) -> None:
    a = attacker_signer()
    out: list[bytes] = []
    for i, line in enumerate(L.lines()):
        lid = GENESIS if i == 0 else signing.ledger_identity(out[0])
        out.append(resign(line, a, GENESIS if i == 0 else hash_of(out[-1]), lid))
    L.write(out)


def f_key_removal(L: Ledger) -> None:
    keys.trusted_path(L.orch).write_text("# emptied\n")


def f_trusted_file_deleted(L: Ledger) -> None:
    keys.trusted_path(L.orch).unlink()


def f_key_field_swapped(L: Ledger) -> None:
    a = attacker_signer()
    keys.add_trusted(L.orch, keys.public_line(keys.raw_public(a._key)))  # even a second trusted key does not help
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(L.signer.key_id.encode(), a.key_id.encode()))
    L.write(ls)


def f_trusted_key_swapped(L: Ledger) -> None:
    a = attacker_signer()
    keys.trusted_path(L.orch).write_text(keys.public_line(keys.raw_public(a._key)) + "\n")


def _other(L: Ledger) -> Ledger:
    return Ledger(L.root.parent / "other-repo", n=4)  # the same machine key: a replay is validly signed


def f_replay_other_repo_first_record(L: Ledger) -> None:
    other = _other(L)
    ls = L.lines()
    L.write(ls + [other.lines()[0]])


def f_replay_other_repo_record_rechained(L: Ledger) -> None:
    other = _other(L)
    ls = L.lines()
    L.write(ls + [rehash(set_prev(other.lines()[2], hash_of(ls[-1])))])


def f_replace_with_other_repo(L: Ledger) -> None:
    shutil.copyfile(_other(L).path, L.path)


def f_truncate_half(L: Ledger) -> None:
    L.write(L.lines()[:N // 2])


def f_restore_old_backup(L: Ledger) -> None:
    backup = L.path.read_bytes()
    ledger.append(L.path, rec(50), fsync=False, signer=L.signer, anchor=L.anchor)
    L.path.write_bytes(backup)


def f_delete_middle(L: Ledger) -> None:
    ls = L.lines()
    L.write(ls[:2] + ls[3:])


def f_swap_two(L: Ledger) -> None:
    ls = L.lines()
    ls[1], ls[2] = ls[2], ls[1]
    L.write(ls)


def f_duplicate_record(L: Ledger) -> None:
    ls = L.lines()
    L.write(ls + [ls[1]])


def f_strip_sig_last(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(re.sub(rb',"sig":\{[^}]*\}', b"", ls[-1]))
    L.write(ls)


def f_strip_all_sigs_rechain(L: Ledger) -> None:
    L.write(rechain([re.sub(rb',"sig":\{[^}]*\}', b"", x) for x in L.lines()]))


def f_ledger_field_changed(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(re.sub(rb'"ledger":"sha256:[0-9a-f]{64}"', b'"ledger":"sha256:' + b"1" * 64 + b'"', ls[-1]))
    L.write(ls)


def f_signature_copied(L: Ledger) -> None:
    ls = L.lines()
    v = re.search(rb'"value":"([^"]+)"', ls[1]).group(1)
    ls[-1] = rehash(re.sub(rb'"value":"[^"]+"', b'"value":"' + v + b'"', ls[-1]))
    L.write(ls)


def f_sig_value_truncated(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(re.sub(rb'"value":"([^"]{80})[^"]+"', rb'"value":"\1"', ls[-1]))
    L.write(ls)


def f_sig_misplaced(L: Ledger) -> None:
    ls = L.lines()
    block = re.search(rb'"sig":\{[^}]*\},', ls[-1]).group(0)
    moved = ls[-1].replace(block, b"").replace(b'"dev.orchestrator":{', b'"dev.orchestrator":{' + block)
    ls[-1] = rehash(moved)
    L.write(ls)


def f_alg_none(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b'"alg":"ed25519"', b'"alg":"none"'))
    L.write(ls)


def f_insert_forged_middle(L: Ledger) -> None:
    ls = L.lines()
    forged = resign(ls[2], attacker_signer(), hash_of(ls[2]), L.identity())
    L.write(rechain(ls[:3] + [forged] + ls[3:], 3))


def f_torn_fragment(L: Ledger) -> None:
    with L.path.open("ab") as f:
        f.write(L.lines()[-1][:100])


def f_dup_key_nested(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b'{"path":"src/a.py","conversations"', b'{"path":"src/a.py","path":"x",'
                                   b'"conversations"', 1))
    L.write(ls)


def f_dup_key_escaped(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-1","intent\\u005fid":"EVIL"'))
    L.write(ls)


def f_empty_line(L: Ledger) -> None:
    ls = L.lines()
    L.write(ls[:3] + [b""] + ls[3:])


def f_merge_parents_added(L: Ledger) -> None:
    ls = L.lines()
    ls[-1] = rehash(ls[-1].replace(b',"sig":{', b',"merge_parents":["' + hash_of(ls[0]).encode() + b'"],"sig":{'))
    L.write(ls)


def f_first_timestamp_rechain_all(L: Ledger) -> None:
    ls = L.lines()
    ls[0] = re.sub(rb'"timestamp":"[^"]+"', b'"timestamp":"2020-01-01T00:00:00.000000Z"', ls[0])
    L.write(rechain(ls))


def f_unsigned_inserted_middle(L: Ledger) -> None:
    ls = L.lines()
    unsigned = make_line(rec(77), hash_of(ls[2]))[0]
    L.write(rechain(ls[:3] + [unsigned] + ls[3:], 3))


def f_anchor_file_garbled(L: Ledger) -> None:
    L.anchor.write_text("{not json")


FORGERIES: list[tuple[Callable[[Ledger], None], str]] = [
    # the cases
    (f_edit_last_rehash, "bad-signature"), (f_delete_last, "anchor"), (f_rewrite_middle_rechain, "bad-signature"),
    (f_append_unsigned_chained, "unsigned"), (f_dup_key, "duplicate key"), (f_empty_file, "anchor"),
    # keys
    (f_append_attacker_signed, "unknown-key"), (f_resign_all_attacker, "unknown-key"), (f_key_removal, "unknown-key"),
    (f_trusted_file_deleted, "unknown-key"), (f_key_field_swapped, "bad-signature"),
    (f_trusted_key_swapped, "unknown-key"),
    # replays from another repository (validly signed by the same trusted key)
    (f_replay_other_repo_first_record, "other-ledger"), (f_replay_other_repo_record_rechained, "bad-signature"),
    (f_replace_with_other_repo, "anchor"),
    # truncation, deletion, reordering, duplication
    (f_delete_file, "anchor"), (f_truncate_half, "anchor"), (f_restore_old_backup, "anchor"),
    (f_delete_middle, "prev hash does not refer"), (f_swap_two, "prev hash does not refer"),
    (f_duplicate_record, "duplicate record"), (f_empty_line, "empty line"), (f_torn_fragment, "torn"),
    # signature blocks
    (f_strip_sig_last, "unsigned"), (f_strip_all_sigs_rechain, "anchor"), (f_ledger_field_changed, "bad-signature"),
    (f_signature_copied, "bad-signature"), (f_sig_value_truncated, "malformed"), (f_sig_misplaced, "malformed"),
    (f_alg_none, "malformed"), (f_merge_parents_added, "bad-signature"),
    # rewriting with re-chaining
    (f_insert_forged_middle, "unknown-key"), (f_first_timestamp_rechain_all, "bad-signature"),
    (f_unsigned_inserted_middle, "unsigned"),
    # duplicated keys
    (f_dup_key_nested, "duplicate key"), (f_dup_key_escaped, "duplicate key"),
    # the anchor itself
    (f_anchor_file_garbled, "anchor"),
]


def test_there_are_at_least_30_forgeries() -> None:
    assert len(FORGERIES) >= 30


@pytest.mark.parametrize("forge,expect", FORGERIES, ids=[f.__name__[2:] for f, _ in FORGERIES])
def test_forgery_is_reported(led: Ledger, forge: Callable[[Ledger], None], expect: str) -> None:
    before = led.verify()
    assert before.ok and before.signed == N and before.legacy == 0, before
    forge(led)
    res = led.verify()
    assert not res.ok, f"{forge.__name__} verified ok: {res}"
    assert expect in described(res), described(res)


# ------------------------------------------------------------------------------------------ untampered ledgers

def test_signed_lines_keep_the_schema(led: Ledger) -> None:
    import jsonschema

    schema = json.loads(ledger.schema_path().read_text())
    v = jsonschema.Draft202012Validator(schema)
    for line in led.lines():
        obj = json.loads(line)
        v.validate(obj)
        assert ledger.check_record(obj) is None
        sig = obj["metadata"][ledger.NS]["sig"]
        assert sig["alg"] == "ed25519" and sig["key"] == led.signer.key_id and len(sig["value"]) == 88
        assert list(obj["metadata"][ledger.NS])[-2:] == ["sig", "chain"]
    assert led.verify(strict=True).ok


def test_first_record_names_genesis_and_later_ones_the_first_line(led: Ledger) -> None:
    ls = led.lines()
    ids = [json.loads(x)["metadata"][ledger.NS]["sig"]["ledger"] for x in ls]
    assert ids[0] == GENESIS
    assert set(ids[1:]) == {"sha256:" + hashlib.sha256(ls[0]).hexdigest()}


def test_legacy_history_then_signed_records_verify_with_a_legacy_count(tmp_path: Path) -> None:
    L = Ledger(tmp_path / "r", n=3, legacy=4)
    res = L.verify()
    assert res.ok and res.legacy == 4 and res.signed == 3, res
    assert any("4 unsigned legacy record(s)" in n for n in res.notes)
    # an unsigned ledger (no key ever used) is all legacy and verifies
    p = tmp_path / "plain" / "agent_trace.jsonl"
    for i in range(3):
        ledger.append(p, rec(i), fsync=False)
    res2 = ledger.verify(p)
    assert res2.ok and res2.legacy == 3 and res2.signed == 0


def test_repaired_torn_tail_verifies(led: Ledger) -> None:
    f_torn_fragment(led)
    assert not led.verify().ok
    rr = ledger.repair(led.path)
    assert rr.quarantined_bytes == 100
    assert led.verify().ok
    ledger.append(led.path, rec(60), fsync=False, signer=led.signer, anchor=led.anchor)
    res = led.verify()
    assert res.ok and res.signed == N + 1


def test_anchor_reset_accepts_a_reviewed_truncation(led: Ledger) -> None:
    f_truncate_half(led)
    assert not led.verify().ok
    a = anchor.reset(led.anchor, str(led.path))
    assert a is not None and a["line"] == N // 2
    assert led.verify().ok


def test_anchor_records_the_last_head_and_line(led: Ledger) -> None:
    a = anchor.read(led.anchor)
    assert a is not None and a["line"] == N and a["head"] == hash_of(led.lines()[-1])
    assert a["offset"] == led.path.stat().st_size
    assert led.anchor.stat().st_mode & 0o777 == 0o600
    assert not str(led.anchor).startswith(str(led.root))


def test_parser_rejects_duplicate_keys() -> None:
    with pytest.raises(DuplicateKeyError):
        loads_record(b'{"a":{"b":1,"b":2}}')
    assert loads_record(b'{"a":{"b":1,"c":2}}') == {"a": {"b": 1, "c": 2}}


def test_show_never_displays_a_duplicated_keys_value(led: Ledger) -> None:
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.ledger import query

    f_dup_key(led)
    rid = json.loads(led.lines()[-1].replace(b',"intent_id":"EVIL"', b""))["id"]
    for key in (f"L{N}", rid[:8]):
        with pytest.raises(OrchestratorError, match="duplicate key 'intent_id'"):
            query.find_record(led.path, key)
    listed = [r for _, r in query.iter_matching(led.path, [], lambda r: True)]
    assert len(listed) == N - 1 and all(r["metadata"][ledger.NS]["intent_id"] == "INT-1" for r in listed)


def test_own_key_is_private_and_outside_the_workspace(led: Ledger) -> None:
    p = keys.private_key_path()
    assert p.stat().st_mode & 0o777 == 0o600
    assert p.parent.stat().st_mode & 0o777 == 0o700
    assert not str(p).startswith(str(led.root))
    assert (p.parent / keys.PUB_NAME).read_text().startswith("ed25519 ")


def test_unknown_key_report_says_how_to_trust_a_teammate(led: Ledger) -> None:
    f_append_attacker_signed(led)
    res = led.verify()
    assert res.counts == {"unknown-key": 1}
    assert any("orch key trust" in h for h in res.hints)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout


def _git_ledger(tmp_path: Path) -> Ledger:
    repo = tmp_path / "g"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text(ledger.GITATTRIBUTES_LINE + "\n")
    (repo / ".gitignore").write_text("run/\n")  # the writers' lock and head cache: runtime state, as in a workspace
    L = Ledger(repo, n=2)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return L


def _append(L: Ledger, i: int) -> None:
    L.anchor = anchor.for_workspace(L.root, L.path)  # the branch checked out now
    ledger.append(L.path, rec(i), fsync=False, signer=L.signer, anchor=L.anchor)


def test_union_merge_of_two_branches_verifies_with_history(tmp_path: Path) -> None:
    from orchestrator.ledger import history

    L = _git_ledger(tmp_path)
    _git(L.root, "checkout", "-qb", "feature")
    _append(L, 10)
    _append(L, 11)
    _git(L.root, "commit", "-qam", "feature work")
    _git(L.root, "checkout", "-q", "main")
    _append(L, 20)
    _git(L.root, "commit", "-qam", "main work")
    _git(L.root, "merge", "-q", "--no-edit", "feature")
    _append(L, 30)  # names the other head as merge parent
    res = L.verify()
    assert res.ok and res.signed == 6 and res.forks == 1, res
    _git(L.root, "commit", "-qam", "after merge")
    h = history.check(L.root, L.path)
    assert h.ok and h.versions == 5 and h.merges == 1, h


def test_history_reports_a_rewritten_commit_and_a_truncated_working_file(tmp_path: Path) -> None:
    from orchestrator.ledger import history

    L = _git_ledger(tmp_path)
    _append(L, 3)
    _git(L.root, "commit", "-qam", "more")
    assert history.check(L.root, L.path).ok
    full = L.lines()
    L.write(full[:-1])  # the working file lost a committed record
    h = history.check(L.root, L.path)
    assert not h.ok and "working ledger is not an append-only extension of HEAD" in h.problems[0]
    L.write(full)
    f_rewrite_middle_rechain(L)  # rewrite history in a new commit (the anchor is on another path: not needed)
    _git(L.root, "commit", "-qam", "rewrite")
    h = history.check(L.root, L.path)
    assert not h.ok and re.search(r"commit [0-9a-f]{12}: the ledger is not an append-only extension", h.problems[0])


def test_history_accepts_a_repaired_torn_tail_that_was_committed(tmp_path: Path) -> None:
    from orchestrator.ledger import history

    L = _git_ledger(tmp_path)
    f_torn_fragment(L)
    _git(L.root, "commit", "-qam", "torn")
    ledger.repair(L.path)
    _append(L, 5)
    _git(L.root, "commit", "-qam", "repaired")
    h = history.check(L.root, L.path)
    assert h.ok, h
    assert L.verify().ok


def test_post_hook_signs_canonical_records_and_bootstraps_trusted_keys(tmp_path: Path) -> None:
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call
    from tests.conftest import make_workspace

    root = make_workspace(tmp_path / "ws")
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    assert keys.trusted_path(root / ".orchestration").exists()  # `orch init` trusts this machine's key
    keys.trusted_path(root / ".orchestration").unlink()  # a workspace initialised before signing existed
    for i in range(3):
        inp = {"file_path": str(root / "src" / f"m{i}.py"), "content": f"v = {i}\n"}
        assert gov.pre(to_call("Write", inp, session_id="s1", cwd=str(root), tool_use_id=f"tu{i}")).allowed
        (root / "src" / f"m{i}.py").write_text(f"v = {i}\n")
        assert gov.post(to_call("Write", inp, session_id="s1", cwd=str(root), tool_use_id=f"tu{i}")) is not None
    trusted = keys.load_trusted(root / ".orchestration")
    assert trusted is not None and list(trusted[0]) == [signing.local_signer().key_id]
    path = root / ".orchestration" / "agent_trace.jsonl"
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3
    for line in lines:
        assert _canonical().fullmatch(line), line[-300:]
        uuid.UUID(json.loads(line)["id"])
    res = ledger.verify(path, anchor=anchor.for_workspace(root, path))
    assert res.ok and res.signed == 3 and res.legacy == 0, res
    assert anchor.read(anchor.for_workspace(root, path))["line"] == 3


def test_switching_branches_uses_each_branchs_anchor(tmp_path: Path) -> None:
    L = _git_ledger(tmp_path)
    _append(L, 3)
    _git(L.root, "commit", "-qam", "main 3")
    _git(L.root, "checkout", "-qb", "feature")
    _append(L, 4)
    _append(L, 5)
    _git(L.root, "commit", "-qam", "feature 4-5")
    _git(L.root, "checkout", "-q", "main")  # the ledger is two records shorter here: not a truncation
    for branch, n in (("main", 3), ("feature", 5), ("main", 3)):
        _git(L.root, "checkout", "-q", branch)
        res = ledger.verify(L.path, anchor=anchor.for_workspace(L.root, L.path))
        assert res.ok and res.records == n, (branch, res)
    L.write(L.lines()[:2])  # but losing main's own last record is
    assert not ledger.verify(L.path, anchor=anchor.for_workspace(L.root, L.path)).ok


def test_a_long_lived_process_follows_a_replaced_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_KEY_DIR", str(tmp_path / "keys"))
    first = signing.local_signer()
    assert signing.local_signer() is first  # cached while the file is unchanged
    keys.private_key_path().unlink()
    second = signing.local_signer()  # created again, and used at once
    assert second.key_id != first.key_id
    keys.private_key_path().chmod(0o644)
    with pytest.raises(keys.KeyFileError, match="readable by others"):
        keys.load_private()
