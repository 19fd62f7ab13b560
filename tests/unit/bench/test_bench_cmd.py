"""`commandcode bench`: generates a session, times cold and warm opens in this install, prints the
table; and the library's import stays lean (what makes a warm open cost milliseconds).

Timings are not asserted (these machines are noisy): the tests check that every row was measured,
that each open built the context the generator says it has, and what is kept or removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

EXPECTED_ROWS = {
    "wc -l (floor)",
    "commandcode cli cold (no index)",
    "commandcode cli warm (index)",
    "commandcode library cold (no index)",
    "commandcode library warm (index)",
    "python -c pass (interpreter start)",
}


def test_bench_measures_every_row_and_removes_what_it_generated(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    home.mkdir()  # an existing data dir, to check it is left alone
    work = tmp_path / "work"
    code, stdout, stderr = cli_in_home(["bench", "--size", "1MB", "--runs", "1", "--json", "--dir", str(work)], tmp_path)
    assert code == 0, stderr
    report = json.loads(stdout)
    rows = {row["name"]: row for row in report["rows"]}
    assert set(rows) == EXPECTED_ROWS
    assert all(row["wall_s"] > 0 and "error" not in row for row in rows.values())
    for name, row in rows.items():
        if name.startswith("commandcode"):
            assert row["detail"]["context_messages"] == report["context_entries"] > 0, name
    assert 1_000_000 <= report["bytes"] < 1_100_000
    assert not (work / "sessions").exists() and not (work / "home").exists()  # no --keep
    assert list(home.iterdir()) == []  # the user's own data dir is never touched


def test_bench_keep_leaves_the_session_and_prints_a_table(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    work = tmp_path / "work"
    code, stdout, stderr = cli_in_home(["bench", "--size", "1MB", "--runs", "1", "--keep", "--dir", str(work)], tmp_path)
    assert code == 0, stderr
    assert "commandcode library warm (index)" in stdout and "wc -l (floor)" in stdout
    [kept] = (work / "sessions").glob("*.jsonl")
    assert f"kept {kept}" in " ".join(stdout.split())  # a long path may wrap


def test_bench_refuses_a_bad_size_in_one_line(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    code, stdout, stderr = cli_in_home(["bench", "--size", "lots", "--dir", str(tmp_path / "work")], tmp_path)
    assert (code, stdout) == (2, "")  # a usage error
    assert stderr.startswith("error: ") and "hint: " in stderr and len(stderr.splitlines()) == 2
    assert not (tmp_path / "work").exists()


def test_opening_a_session_imports_no_heavy_module(tmp_path: Path) -> None:
    """An embedder that opens a session and builds its context must not pay for typing,
    dataclasses, pathlib, json, re or the CLI: together they cost several times a warm open. Nor
    for the error classes (16 classes built) or `__future__` (one `from __future__ import
    annotations` on the path imports it): together a sixth of a warm open's own instructions."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi"}}\n')
    probe = ("import sys; before = set(sys.modules); import commandcode; "
             "s = commandcode.open_session(sys.argv[1]); assert len(s.context().messages) == 1; "
             "print(' '.join(sorted(set(sys.modules) - before)))")
    completed = subprocess.run([sys.executable, "-c", probe, str(transcript)], capture_output=True, text=True,
                               check=True, env={"COMMANDCODE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"})
    loaded = set(completed.stdout.split())
    heavy = {"typing", "dataclasses", "pathlib", "json", "re", "inspect", "datetime", "typer", "rich", "commandcode.cli",
             "commandcode.sessions.writer", "commandcode.catalog", "commandcode.checkpoints", "commandcode.errors",
             "__future__"}
    assert loaded & heavy == set(), loaded & heavy
    assert "commandcode.sessions.reader" in loaded


def test_opening_a_session_creates_only_the_native_class_it_uses(tmp_path: Path) -> None:
    """The native module creates its classes on first use: a warm open needs `SessionIndex` only,
    and building the other seven types (the backup store's, the restore's, the redactor) cost it
    a measurable share of its instructions. Each of them is still there when asked for. The open
    makes `SessionIndex` through its first instance and never asks the module for the class (no
    annotation is evaluated at import), so no class lands in the module's namespace at all."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n')
    probe = ("import sys, commandcode; from commandcode import _native; "
             "commandcode.open_session(sys.argv[1]).context(); "
             "print(' '.join(sorted(name for name, value in vars(_native).items() if isinstance(value, type))))")
    completed = subprocess.run([sys.executable, "-c", probe, str(transcript)], capture_output=True, text=True,
                               check=True, env={"COMMANDCODE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"})
    assert completed.stdout.split() == []
    lazy = ["FileState", "ObjectStore", "PreparedRestore", "Redactor", "RestoreItem", "RestorePlan", "SessionIndex", "StatTable"]
    probe = ("import sys; from commandcode import _native; names = sys.argv[1:]; "
             "assert set(names) <= set(dir(_native)); "
             "from commandcode._native import Redactor; "
             "print(' '.join(f'{getattr(_native, name).__module__}.{getattr(_native, name).__name__}' for name in names))")
    completed = subprocess.run([sys.executable, "-c", probe, *lazy], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == [f"commandcode._native.{name}" for name in lazy]
    missing = subprocess.run([sys.executable, "-c", "from commandcode import _native; _native.NoSuchThing"],
                             capture_output=True, text=True)
    assert "AttributeError: module 'commandcode._native' has no attribute 'NoSuchThing'" in missing.stderr
    # `__all__` names every class once from the start (as the stub does: stubtest compares them),
    # and never the PEP 562 hooks
    probe = ("import sys; from commandcode import _native; before = list(_native.__all__); "
             "[getattr(_native, name) for name in sys.argv[1:]]; print(before == _native.__all__, *before)")
    completed = subprocess.run([sys.executable, "-c", probe, *lazy], capture_output=True, text=True, check=True)
    unchanged, *exported = completed.stdout.split()
    assert unchanged == "True" and len(exported) == len(set(exported))
    assert set(lazy) | {"SessionIndex"} <= set(exported) and not {"__getattr__", "__dir__"} & set(exported)


def test_opening_a_session_makes_only_the_native_function_it_calls(tmp_path: Path) -> None:
    """The native module makes its functions on first use too: a warm open calls `scan_session`
    only, and making the other twenty cost it ~0.06M instructions (callgrind, issue 30). Each is
    still importable, listed by `dir()`, and named once in `__all__` from the start."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n')
    probe = ("import sys, commandcode; from commandcode import _native; "
             "commandcode.open_session(sys.argv[1]).context(); "
             "print(' '.join(sorted(name for name, value in vars(_native).items() "
             "if callable(value) and not isinstance(value, type))))")
    completed = subprocess.run([sys.executable, "-c", probe, str(transcript)], capture_output=True, text=True,
                               check=True, env={"COMMANDCODE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"})
    assert completed.stdout.split() == ["__dir__", "__getattr__", "scan_session"]
    lazy = ["check_restore", "content_id", "extract_texts", "fold_text", "json_dumps", "sanitize_path"]
    probe = ("import sys; from commandcode import _native; names = sys.argv[1:]; before = list(_native.__all__); "
             "assert set(names) <= set(dir(_native)) and set(names) <= set(before); "
             "from commandcode._native import content_id; "
             "print(content_id(b'') == _native.content_id(b''), before == _native.__all__, "
             "len(before) == len(set(before)), *(getattr(_native, name).__module__ for name in names))")
    completed = subprocess.run([sys.executable, "-c", probe, *lazy], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == ["True", "True", "True", *["commandcode._native"] * len(lazy)]
