"""A software WebAuthn authenticator for tests: real P-256 keys, real COSE keys, real assertions.

It builds exactly what a browser and an authenticator send (WebAuthn L2 §6.1, §7.2): ``clientDataJSON`` with
type, challenge and origin; authenticator data with the RP id hash, flags and a sign count; an ECDSA-SHA256
signature over ``authenticatorData || sha256(clientDataJSON)``. py_webauthn verifies them as it verifies a
browser's, so the verifier's refusals (another challenge, a replay, an unknown key, a wrong origin) are tested
against real signatures, not stubs. The browser tests (tests/web/test_browser.py) use Chromium's own virtual
authenticator.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from orchestrator.approvals.approvers import Approver, b64url


@dataclass
class SoftKey:
    """One credential of one person."""

    name: str = "alice"
    rp_id: str = "localhost"
    origin: str = "http://localhost:8470"
    count: int = 0
    user_verified: bool = True
    credential_id: bytes = field(default_factory=lambda: os.urandom(32))
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def cose(self) -> bytes:
        nums = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: nums.x.to_bytes(32, "big"), -3: nums.y.to_bytes(32, "big")})

    def approver(self) -> Approver:
        return Approver(self.name, self.rp_id, b64url(self.credential_id), self.cose(), added="2026-01-01")

    def line(self) -> str:
        return self.approver().line()

    def assertion(self, challenge: bytes, *, origin: str | None = None, rp_id: str | None = None,
                  bump: bool = True) -> dict[str, Any]:
        """``PublicKeyCredential.toJSON()`` of a ``navigator.credentials.get()`` for ``challenge``."""
        if bump:
            self.count += 1
        client = json.dumps({"type": "webauthn.get", "challenge": b64url(challenge),
                             "origin": origin or self.origin, "crossOrigin": False}).encode()
        flags = 0x01 | (0x04 if self.user_verified else 0)
        auth = hashlib.sha256((rp_id or self.rp_id).encode()).digest() + bytes([flags]) + struct.pack(">I", self.count)
        sig = self.key.sign(auth + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        cid = b64url(self.credential_id)
        return {"id": cid, "rawId": cid, "type": "public-key", "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
                "response": {"clientDataJSON": b64url(client), "authenticatorData": b64url(auth),
                             "signature": b64url(sig), "userHandle": None}}


def approvers_file(orch_dir: Any, *keys: SoftKey) -> None:
    """Write ``.orchestration/approvers`` registering ``keys``."""
    from pathlib import Path

    from orchestrator.approvals.approvers import HEADER

    Path(orch_dir).mkdir(parents=True, exist_ok=True)
    Path(orch_dir, "approvers").write_text(HEADER + "".join(k.line() + "\n" for k in keys), encoding="utf-8")
