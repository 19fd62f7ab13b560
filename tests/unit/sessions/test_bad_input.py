"""Every malformed transcript in `tests/fixtures/` either opens with its skipped lines reported or
is refused with a one-line error, through the real CLI (a subprocess) and the library, and no
file is ever modified (legacy files are the one exception: migrated, original kept in `.v2.bak`).

Each case in `CASES` states the exact outcome (format §4.4, §4.5, §9). The CLI results of one case
are computed once per module (the four commands run concurrently against one tmp data dir) and
checked by one test per command, so a broken command fails its own test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from commandcode import open_session
from commandcode.config.paths import project_dir
from commandcode.errors import CommandcodeError, InvalidSessionError, SessionChangedError, UnsupportedFormatError
from commandcode.storage.ids import iso_from_ms
from helpers.locations import FIXTURES

SID = "0d6c2f3e-5b7a-4c1e-9f0a-2b3c4d5e6f70"
FORK_SID = "9e07fc17-d9dc-44f4-9ea9-6398425fd60d"
FORK_PARENT = "1ccb4627-5286-46c5-84a9-ce35adae899d"
ORPHAN_SID = "5b1d7f0e-2c3a-4e8b-9d6f-7a8b9c0d1e2f"
COMMANDS = ("show", "context", "tree", "list")
NO_ANOMALIES = {"cycle_detected": False, "unknown_parents": 0, "duplicate_ids": 0}
TORN = "torn tail without newline"
INVALID = "invalid JSON"
NOT_OBJECT = "not an object"
FAILS = "fails validation"
BEFORE = "before the header"



@dataclass(frozen=True)
class Opens:
    """The session opens; these are its exact properties."""

    skipped: list[tuple[int, int, str]]  # (1-based line, byte offset, reason)
    entries: list[tuple[str, int]]  # (entry id, line) in file order
    path: list[str]  # active path, root first
    context: list[str]  # context entry ids
    message_count: int
    synthesized: bool = False  # no valid header: id from the file name, cwd = the current cwd
    header_id: str = SID
    anomalies: dict[str, Any] = field(default_factory=lambda: dict(NO_ANOMALIES))
    name: str | None = None
    model: str | None = None
    texts: dict[int, str] = field(default_factory=dict)  # context position -> first text block
    bugs: dict[str, str] = field(default_factory=dict)  # command ("library" too) -> known bug

    @property
    def leaf(self) -> str | None:
        return self.entries[-1][0] if self.entries else None


@dataclass(frozen=True)
class Refused:
    """Opening fails with one error line (and a hint)."""

    error: str  # regex the message after `error: ` must match in full
    hint: str | None
    exception: type[Exception]


@dataclass(frozen=True)
class Migrates:
    """A legacy file: rewritten as v3 once, original kept byte for byte in `<id>.v2.bak`."""

    roles: list[str]  # the roles of the migrated message entries, in order
    meta_added: dict[str, Any] = field(default_factory=dict)  # keys the migration adds to meta.json


@dataclass(frozen=True)
class Case:
    expect: Opens | Refused | Migrates
    session_id: str = SID
    sidecars: dict[str, str] = field(default_factory=dict)  # fixture file -> suffix after the session id


NEWER = Refused(error=r".*/" + SID + r"\.jsonl uses session format version 4, newer than the supported version 3; "
                r"upgrade commandcode to open it",
                hint="upgrade commandcode; the file was left untouched", exception=UnsupportedFormatError)
MODEL = "anthropic/claude-x"
U, A, U2, A2 = "aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"

CASES: dict[str, Case] = {
    "torn_tail": Case(Opens(skipped=[(5, 898, TORN)], entries=[(U, 2), (A, 3), (U2, 4)], path=[U, A, U2],
                            context=[U, A, U2], message_count=3, model=MODEL)),
    "no_final_newline": Case(Opens(skipped=[], entries=[(U, 2), (A, 3), (U2, 4)], path=[U, A, U2],
                                   context=[U, A, U2], message_count=3, model=MODEL, texts={2: "thanks"})),
    "torn_header": Case(Opens(skipped=[(1, 0, INVALID)], entries=[(A, 2), (U2, 3)], path=[A, U2], context=[A, U2],
                              message_count=2, synthesized=True, model=MODEL,
                              anomalies={**NO_ANOMALIES, "unknown_parents": 1})),
    "torn_header_only": Case(Opens(skipped=[(1, 0, TORN)], entries=[], path=[], context=[], message_count=0,
                                   synthesized=True)),
    "torn_then_appended": Case(Opens(skipped=[(4, 656, INVALID)], entries=[(U, 2), (A, 3), ("aaaa0005", 5)],
                                     path=["aaaa0005"], context=["aaaa0005"], message_count=3,
                                     anomalies={**NO_ANOMALIES, "unknown_parents": 1}, texts={0: "and now?"})),
    "nul_bytes": Case(Opens(skipped=[(3, 380, INVALID), (5, 721, INVALID), (7, 1088, TORN)],
                            entries=[(U, 2), (A, 4), (U2, 6)], path=[U, A, U2], context=[U, A, U2], message_count=3,
                            model=MODEL)),
    "invalid_utf8": Case(Opens(skipped=[(4, 685, INVALID)], entries=[(U, 2), (A, 3), (U2, 5)], path=[U, A, U2],
                               context=[U, A, U2], message_count=3, model=MODEL,
                               texts={0: "bad \ufffd\ufffd byte, overlong \ufffd\ufffd, cut \ufffd", 1: "on it"})),
    "crlf": Case(Opens(skipped=[], entries=[(U, 2), (A, 4), (U2, 5)], path=[U, A, U2], context=[U, A, U2],
                       message_count=3, model=MODEL, texts={0: "fix the bug", 2: "thanks"})),
    "bom": Case(Opens(skipped=[], entries=[(U, 2), (A, 3)], path=[U, A], context=[U, A], message_count=2,
                      model=MODEL, texts={0: "fix the bug"})),
    "blank_lines": Case(Opens(skipped=[], entries=[(U, 4), (A, 6), (U2, 8)], path=[U, A, U2], context=[U, A, U2],
                              message_count=3, model=MODEL)),
    "raw_newline_in_string": Case(Opens(skipped=[(4, 656, INVALID), (5, 814, INVALID)],
                                        entries=[(U, 2), (A, 3), (A2, 6)], path=[A2], context=[A2], message_count=3,
                                        model=MODEL, anomalies={**NO_ANOMALIES, "unknown_parents": 1})),
    "deep_nesting": Case(Opens(skipped=[], entries=[(U, 2), ("aaaa00dd", 3), (A, 4)], path=[U, "aaaa00dd", A],
                               context=[U, A], message_count=2, texts={1: "on it"})),
    "parent_cycle": Case(Opens(skipped=[], entries=[(U, 2), (A, 3), ("cccc0001", 4), ("cccc0002", 5)],
                               path=["cccc0001", "cccc0002"], context=["cccc0001", "cccc0002"], message_count=4,
                               anomalies={**NO_ANOMALIES, "cycle_detected": True},
                               texts={0: "in a cycle", 1: "still in it"})),
    "duplicate_ids": Case(Opens(skipped=[], entries=[(U, 2), (A, 3), (U2, 4), (A, 5), ("aaaa0006", 6)],
                                path=[U, A, "aaaa0006"], context=[U, A, "aaaa0006"], message_count=5,
                                anomalies={**NO_ANOMALIES, "duplicate_ids": 1},
                                texts={1: "second answer, same id", 2: "after the duplicate"})),
    "unknown_parent": Case(Opens(skipped=[], entries=[(U, 2), (A, 3), ("bbbb0001", 4), ("bbbb0002", 5)],
                                 path=["bbbb0001", "bbbb0002"], context=["bbbb0001", "bbbb0002"], message_count=4,
                                 anomalies={**NO_ANOMALIES, "unknown_parents": 1})),
    "newer_version": Case(NEWER),
    "newer_version_after_garbage": Case(NEWER),
    "empty": Case(Opens(skipped=[], entries=[], path=[], context=[], message_count=0, synthesized=True)),
    "entry_before_header": Case(Opens(skipped=[(1, 0, BEFORE), (2, 239, FAILS)], entries=[(U, 4), (A, 5)],
                                      path=[U, A], context=[U, A], message_count=2, model=MODEL)),
    "second_header": Case(Opens(skipped=[(3, 380, FAILS)], entries=[(U, 2), (A, 4)], path=[U, A], context=[U, A],
                                message_count=2, model=MODEL)),
    "invalid_header": Case(Opens(skipped=[(1, 0, FAILS), (2, 141, FAILS)], entries=[(U, 3), (A, 4)], path=[U, A],
                                 context=[U, A], message_count=2, synthesized=True, model=MODEL)),
    "not_an_object": Case(Opens(skipped=[(3, 380, NOT_OBJECT), (4, 386, NOT_OBJECT), (5, 393, NOT_OBJECT),
                                         (6, 396, NOT_OBJECT), (7, 401, NOT_OBJECT)],
                                entries=[(U, 2), (A, 8)], path=[U, A], context=[U, A], message_count=2, model=MODEL)),
    "bad_entry_fields": Case(Opens(skipped=[(3, 380, FAILS), (4, 514, FAILS), (5, 667, FAILS), (6, 775, FAILS),
                                            (7, 921, FAILS), (8, 1027, FAILS), (9, 1148, FAILS)],
                                   entries=[(U, 2), (A, 10)], path=[U, A], context=[U, A], message_count=2,
                                   model=MODEL)),
    "lone_surrogate": Case(Opens(skipped=[], entries=[(U, 2), (A, 3)], path=[U, A], context=[U, A], message_count=2,
                                 texts={0: "lone high \ud800 here", 1: "lone low \udc00, pair \U0001f600"})),
    "u2028_in_string": Case(Opens(skipped=[], entries=[(U, 2), (A, 3), (U2, 4)], path=[U, A, U2], context=[U, A],
                                  message_count=2, model=MODEL, name="name\u2028with separator",
                                  texts={0: "a\u2028b\u2029c\u0085d", 1: "x\u2028y"})),
    "unknown_keys": Case(Opens(skipped=[], entries=[(U, 2), (A, 3)], path=[U, A], context=[U], message_count=1,
                               texts={0: "hi"})),
    "fork_quirk": Case(
        Opens(skipped=[], entries=[(entry, line) for line, entry in enumerate(
            ["1c72eb50", "d376f688", "f97df82e", "2d064dec", "5e0f7011", "a70f1f3f", "de8b8785", "2fdb0719",
             "132726b5", "21be2455", "1a37daaa", "e20335b7", "a65c64ae", "d8f39eab"], start=2)],
              path=["1c72eb50", "d376f688", "f97df82e", "2d064dec", "5e0f7011", "a70f1f3f", "de8b8785", "2fdb0719",
                    "132726b5", "21be2455", "1a37daaa", "e20335b7", "a65c64ae", "d8f39eab"],
              context=["1c72eb50", "d376f688", "f97df82e", "2d064dec", "5e0f7011", "a70f1f3f", "de8b8785",
                       "2fdb0719", "132726b5", "21be2455", "1a37daaa", "e20335b7", "a65c64ae", "d8f39eab"],
              message_count=14, header_id=FORK_PARENT, model="local/stub-model",
              texts={0: "Say hello please", 13: "Hello from stub. You said: hello from the fork"}),
        session_id=FORK_SID, sidecars={"fork_quirk.meta.json": ".meta.json"}),
    "meta_not_object": Case(Opens(skipped=[], entries=[(U, 2), (A, 3)], path=[U, A], context=[U, A], message_count=2,
                                  model=MODEL),
                            sidecars={"meta_not_object.meta.json": ".meta.json"}),
    "legacy_v1": Case(Migrates(roles=["user", "assistant", "user", "assistant"])),
    "legacy_v2": Case(Migrates(roles=["user", "assistant", "user", "assistant", "user", "assistant"],
                               meta_added={"entrypoint": "print"}),
                      sidecars={"legacy_v2.meta.json": ".meta.json"}),
}


# --------------------------------------------------------------------------------------------
# helpers


Snapshot = dict[str, tuple[bytes, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Bytes, mtime (ns) and mode of every file under `root` (but the session catalog, a cache
    every listing brings up to date)."""
    files: Snapshot = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.startswith("catalog.sqlite3"):
            stat = path.stat()
            files[str(path.relative_to(root))] = (path.read_bytes(), stat.st_mtime_ns, stat.st_mode)
    return files


def place(name: str, data_dir: Path, cwd: Path) -> Path:
    """Copies fixture `name` (and its sidecars) into `cwd`'s project folder; returns the transcript."""
    case = CASES[name]
    folder = data_dir / "projects" / project_dir(cwd).name
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{case.session_id}.jsonl"
    shutil.copyfile(FIXTURES / f"{name}.jsonl", transcript)
    for fixture, suffix in case.sidecars.items():
        shutil.copyfile(FIXTURES / fixture, folder / f"{case.session_id}{suffix}")
    return transcript


def cli_args(command: str, ref: str) -> list[str]:
    if command == "list":
        return ["sessions", "list", "--all", "--json"]
    return ["sessions", command, ref, "--json"]


def expected_on_path(expect: Opens) -> list[tuple[str, int]]:
    """The (id, line) rows on the active path: the walk follows ids, and an id names its last entry."""
    last_line = dict(expect.entries)
    return sorted(((entry, last_line[entry]) for entry in expect.path), key=lambda row: row[1])


def first_text(message: dict[str, Any]) -> str | None:
    for block in message.get("content", []):
        if block.get("type") == "text":
            return str(block["text"])
    return None


def assert_one_error(code: int, stdout: str, stderr: str, expected: Refused) -> None:
    assert code == 1, stderr
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == (2 if expected.hint else 1), stderr
    assert lines[0].startswith("error: "), stderr
    assert re.fullmatch(expected.error, lines[0][len("error: "):]), lines[0]
    if expected.hint:
        assert lines[1] == f"hint: {expected.hint}"


def assert_valid_v3(transcript: Path, session_id: str, roles: list[str]) -> list[dict[str, Any]]:
    """The file is clean v3: a header, then message entries chained linearly with 8-hex ids."""
    data = transcript.read_bytes()
    assert data.endswith(b"\n")
    records = [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]
    head, entries = records[0], records[1:]
    assert head["type"] == "session" and head["version"] == 3 and head["id"] == session_id
    assert isinstance(head["timestamp"], str) and isinstance(head["cwd"], str)
    parent = None
    for entry in entries:
        assert list(entry)[:4] == ["type", "id", "parentId", "timestamp"]
        assert entry["type"] == "message" and re.fullmatch(r"[0-9a-f]{8}", entry["id"])
        assert entry["parentId"] == parent
        parent = entry["id"]
    assert [entry["message"]["role"] for entry in entries] == roles
    assert len({entry["id"] for entry in entries}) == len(entries)
    return records


# --------------------------------------------------------------------------------------------
# the CLI, once per case


@dataclass
class CliRun:
    cwd: Path
    data_dir: Path
    transcript: Path
    original: bytes
    before: Snapshot
    after: Snapshot
    results: dict[str, tuple[int, str, str]]


def _run_case(name: str, base: Path) -> CliRun:
    data_dir = base / "home" / ".commandcode"
    data_dir.mkdir(parents=True)
    cwd = (base / "work").resolve()
    cwd.mkdir()
    env = {**os.environ, "COMMANDCODE_HOME": str(data_dir), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1",
           "COLUMNS": "200"}
    transcript = place(name, data_dir, cwd)
    original = transcript.read_bytes()
    before = snapshot(data_dir)
    ref = CASES[name].session_id
    commands = [(command, cli_args(command, ref)) for command in COMMANDS]
    results: dict[str, tuple[int, str, str]] = {}
    if isinstance(CASES[name].expect, Migrates):
        # The first command migrates; run them one after the other (concurrent opens of a legacy
        # file are covered in test_legacy_migration.py).
        for command, args in commands:
            done = subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=env,
                                  capture_output=True, timeout=300, check=False)
            results[command] = (done.returncode, done.stdout.decode(), done.stderr.decode())
    else:
        running = [(command, subprocess.Popen([sys.executable, "-m", "commandcode", *args], cwd=cwd, env=env,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE))
                   for command, args in commands]
        for command, process in running:
            out, err = process.communicate(timeout=300)
            results[command] = (process.returncode, out.decode(), err.decode())
    return CliRun(cwd, data_dir, transcript, original, before, snapshot(data_dir), results)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], CliRun]:
    cache: dict[str, CliRun] = {}

    def get(name: str) -> CliRun:
        if name not in cache:
            cache[name] = _run_case(name, tmp_path_factory.mktemp(name))
        return cache[name]

    return get


def _params() -> list[Any]:
    params = []
    for name, case in CASES.items():
        for command in COMMANDS:
            bug = case.expect.bugs.get(command) if isinstance(case.expect, Opens) else None
            marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
            params.append(pytest.param(name, command, id=f"{name}-{command}", marks=marks))
    return params


@pytest.mark.parametrize(("name", "command"), _params())
def test_cli(name: str, command: str, cli_run: Callable[[str], CliRun]) -> None:
    run = cli_run(name)
    case = CASES[name]
    code, stdout, stderr = run.results[command]
    expect = case.expect
    if isinstance(expect, Refused):
        assert run.after == run.before, "a refused file must not be touched"
        if command == "list":  # listed, marked damaged, with the reason
            rows = json.loads(stdout)
            assert code == 0 and [row["path"] for row in rows] == [str(run.transcript)], rows
            assert "newer than the supported version 3" in rows[0]["damaged"] and rows[0]["message_count"] == 0
            lines = stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"warning: {run.transcript}: "), stderr
            assert "newer than the supported version 3" in lines[0]
        else:
            assert_one_error(code, stdout, stderr, expect)
        return
    assert code == 0, stderr
    if isinstance(expect, Migrates):
        _check_cli_migration(run, case, expect, command, stdout)
        return
    assert run.after == run.before, "reading must not modify, create or delete any file"
    assert stderr == ""  # --json: skipped lines are in the data, not repeated as warnings
    value = json.loads(stdout)
    if command == "show":
        assert value["id"] == case.session_id
        assert value["path"] == str(run.transcript)
        assert value["leaf"] == expect.leaf
        assert value["message_count"] == expect.message_count
        assert value["header_id"] == (case.session_id if expect.synthesized else expect.header_id)
        assert value["cwd"] == (str(run.cwd) if expect.synthesized else "/home/alice/proj" if case.session_id == SID
                                else "/home/dev/proj")
        assert [(line["line"], line["offset"], line["reason"]) for line in value["skipped_lines"]] == expect.skipped
        assert value["anomalies"] == expect.anomalies
        assert value["name"] == expect.name
        assert value["model"] == expect.model
    elif command == "context":
        assert value["leaf"] == expect.leaf
        assert value["entry_ids"] == expect.context
        assert len(value["messages"]) == len(expect.context)
        for position, text in expect.texts.items():
            assert first_text(value["messages"][position]) == text
    elif command == "tree":
        assert value["leaf"] == expect.leaf
        assert value["entry_count"] == len(expect.entries)
        assert [(row["id"], row["line"]) for row in value["entries"]] == expect.entries
        on_path = [(row["id"], row["line"]) for row in value["entries"] if row["on_active_path"]]
        assert on_path == expected_on_path(expect)
    else:
        rows = [row for row in value if row["id"] == case.session_id]
        assert len(rows) == 1, value
        assert rows[0]["message_count"] == expect.message_count
        assert rows[0]["skipped_lines"] == len(expect.skipped)
        assert rows[0]["name"] == expect.name


def _check_cli_migration(run: CliRun, case: Case, expect: Migrates, command: str, stdout: str) -> None:
    folder = run.transcript.parent
    backup = folder / f"{case.session_id}.v2.bak"
    assert backup.read_bytes() == run.original, "the original must be kept byte for byte"
    assert_valid_v3(run.transcript, case.session_id, expect.roles)
    changed = {key for key in run.before if run.before[key] != run.after.get(key)}
    added = set(run.after) - set(run.before)
    prefix = str(folder.relative_to(run.data_dir))
    expected_changes = {f"{prefix}/{case.session_id}.jsonl"}
    if expect.meta_added:
        expected_changes.add(f"{prefix}/{case.session_id}.meta.json")
        meta_before = json.loads(run.before[f"{prefix}/{case.session_id}.meta.json"][0])
        meta_after = json.loads(run.after[f"{prefix}/{case.session_id}.meta.json"][0])
        assert meta_after == {**meta_before, **expect.meta_added}
    assert changed == expected_changes
    assert {key for key in added if not key.startswith("locks/")} == {f"{prefix}/{case.session_id}.v2.bak"}
    assert not list(folder.glob("*.tmp")), "no temp file may be left behind"
    value = json.loads(stdout)
    if command == "show":
        assert value["message_count"] == len(expect.roles)
        assert value["skipped_lines"] == []
        assert value["header_id"] == case.session_id
    elif command == "context":
        assert [message["role"] for message in value["messages"]] == expect.roles
    elif command == "tree":
        assert value["entry_count"] == len(expect.roles)
    else:
        assert [row["message_count"] for row in value if row["id"] == case.session_id] == [len(expect.roles)]


def test_legacy_files_are_migrated_once(cli_run: Callable[[str], CliRun]) -> None:
    """Four commands in a row on a legacy file migrate it once; later opens find v3 and change nothing."""
    for name in ("legacy_v1", "legacy_v2"):
        run = cli_run(name)
        migrated = run.transcript.read_bytes()
        rerun = subprocess.run([sys.executable, "-m", "commandcode", *cli_args("show", SID)], cwd=run.cwd,
                               env={**os.environ, "COMMANDCODE_HOME": str(run.data_dir), "COMMANDCODE_INDEX": "off"},
                               capture_output=True, timeout=300, check=False)
        assert rerun.returncode == 0, rerun.stderr
        assert run.transcript.read_bytes() == migrated


# --------------------------------------------------------------------------------------------
# the library


def _library_params() -> list[Any]:
    params = []
    for name, case in CASES.items():
        bug = case.expect.bugs.get("library") if isinstance(case.expect, Opens) else None
        marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
        params.append(pytest.param(name, id=name, marks=marks))
    return params


@pytest.mark.parametrize("name", _library_params())
def test_library(name: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    transcript = place(name, home, cwd)
    case = CASES[name]
    expect = case.expect
    original = transcript.read_bytes()
    before = snapshot(home)
    if isinstance(expect, Refused):
        with pytest.raises(expect.exception) as raised:
            open_session(transcript)
        assert isinstance(raised.value, CommandcodeError)
        assert re.fullmatch(expect.error, str(raised.value))
        assert "\n" not in str(raised.value)
        assert raised.value.hint == expect.hint
        assert snapshot(home) == before
        return
    session = open_session(transcript)
    if isinstance(expect, Migrates):
        assert (transcript.parent / f"{case.session_id}.v2.bak").read_bytes() == original
        assert_valid_v3(transcript, case.session_id, expect.roles)
        assert session.format == "v3" and session.skipped_lines == []
        assert session.message_count == len(expect.roles)
        return
    assert session.id == case.session_id
    assert [(line.line, line.offset, line.reason) for line in session.skipped_lines] == expect.skipped
    for line in session.skipped_lines:  # every reported offset is the first byte of its line
        start = 3 if original.startswith(b"\xef\xbb\xbf") else 0
        starts = [start] + [index + 1 for index, byte in enumerate(original) if byte == 0x0A]
        assert line.offset == starts[line.line - 1]
        assert line.detail
    assert [(row.id, row.line) for row in session.tree_rows()] == expect.entries
    assert [(row.id, row.line) for row in session.tree_rows() if row.on_active_path] == expected_on_path(expect)
    assert session.leaf_id == expect.leaf
    assert session.path_ids() == expect.path
    assert session.message_count == expect.message_count
    assert session.anomalies.to_dict() == expect.anomalies
    assert session.name == expect.name
    assert session.model == expect.model
    header = session.header
    if expect.synthesized:
        assert session.header.synthesized
        assert header.id == case.session_id and header.cwd == str(cwd) and header.synthesized
        assert header.timestamp == iso_from_ms(int(transcript.stat().st_mtime * 1000))
    else:
        assert header.id == expect.header_id
    context = session.context()
    assert context.leaf_id == expect.leaf
    assert context.entry_ids == expect.context
    for position, text in expect.texts.items():
        assert first_text(context.messages[position]) == text
    assert snapshot(home) == before, "reading must not modify, create or delete any file"


# --------------------------------------------------------------------------------------------
# case-specific details


def test_fixture_table_covers_every_fixture() -> None:
    """Every fixture has a case here and a row in the README table; no stray files."""
    transcripts = {path.stem for path in FIXTURES.glob("*.jsonl")}
    assert transcripts == set(CASES)
    readme = (FIXTURES / "README.md").read_text()
    for path in FIXTURES.rglob("*"):
        if path.is_file() and path.name not in ("README.md", "make_fixtures.py"):
            assert f"`{path.relative_to(FIXTURES)}`" in readme, path


def test_bad_entry_fields_name_the_failed_rule(home: Path, tmp_path: Path) -> None:
    transcript = place("bad_entry_fields", home, tmp_path)
    details = [line.detail for line in open_session(transcript).skipped_lines]
    assert details == [
        "`id` is not a string",
        "`parentId` is neither null nor a string",
        "`timestamp` is not a string",
        "unknown entry type",
        "no entry type",
        "`parentId` is neither null nor a string",
        "`timestamp` is not a string",
    ]


def test_second_header_and_invalid_header_details(home: Path, tmp_path: Path) -> None:
    second = open_session(place("second_header", home, tmp_path)).skipped_lines
    assert [line.detail for line in second] == ["a second session header"]
    invalid = open_session(place("invalid_header", home, tmp_path)).skipped_lines
    assert [line.detail for line in invalid] == ["session header version is not 3",
                                                    "session header lacks a string `id`, `timestamp` or `cwd`"]


def test_show_without_json_warns_once_about_skipped_lines(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    place("nul_bytes", home, cwd)
    code, stdout, stderr = cli_in_home(["sessions", "show", SID], cwd)
    assert code == 0
    assert stderr.splitlines() == [f"warning: {SID}.jsonl: skipped 3 unreadable line(s) (first: line 3, invalid JSON)"]
    assert "skipped_lines: 3" in stdout


def test_unknown_keys_are_preserved_when_reading(home: Path, tmp_path: Path) -> None:
    session = open_session(place("unknown_keys", home, tmp_path))
    first, custom = session.read_entries(["aaaa0001", "aaaa0002"])
    assert first["extraEntryKey"] == {"kept": "yes"}
    assert first["message"]["extraMessageKey"] is True
    assert custom["zzz"] is None and custom["data"] == {"any": ["thing"]}
    assert session.context().messages[0]["extraMessageKey"] is True


def test_duplicate_ids_mark_only_the_entry_on_the_path(home: Path, tmp_path: Path) -> None:
    """Two entries share `aaaa0002`; only the later one (line 5) is on the active path."""
    session = open_session(place("duplicate_ids", home, tmp_path))
    assert [(row.id, row.line) for row in session.tree_rows() if row.on_active_path] == [
        ("aaaa0001", 2), ("aaaa0002", 5), ("aaaa0006", 6)]


def test_fork_quirk_keeps_the_file_name_as_the_session_id(home: Path, tmp_path: Path) -> None:
    session = open_session(place("fork_quirk", home, tmp_path))
    assert session.id == FORK_SID
    assert session.header.id == FORK_PARENT
    assert session.header.session_id == FORK_SID
    assert session.parent_session_id == FORK_PARENT
    copied, appended = session.read_entries(["1c72eb50", "d8f39eab"])
    assert copied["sessionId"] == FORK_SID  # lines copied by the fork carry the new id
    assert "sessionId" not in appended  # lines the fork appended itself do not


def test_meta_that_is_not_an_object_reads_as_empty_and_stays(home: Path, tmp_path: Path) -> None:
    transcript = place("meta_not_object", home, tmp_path)
    meta = transcript.with_name(f"{SID}.meta.json")
    before = meta.read_bytes()
    session = open_session(transcript)
    assert session.meta == {} and session.name is None and session.entrypoint is None
    assert meta.read_bytes() == before


def test_sidecars_without_a_transcript(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    """`--no-session` leaves meta and checkpoints behind (§9): not a session (only `--all` lists it,
    marked as a leftover), never touched."""
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    folder = project_dir(cwd)
    shutil.copytree(FIXTURES / "sidecars_only", folder)
    before = snapshot(home)
    code, stdout, stderr = cli_in_home(["sessions", "list", "--json"], cwd)
    assert (code, json.loads(stdout), stderr) == (0, [], "")
    code, stdout, stderr = cli_in_home(["sessions", "list", "--all", "--json"], cwd)
    assert (code, stderr) == (0, "")
    assert [(row["id"], row["leftover"], row["message_count"]) for row in json.loads(stdout)] == [(ORPHAN_SID, True, 0)]
    for command in ("show", "context", "tree"):
        code, stdout, stderr = cli_in_home(["sessions", command, ORPHAN_SID, "--json"], cwd)
        assert (code, stdout) == (1, "")
        lines = stderr.splitlines()
        assert lines[0] == f"error: no session matches '{ORPHAN_SID}'"
        assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("hint: ")), stderr
    code, stdout, stderr = cli_in_home(["sessions", "show", ORPHAN_SID[:8], "--json"], cwd)
    assert code == 1 and stderr.startswith(f"error: no session matches '{ORPHAN_SID[:8]}'")
    with pytest.raises(InvalidSessionError, match="no transcript at"):
        open_session(folder / f"{ORPHAN_SID}.jsonl")
    assert snapshot(home) == before


def test_newer_version_is_refused_even_when_listed_across_projects(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    transcript = place("newer_version", home, cwd)
    place("torn_tail", home, tmp_path)  # a healthy neighbour in another project still lists
    before = snapshot(home)
    code, stdout, stderr = cli_in_home(["sessions", "list", "--all-projects", "--json"], cwd)
    assert code == 0
    rows = json.loads(stdout)
    healthy = [row for row in rows if row["path"] != str(transcript)]  # a torn tail: marked, and listed
    assert [row["id"] for row in healthy] == [SID] and healthy[0]["message_count"] > 0
    [refused] = [row for row in rows if row["path"] == str(transcript)]
    assert "newer than the supported version 3" in refused["damaged"] and refused["message_count"] == 0
    assert len(stderr.splitlines()) == 1 and "newer than the supported version 3" in stderr
    assert snapshot(home) == before


def test_every_byte_prefix_scans_to_a_prefix(tmp_path: Path) -> None:
    """A crash can cut the file at any byte: every prefix of a transcript scans to a prefix of its
    entries plus at most one skipped torn tail, never an error."""
    from commandcode import _native

    data = (FIXTURES / "no_final_newline.jsonl").read_bytes() + b"\n"
    ids = [U, A, U2]
    line_ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    assert len(line_ends) == 4
    target = tmp_path / f"{SID}.jsonl"
    for cut in range(len(data) + 1):
        target.write_bytes(data[:cut])
        index = _native.scan_session(str(target))
        complete = sum(1 for end in line_ends if end <= cut)  # whole lines, header included
        exact = cut + 1 in line_ends  # cut just before a newline: the last line is whole JSON
        lines = complete + (1 if exact else 0)
        assert [row[0] for row in index.tree_rows()] == ids[: max(lines - 1, 0)], cut
        torn = cut not in (0, *line_ends) and not exact
        assert [(line["line"], line["reason"]) for line in index.skipped] == ([(complete + 1, TORN)] if torn else []), cut
        assert (index.header is not None) == (lines >= 1), cut


# --------------------------------------------------------------------------------------------
# large inputs, generated at test time


def _header(session_id: str = SID) -> bytes:
    return (json.dumps({"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-02T03:04:05.000Z",
                        "cwd": "/home/alice/proj"}, separators=(",", ":")) + "\n").encode()


def _message(entry_id: str, parent: str | None, role: str, text: str) -> bytes:
    return json.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-02T03:04:06.000Z",
                       "message": {"role": role, "content": [{"type": "text", "text": text}]}},
                      separators=(",", ":")).encode()


def _write_session(home: Path, cwd: Path, data: bytes) -> Path:
    folder = project_dir(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{SID}.jsonl"
    transcript.write_bytes(data)
    return transcript


@pytest.mark.slow
def test_50_mb_single_line(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    big = "x" * (50 << 20)
    data = b"".join([_header(), _message("aaaa0001", None, "user", "hi"), b"\n",
                     _message("aaaa0002", "aaaa0001", "assistant", big), b"\n",
                     _message("aaaa0003", "aaaa0002", "user", "after the big one"), b"\n"])
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    transcript = _write_session(home, cwd, data)
    stat = transcript.stat()
    session = open_session(transcript)
    assert session.skipped_lines == [] and session.path_ids() == ["aaaa0001", "aaaa0002", "aaaa0003"]
    messages = session.context().messages
    assert len(messages[1]["content"][0]["text"]) == 50 << 20
    code, stdout, stderr = cli_in_home(["sessions", "show", SID, "--json"], cwd)
    assert code == 0, stderr
    shown = json.loads(stdout)
    assert (shown["leaf"], shown["message_count"], shown["skipped_lines"]) == ("aaaa0003", 3, [])
    code, stdout, stderr = cli_in_home(["sessions", "context", SID, "--json"], cwd)
    assert code == 0, stderr
    assert len(json.loads(stdout)["messages"][1]["content"][0]["text"]) == 50 << 20
    assert transcript.stat().st_mtime_ns == stat.st_mtime_ns and transcript.stat().st_size == len(data)


@pytest.mark.slow
def test_50_mb_torn_tail(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    """A 50 MB line cut before its end (no newline) is one skipped torn tail, not an error."""
    head = _header() + _message("aaaa0001", None, "user", "hi") + b"\n"
    torn = _message("aaaa0002", "aaaa0001", "assistant", "y" * (50 << 20))[: (50 << 20) - 7]
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    transcript = _write_session(home, cwd, head + torn)
    code, stdout, stderr = cli_in_home(["sessions", "show", SID, "--json"], cwd)
    assert code == 0, stderr
    shown = json.loads(stdout)
    assert shown["leaf"] == "aaaa0001"
    assert [(line["line"], line["offset"], line["reason"]) for line in shown["skipped_lines"]] == [(3, len(head), TORN)]
    assert transcript.stat().st_size == len(head) + len(torn)


@pytest.mark.slow
def test_million_entry_parent_chain(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    """1,000,000 entries in one chain: the path walk and context plan need no recursion."""
    count = 1_000_000
    parts = [_header()]
    template = '{"type":"custom","id":"%08x","parentId":%s,"timestamp":"2026-01-02T03:04:06.000Z","customType":"c"}\n'
    parts.append((template % (0, "null")).encode())
    parts.append("".join(template % (index, f'"{index - 1:08x}"') for index in range(1, count - 1)).encode())
    parts.append(_message(f"{count - 1:08x}", f"{count - 2:08x}", "user", "the end") + b"\n")
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    transcript = _write_session(home, cwd, b"".join(parts))
    session = open_session(transcript)
    path = session.path_ids()
    assert len(path) == count and path[0] == "00000000" and path[-1] == f"{count - 1:08x}"
    assert session.context().entry_ids == [f"{count - 1:08x}"]
    code, stdout, stderr = cli_in_home(["sessions", "show", SID, "--json"], cwd)
    assert code == 0, stderr
    shown = json.loads(stdout)
    assert (shown["leaf"], shown["message_count"], shown["anomalies"]) == (f"{count - 1:08x}", 1, NO_ANOMALIES)


def test_deep_nesting_in_the_context_is_refused_clearly(home: Path, tmp_path: Path, cli_in_home: Any) -> None:
    """100,000 levels inside a message on the active path: the scan, show and tree work; context
    cannot be decoded into Python objects, so it must fail with a one-line error that says why
    (not a false "file changed" error)."""
    deep = "[" * 100_000 + "]" * 100_000
    line = ('{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-02T03:04:07.000Z",'
            '"message":{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":{"v":'
            + deep + "}}]}}\n").encode()
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    transcript = _write_session(home, cwd, _header() + _message("aaaa0001", None, "user", "hi") + b"\n" + line)
    before = snapshot(home)
    session = open_session(transcript)
    assert session.skipped_lines == [] and session.leaf_id == "aaaa0002"
    code, stdout, stderr = cli_in_home(["sessions", "show", SID, "--json"], cwd)
    assert code == 0 and json.loads(stdout)["message_count"] == 2
    with pytest.raises(CommandcodeError) as raised:
        session.context()
    assert not isinstance(raised.value, SessionChangedError)
    assert "nest" in str(raised.value)
    code, stdout, stderr = cli_in_home(["sessions", "context", SID, "--json"], cwd)
    assert code == 1 and stdout == ""
    assert len(stderr.splitlines()) <= 2 and stderr.startswith("error: ") and "nest" in stderr.splitlines()[0]
    assert snapshot(home) == before
