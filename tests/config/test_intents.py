from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from orchestrator.config import intents
from orchestrator.core.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "active_intents.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def test_loads_challenge_format_with_extra_keys(tmp_path: Path) -> None:
    p = write(tmp_path, """\
        # comment
        active_intents:
          - id: "INT-001"
            name: "JWT Authentication Migration"
            status: "IN_PROGRESS"
            description: free text
            created_at: "2025-02-16T10:00:00Z"
            updated_at: 2025-02-17
            related_specs: ["specs/auth.md"]
            owned_scope: ["src/auth/**", "src/middleware/jwt.ts"]
            constraints: ["Must not use external auth providers"]
            acceptance_criteria: ["Unit tests in tests/auth/ pass"]
        """)
    loaded = intents.load(p)
    intent = loaded.get("INT-001")
    assert intent is not None and intent.status == "IN_PROGRESS"
    assert intent.owns("src/auth/x/y.ts") and intent.owns("src/middleware/jwt.ts")
    assert not intent.owns("src/middleware/other.ts")
    assert intent.extra["related_specs"] == ["specs/auth.md"]


@pytest.mark.parametrize(
    ("text", "needle", "line", "intent"),
    [
        ("active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n  - id: A\n    name: b\n    status: PENDING\n",
         "duplicate intent id 'A'", 5, "A"),
        ("active_intents:\n  - id: A\n    name: a\n    status: DOING\n", "unknown status 'DOING'", 2, "A"),
        ("active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n  - id: B\n    name: b\n"
         "    status: IN_PROGRESS\n    owned_scope: src/**\n", "owned_scope: Value error, must be a list", 5, "B"),
        ("active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n    owned_scope: ['src/[abc']\n",
         "invalid glob 'src/[abc'", 2, "A"),
        ("active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n    owned_scope: ['/etc/**']\n",
         "absolute", 2, "A"),
        ("active_intents:\n  - id: A\n    name: [unclosed\n", "YAML syntax error", 4, None),
        ("- just\n- a list\n", "top level must be a mapping", 1, None),
        ("active_intents:\n  - name: no id\n    status: IN_PROGRESS\n", "id: Field required", 2, "#1"),
        ("intents: []\n", "missing top-level key 'active_intents'", 1, None),
    ],
)
def test_errors_name_file_line_and_intent(tmp_path: Path, text: str, needle: str, line: int, intent: str | None) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        intents.load(p)
    err = exc.value
    assert needle in str(err)
    assert err.file == str(p)
    assert err.line == line
    assert err.intent == intent
    assert str(p) in str(err)


def test_missing_file_is_empty_and_status_is_normalised(tmp_path: Path) -> None:
    assert list(intents.load(tmp_path / "none.yaml")) == []
    p = write(tmp_path, "active_intents:\n  - id: 7\n    name: n\n    status: in-progress\n")
    assert intents.load(p).get("7").status == "IN_PROGRESS"


def test_cache_reloads_on_change(tmp_path: Path) -> None:
    p = write(tmp_path, "active_intents:\n  - id: A\n    name: a\n    status: PENDING\n")
    first = intents.load(p)
    assert intents.load(p) is first  # cached
    p.write_text("active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n")
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert intents.load(p).get("A").status == "IN_PROGRESS"


def test_render_context_escapes_and_lists(tmp_path: Path) -> None:
    p = write(tmp_path, "active_intents:\n  - id: A\n    name: 'a <b>'\n    status: IN_PROGRESS\n"
                        "    owned_scope: [src/**]\n    constraints: ['x & y']\n")
    text = intents.render_context(intents.load(p).get("A"), ["lesson one"])
    assert text.startswith('<intent_context id="A" status="IN_PROGRESS">')
    assert "a &lt;b&gt;" in text and "x &amp; y" in text and "<item>lesson one</item>" in text
    assert text.endswith("</intent_context>")
