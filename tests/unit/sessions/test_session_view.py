"""The typed read API: `Session` hands out `Header`, `SkippedLine`, `Anomalies` and `TreeRow`
values (never the native index or untyped dicts) and implements the `SessionView` protocol
that other readers (Claude Code, pi) will implement."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from commandcode.sessions.reader import Session, open_session
from commandcode.sessions.reader_values import Anomalies, Header, SkippedLine, TreeRow
from commandcode.sessions.view import SessionView
from commandcode.values import Frozen

HEADER = b'{"type":"session","version":3,"id":"hdr","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w"}\n'
ENTRIES = [
    b'{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z",'
    b'"message":{"role":"user","content":"first"}}\n',
    b'{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-02T03:04:07.000Z",'
    b'"message":{"role":"assistant","content":[{"type":"text","text":"second"}]}}\n',
    b'{"type":"label","id":"l1","parentId":"m2","timestamp":"2026-01-02T03:04:08.000Z","targetId":"m1","label":"start"}\n',
    b'{"type":"message","id":"m3","parentId":"gone","timestamp":"2026-01-02T03:04:09.000Z",'
    b'"message":{"role":"user","content":"orphan"}}\n',
]


@pytest.fixture
def session(home: Path, tmp_path: Path) -> Session:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(HEADER + b"".join(ENTRIES) + b'{"torn": ')
    return open_session(path)


def test_a_session_is_a_session_view(session: Session) -> None:
    assert isinstance(session, SessionView)


def test_the_native_index_is_private(session: Session) -> None:
    assert not hasattr(session, "index")


def test_header_skipped_lines_and_anomalies_are_typed(session: Session) -> None:
    header = session.header
    assert isinstance(header, Header) and isinstance(header, Frozen)
    assert (header.id, header.timestamp, header.cwd, header.line, header.synthesized) == \
        ("hdr", "2026-01-02T03:04:05.000Z", "/w", 1, False)
    [skipped] = session.skipped_lines
    assert isinstance(skipped, SkippedLine) and (skipped.line, skipped.reason) == (6, "torn tail without newline")
    assert skipped.offset == len(HEADER) + sum(map(len, ENTRIES)) and skipped.length == len(b'{"torn": ')
    anomalies = session.anomalies
    assert isinstance(anomalies, Anomalies) and anomalies.unknown_parents == 1 and not anomalies.cycle_detected
    with pytest.raises(AttributeError):
        header.cwd = "/"  # type: ignore[misc]


def test_tree_rows_entries_and_context_by_position(session: Session) -> None:
    rows = list(session.tree_rows())
    assert all(isinstance(row, TreeRow) for row in rows)
    assert [row.id for row in rows] == ["m1", "m2", "l1", "m3"] and session.entry_count == 4
    assert rows[0].label == "start" and session.labels() == {"m1": "start"}
    assert [entry["id"] for entry in session.entries(1, 3)] == ["m2", "l1"]
    assert [entry["id"] for entry in session.entries()] == ["m1", "m2", "l1", "m3"]
    assert session.context().entry_ids == ["m3"]  # the leaf is the last entry; its parent is unknown


def test_the_view_protocol_stays_out_of_a_warm_open(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "s2.jsonl"
    path.write_bytes(HEADER + ENTRIES[0])
    probe = ("import sys, commandcode; s = commandcode.open_session(sys.argv[1]); s.context(); s.header; "
             "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True,
                                check=True).stdout.split())
    assert "commandcode.sessions.view" not in loaded and "typing" not in loaded


# Every module a warm open imports costs it ~0.4M instructions of import machinery before its own
# code runs (issue 30, measured with callgrind): a module joining this list is a measured decision.
# `gc` is not one: a context too small for the collector to matter does not pause it.
WARM_OPEN_MODULES = {
    "commandcode", "commandcode._native", "commandcode.values",
    "commandcode.config",
    "commandcode.sessions", "commandcode.sessions.reader", "commandcode.sessions.files",
    "commandcode.sessions.context",
}


def test_a_warm_open_imports_exactly_its_modules(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "s3.jsonl"
    path.write_bytes(HEADER + b"".join(ENTRIES))
    env = {name: value for name, value in os.environ.items() if name != "COMMANDCODE_INDEX"}
    probe = ("import sys; before = set(sys.modules); import commandcode; s = commandcode.open_session(sys.argv[1]); "
             "messages = s.context().messages; print(s.index_source, len(messages)); "
             "print(' '.join(sorted(set(sys.modules) - before)))")
    runs = [subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, env=env,
                           check=True).stdout.splitlines() for _ in range(3)]
    # The first contact reads the tail and leaves a mark, the second writes the sidecar (format §9).
    assert [run[0] for run in runs] == ["tail 1", "rebuilt 1", "loaded 1"]
    assert set(runs[2][1].split()) == WARM_OPEN_MODULES


def _annotation_holders(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    """Everything defined in `module` that carries annotations: its functions, its classes and
    their methods (properties, class and static methods included)."""
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, types.FunctionType):
            yield name, value
        elif isinstance(value, type):
            yield name, value
            for member_name, member in vars(value).items():
                functions = ([member.fget, member.fset] if isinstance(member, property)
                             else [getattr(member, "__func__", member)])
                yield from ((f"{name}.{member_name}", function) for function in functions
                            if isinstance(function, types.FunctionType))


def test_the_warm_open_modules_evaluate_no_annotation_when_imported() -> None:
    # An annotation that is more than a name is a string in these modules: evaluated, each
    # `str | None` or `dict[str, str]` builds a union or a generic alias when its `def` runs, a
    # cost every warm open paid at import (issue 30).
    evaluated = [f"{module_name}: {holder_name}: {key}: {value!r}"
                 for module_name in sorted(WARM_OPEN_MODULES - {"commandcode._native"})
                 for holder_name, holder in _annotation_holders(importlib.import_module(module_name))
                 for key, value in vars(holder).get("__annotations__", {}).items()
                 if not (value is None or isinstance(value, str)
                         or (isinstance(value, type) and not isinstance(value, types.GenericAlias)))]
    assert evaluated == []
