"""Schema checks of ledger records: a structural check of everything the Agent Trace schema requires plus
orchestrator's metadata, the equivalent compiled regex for lines in the writer's canonical layout (the fast path
of ``verify``) and, where installed, full ``jsonschema``. Not imported by the writer."""

from __future__ import annotations

import json
import re

from .format import NS, schema_path

_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\Z")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)\Z")
_VCS_TYPES = frozenset({"git", "jj", "hg", "svn"})
_CONTRIB_TYPES = frozenset({"human", "ai", "mixed", "unknown"})
_CLASSES = frozenset({"AST_REFACTOR", "INTENT_EVOLUTION"})


def _contrib_err(c: object, where: str) -> str | None:
    if type(c) is not dict:
        return f"{where}: contributor must be an object"
    if c.get("type") not in _CONTRIB_TYPES:
        return f"{where}: contributor.type invalid"
    m = c.get("model_id")
    if m is not None and (type(m) is not str or len(m) > 250):
        return f"{where}: contributor.model_id must be a string of <= 250 chars"
    return None


def check_record(r: object, *, ours: bool = True) -> str | None:
    """Structural schema check; returns None if valid, else a reason. ``ours`` also checks orchestrator metadata."""
    if type(r) is not dict:
        return "record is not a JSON object"
    v = r.get("version")
    if type(v) is not str or not _VERSION_RE.match(v):
        return "version missing or not x.y.z"
    i = r.get("id")
    if type(i) is not str or not _UUID_RE.match(i):
        return "id missing or not a uuid"
    t = r.get("timestamp")
    if type(t) is not str or not _TS_RE.match(t):
        return "timestamp missing or not RFC 3339"
    vcs = r.get("vcs")
    if vcs is not None and (type(vcs) is not dict or vcs.get("type") not in _VCS_TYPES
                            or type(vcs.get("revision")) is not str):
        return "vcs must have type (git/jj/hg/svn) and revision"
    tool = r.get("tool")
    if tool is not None and (type(tool) is not dict or any(type(tool[k]) is not str for k in ("name", "version")
                                                           if k in tool)):
        return "tool must be an object with string name/version"
    files = r.get("files")
    if type(files) is not list:
        return "files missing or not an array"
    for fi, f in enumerate(files):
        if type(f) is not dict or type(f.get("path")) is not str or type(f.get("conversations")) is not list:
            return f"files[{fi}]: needs path (string) and conversations (array)"
        for ci, c in enumerate(f["conversations"]):
            if type(c) is not dict or type(c.get("ranges")) is not list:
                return f"files[{fi}].conversations[{ci}]: needs ranges (array)"
            if "contributor" in c:
                e = _contrib_err(c["contributor"], f"files[{fi}].conversations[{ci}]")
                if e:
                    return e
            if "url" in c and type(c["url"]) is not str:
                return f"files[{fi}].conversations[{ci}]: url must be a string"
            for ri, rg in enumerate(c["ranges"]):
                if type(rg) is not dict:
                    return f"files[{fi}]...ranges[{ri}]: not an object"
                s, e_ = rg.get("start_line"), rg.get("end_line")
                if type(s) is not int or type(e_) is not int or s < 1 or e_ < 1:
                    return f"files[{fi}]...ranges[{ri}]: start_line/end_line must be integers >= 1"
                ch = rg.get("content_hash")
                if ch is not None and type(ch) is not str:
                    return f"files[{fi}]...ranges[{ri}]: content_hash must be a string"
    md = r.get("metadata")
    if md is not None and type(md) is not dict:
        return "metadata must be an object"
    if ours:
        ns = md.get(NS) if md else None
        if type(ns) is not dict:
            return f"metadata.{NS} missing"
        mc = ns.get("mutation_class")
        if mc not in _CLASSES:
            return f"metadata.{NS}.mutation_class must be AST_REFACTOR or INTENT_EVOLUTION"
        if type(ns.get("tool_name")) is not str or type(ns.get("files")) is not list:
            return f"metadata.{NS}: tool_name and files required"
        sig = ns.get("sig")
        if sig is not None and (type(sig) is not dict or any(type(sig.get(k)) is not str
                                                             for k in ("alg", "key", "ledger", "value"))):
            return f"metadata.{NS}.sig must have string alg, key, ledger and value"
        ch = ns.get("chain")
        if type(ch) is not dict or type(ch.get("prev")) is not str or type(ch.get("hash")) is not str:
            return f"metadata.{NS}.chain missing"
    return None


# Fast structural check for lines in the writer's own canonical layout (key order, compact separators, ASCII).
# A line this regex accepts is valid JSON and satisfies everything check_record() checks; any other line (another
# layout, extra fields, escapes in model_id) goes through json.loads + check_record(). ~5 µs instead of ~20 µs.
_S = rb'"[^"\\\x00-\x1f\x80-\xff]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f\x80-\xff]*)*"'  # JSON str
_SN = rb"(?:" + _S + rb"|null)"
_N = rb"(?:0|[1-9][0-9]*)"
_P = rb"[1-9][0-9]*"
_H = rb'"sha256:[0-9a-f]{64}"'
_RANGE = rb'\{"start_line":' + _P + rb',"end_line":' + _P + rb'(?:,"content_hash":' + _S + rb")?\}"
_CONV = (rb'\{"contributor":\{"type":"(?:human|ai|mixed|unknown)"'
         rb'(?:,"model_id":"[^"\\\x00-\x1f\x80-\xff]{0,250}")?\},'
         rb'"ranges":\[(?:' + _RANGE + rb"(?:," + _RANGE + rb")*)?\]\}")
_FILE = rb'\{"path":' + _S + rb',"conversations":\[(?:' + _CONV + rb"(?:," + _CONV + rb")*)?\]\}"
_CLS_RX = rb'"(?:AST_REFACTOR|INTENT_EVOLUTION)"'
_LH = rb'"[0-9a-f]{10}"'
_LHN = rb"(?:" + _LH + rb"|null)"
_LHS = rb"\[(?:" + _LH + rb"(?:," + _LH + rb")*)?\]"
_CTX = rb"\[" + _LHN + rb"," + _LHN + rb"\]"
_HUNK = rb"\[" + _N + rb"," + _N + rb"," + _N + rb"," + _N + rb"\]"
_META = (rb'\{"path":' + _S + rb',"op":"(?:create|modify|delete|rename)","added":' + _N + rb',"removed":' + _N
         + rb'(?:,"mutation_class":' + _CLS_RX + rb',"evidence":' + _S + rb")?(?:,\"from\":" + _S
         + rb')?(?:,"binary":true)?(?:,"large":true)?(?:,"before":' + _H + rb')?(?:,"after":' + _H
         + rb')?(?:,"lines":' + _N + rb')?(?:,"hunks":\[(?:' + _HUNK + rb"(?:," + _HUNK + rb")*)?\])?"
         + rb'(?:,"line_hashes":\[(?:' + _LHS + rb"(?:," + _LHS + rb")*)?\])?"
         + rb'(?:,"context":\[(?:' + _CTX + rb"(?:," + _CTX + rb")*)?\])?"
         + rb'(?:,"removed_hashes":' + _LHS + rb")?\}")
_NSRX = (rb'"dev\.orchestrator":\{"intent_id":' + _SN + rb',"mutation_class":' + _CLS_RX
         + rb',"declared_class":' + _SN + rb',"class_mismatch":(?:true|false),"evidence":' + _S
         + rb',"session_id":' + _SN + rb',"agent":' + _SN + rb',"agent_id":' + _SN + rb',"tool_name":' + _S
         + rb',"tool_use_id":' + _SN + rb'(?:,"call_id":' + _SN + rb")?"
         + rb',"files":\[(?:' + _META + rb"(?:," + _META + rb")*)?\]"
         + rb'(?:,"merge_parents":\[' + _H + rb"(?:," + _H + rb")*\])?"
         + rb'(?:,"sig":\{"alg":"ed25519","key":"[0-9a-f]{16}","ledger":' + _H + rb',"value":"[A-Za-z0-9+/]{86}=="\})?'
         + rb',"chain":\{"prev":' + _H + rb',"hash":' + _H + rb"\}\}")
_CANONICAL_SRC = (
    rb'\{"version":"[0-9]+\.[0-9]+\.[0-9]+",'
    rb'"id":"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",'
    rb'"timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})",'
    rb'(?:"vcs":\{"type":"(?:git|jj|hg|svn)","revision":' + _S + rb"\},)?"
    rb'"tool":\{"name":' + _S + rb',"version":' + _S + rb"\},"
    rb'"files":\[(?:' + _FILE + rb"(?:," + _FILE + rb")*)?\],"
    rb'"metadata":\{' + _NSRX + rb"\}\}")
_canonical_rx: re.Pattern[bytes] | None = None


def _canonical() -> re.Pattern[bytes]:
    """The compiled fast-path regex (compiled on first use: ~10 ms, kept off the hook's import path)."""
    global _canonical_rx
    if _canonical_rx is None:
        _canonical_rx = re.compile(_CANONICAL_SRC)
    return _canonical_rx


def _strict_validator():
    try:
        import jsonschema  # dev extra: full validation only where installed
    except ImportError:
        return None
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)

