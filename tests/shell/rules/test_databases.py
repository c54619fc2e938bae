"""Database clients (orchestrator/shell/rules/databases.py): inline SQL, dot- and backslash-commands, -readonly."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    # inline SQL that is not a single read statement; dot- and backslash-commands that write or run
    "mysql -e 'SELECT 1; SELECT 2'", "psql -c 'SELECT 1; SELECT 2'", "sqlite3 db 'SELECT 1; SELECT 2'",
    "duckdb db 'SELECT 1; DROP TABLE t'", "sqlcmd query 'SELECT 1; SELECT 2'",
    "cat script.sql | sqlite3 -readonly db", "sqlite3 -readonly db < script.sql", "psql -c '\\! rm -rf x'",
    "psql -c '\\o out.txt'", "psql -c '\\gexec'", "sqlite3 db .excel", "sqlite3 db '.log out.txt'",
    "sqlite3 db '.clone new.db'",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "sqlite3 db 'PRAGMA foreign_keys = ON'",
])
def test_mutating_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "mysql -e 'SELECT * FROM t;'", "psql -c 'SELECT 1' -c 'SELECT 2'", "sqlite3 db 'PRAGMA table_info(t)'",
    "psql -c '\\dt'", "psql -c '\\d users'", "sqlite3 db .tables", "sqlite3 db '.schema users'",
    "sqlite3 -readonly db", "duckdb -readonly db", "sqlite3 -readonly db | cat",
    "echo .tables | sqlite3 -readonly db",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "echo '.shell rm x' | sqlite3 -readonly db",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)
