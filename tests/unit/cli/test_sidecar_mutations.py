"""Every field of every sidecar, set to every JSON type: each read command prints one line or a
result, never a traceback, and never writes.

A real session (three turns through the offline model: a file written, edited, a named session)
gives the files: the transcript (header and every entry), `meta.json`, the checkpoints records,
`history.jsonl` and the index sidecar (binary: cut and flipped, not typed). The restore journal
is not mutated here: on this branch's base a journal's paths are still trusted (issue #11 class 1,
fixed in parallel), and a mutated `trash` or `createdDirs` would make the test delete folders.
Each mutation sets one field (found by walking every object and array, at every depth, and the
whole line itself) to one value of `VALUES` (null, bools, ints incl. huge/negative, floats incl.
-0.0 and 1e308, strings incl. empty/huge/control characters/a lone surrogate, lists, objects),
then runs the read commands in-process through `commandcode.cli.run` with `COMMANDCODE_DEBUG=1`,
so an exception the commands do not handle escapes as itself instead of being caught by the
entry point's net (which the test also rejects: "internal error" is a failure here).

No write: every file of the data dir and of the project (bytes and mtime) is the same after the
commands, except `locks/` (a rewind --dry-run takes the writer lock, which records its pid) and,
in the index test only, the index sidecar itself: it is a cache, and a command that finds it
damaged rebuilds it. That is the one allowed write, besides the session catalog
(`catalog.sqlite3*`), a cache every listing brings up to date.

Bounded for CI: a deterministic sweep gives every (file, field) every JSON *type* once (the
variant of a type rotates over the fields), and hypothesis adds random (field, value, field,
value) pairs; the whole module runs in well under a minute on 2 cores.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import cli_env, run_in_process, run_ok
from helpers.crash_workspace import data_dir_env
from helpers.json_fields import fields_of

# --------------------------------------------------------------------------------------------
# The values a field is set to, by JSON type

VALUES_BY_TYPE: dict[str, list[Any]] = {
    "null": [None],
    "bool": [True, False],
    "int": [0, -1, -100, 1, 2**31, 2**63, 2**64 + 1, -(2**63) - 1, 10**30, -(10**30)],
    "float": [-0.0, 0.5, 1e308, -1e308, 1.5e-323, 3.0],
    "string": ["", " ", "x" * 20_000, "\x00\x1b[31m\n\r\u2028\u202e", "\ud800", "../../etc/passwd", "/", "2026-13-45T99:99:99Z",
               "00000000-0000-4000-8000-000000000000", "message", "user", "assistant"],
    "list": [[], [None], [1, "a", {}], [[[]]], [{"type": "text", "text": 5}]],
    "object": [{}, {"": None}, {"type": None}, {"a": {"b": [1.5, None]}}, {"role": 3, "content": {}}],
}
VALUES = [value for values in VALUES_BY_TYPE.values() for value in values]

JSON_FILES = ("transcript", "meta", "checkpoints", "history")


# --------------------------------------------------------------------------------------------
# The session and its files


class Workspace:
    """A data dir and a project holding one real session, restorable to its pristine bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.project = root / "project"
        self.project.mkdir(parents=True)
        (self.project / "existing.txt").write_text("base\n")
        run_ok(["-p", 'call write_file {"file_path": "new.txt", "content": "one\\n"}', "-n", "Mutated"], self.project, self.data)
        run_ok(["-c", "-p", 'call edit_file {"file_path": "existing.txt", "old_string": "base", "new_string": "changed"}'],
               self.project, self.data)
        run_ok(["-c", "-p", "Say hello please"], self.project, self.data)
        (self.data / "history.jsonl").write_text('{"p":"Say hello please","t":1795978263586}\n')  # the shell's (-p writes none)
        folder = next((self.data / "projects").iterdir())
        (self.transcript,) = [path for path in folder.glob("*.jsonl") if ".checkpoints." not in path.name]
        self.session_id = self.transcript.stem
        self.files = {
            "transcript": self.transcript,
            "meta": folder / f"{self.session_id}.meta.json",
            "checkpoints": folder / f"{self.session_id}.checkpoints.jsonl",
            "history": self.data / "history.jsonl",
        }
        self._add_every_kind_of_field()
        # The interactive shell writes the prompt history (-p never does): the real CLI's records.
        self.files["history"].write_text("".join(json.dumps({"p": prompt, "t": 1767323049290 + number}) + "\n"
                                                 for number, prompt in enumerate(["first", "/rename x", "Say hello please"])))
        self.pristine = {name: path.read_bytes() for name, path in self.files.items()}

    def _add_every_kind_of_field(self) -> None:
        """Entries and meta keys the offline turns do not write, so that every kind of field the
        format has (§4, §5) is there to be mutated: a label, a custom message, a branch summary and
        a compaction at the leaf; every meta key of the real CLI."""
        lines = [json.loads(line) for line in self.transcript.read_text().splitlines()]
        first, leaf = lines[1]["id"], lines[-1]["id"]
        stamp = lines[-1]["timestamp"]
        extra = [
            {"type": "label", "id": "1abe1000", "parentId": leaf, "timestamp": stamp, "targetId": first, "label": "start"},
            {"type": "custom_message", "id": "c0570000", "parentId": "1abe1000", "timestamp": stamp, "customType": "note",
             "content": [{"type": "text", "text": "a custom note"}], "display": True},
            {"type": "branch_summary", "id": "b5000000", "parentId": "c0570000", "timestamp": stamp, "fromId": first,
             "summary": "explored elsewhere", "details": {"readFiles": [], "modifiedFiles": ["new.txt"]}},
            {"type": "compaction", "id": "c0a70000", "parentId": "b5000000", "timestamp": stamp, "summary": "**Goal** ...",
             "firstKeptEntryId": "c0570000", "tokensBefore": 1234},
        ]
        with self.transcript.open("a") as handle:
            handle.writelines(json.dumps(entry) + "\n" for entry in extra)
        meta = json.loads(self.files["meta"].read_text())
        meta.update({"title": "Mutated", "userRenamed": True, "model": "offline", "modelProvider": "offline",
                     "parentSessionId": "00000000-0000-4000-8000-000000000000", "forkedAt": stamp,
                     "traceIds": ["t1", "t2"], "createdAt": 1767323046099, "gitBranch": "main", "name": "Mutated",
                     "compaction": {"count": 1, "tokensSaved": 10, "lastTokensSaved": 10, "lastCompactedAt": stamp},
                     "goal": {"text": "ship", "status": "active", "startedAt": 1767323046099, "turnCount": 1, "maxTurns": 5}})
        self.files["meta"].write_text(json.dumps(meta, indent=2))

    headerless = False
    """When set, `restore` writes the transcript without its header line (the CLI then builds the
    header from `meta.createdAt`, so meta fields reach other code)."""

    def restore(self) -> None:
        for name, data in self.pristine.items():
            if name == "transcript" and self.headerless:
                data = data.split(b"\n", 1)[1]
            self.files[name].write_bytes(data)

    def commands(self, which: str) -> list[list[str]]:
        """The read commands that read `which` (every read command, for the transcript)."""
        sid = self.session_id
        listing = [["sessions", "list", "--all"], ["sessions", "list", "--all", "--all-projects", "--json"]]
        show = [["sessions", "show", sid], ["sessions", "show", "mutated", "--json"], ["sessions", "show", sid[:8]]]
        views = [["sessions", "context", sid], ["sessions", "context", sid, "--json"], ["sessions", "context", sid, "--stats"],
                 ["sessions", "tree", sid], ["sessions", "tree", sid, "--json", "--offset", "1", "--limit", "3"]]
        checkpoints = [["checkpoints", "list", sid], ["checkpoints", "list", sid, "--json"],
                       ["rewind", sid, "--to", "1", "--mode", "both", "--dry-run"],
                       ["rewind", sid, "--to", "2", "--mode", "conversation", "--dry-run"],
                       ["rewind", sid, "--to", "3", "--mode", "summarize-to", "--dry-run"]]
        return {"transcript": listing + show + views + checkpoints, "meta": listing + show + checkpoints[1:3],
                "checkpoints": checkpoints, "history": listing[:1], "index": listing + show + views}[which]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("mutations").resolve()
    with data_dir_env(root / "data", index=False):
        yield Workspace(root)


@pytest.fixture
def inside(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """The workspace as the cwd and environment of in-process CLI runs."""
    for key, value in cli_env(workspace.data, COMMANDCODE_DEBUG="1", COLUMNS="120").items():
        if key.startswith("COMMANDCODE_") or key in ("NO_COLOR", "COLUMNS"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(workspace.project)
    workspace.restore()
    return workspace


# --------------------------------------------------------------------------------------------
# Fields, mutation, and the check


Path_ = tuple  # a field: (line number or None for a whole-file document, key or index, ...)


def documents(raw: bytes, name: str) -> list[Any]:
    """The JSON documents of a file: its lines (JSONL) or the one object."""
    if name == "meta":
        return [json.loads(raw)]
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def all_fields(workspace: Workspace) -> list[tuple[str, tuple]]:
    out = []
    for name in JSON_FILES:
        for line, document in enumerate(documents(workspace.pristine[name], name)):
            out.extend((name, (line, *field)) for field in fields_of(document))
    return out


def mutated(workspace: Workspace, name: str, field: tuple, value: Any) -> bytes:
    docs = documents(workspace.pristine[name], name)
    line, *keys = field
    if not keys:
        docs[line] = value
    else:
        target = docs[line]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return encode(docs, name)


def encode(docs: list[Any], name: str) -> bytes:
    encoded = [json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass") for doc in docs]
    if name == "meta":
        return encoded[0]
    return b"".join(part + b"\n" for part in encoded)


CATALOG_NAME = "catalog.sqlite3"


def state(workspace: Workspace, allowed: tuple[Path, ...] = ()) -> dict[str, tuple[bytes | None, int]]:
    """Every file and folder of the data dir and the project: bytes (None for a folder) and mtime."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for root in (workspace.data, workspace.project):
        for folder, folders, names in os.walk(root):
            for item in folders:
                path = os.path.join(folder, item)
                if item != "locks" and Path(path) not in allowed:
                    out[path] = (None, os.lstat(path).st_mtime_ns)
            if os.path.basename(folder) == "locks":
                continue
            for item in names:
                path = os.path.join(folder, item)
                if Path(path) in allowed or item.startswith(CATALOG_NAME):  # the session catalog: a cache
                    continue
                with open(path, "rb") as handle:
                    out[path] = (handle.read(), os.lstat(path).st_mtime_ns)
    return out



def check(workspace: Workspace, which: str, what: str, *, allowed: tuple[Path, ...] = ()) -> None:
    before = state(workspace, allowed)
    for argv in workspace.commands(which):
        try:
            code, _stdout, stderr = run_in_process(argv)
        except Exception as error:
            raise AssertionError(f"{what}: `commandcode {' '.join(argv)}` raised {type(error).__name__}: {error}") from error
        assert code in (0, 1), (what, argv, code, stderr)
        assert "Traceback" not in stderr and "internal error" not in stderr, (what, argv, stderr)
        if code == 1:
            lines = [line for line in stderr.splitlines() if not line.startswith("warning: ")]
            assert lines and lines[0].startswith("error: ") and len(lines) <= 2, (what, argv, stderr)
    after = state(workspace, allowed)
    assert after == before, (what, sorted(key for key in after.keys() | before.keys() if after.get(key) != before.get(key)))


def apply(workspace: Workspace, name: str, field: tuple, value: Any) -> str:
    workspace.restore()
    workspace.files[name].write_bytes(mutated(workspace, name, field, value))
    return f"{name}{list(field)} = {value!r:.80}"


# --------------------------------------------------------------------------------------------
# The tests


def test_the_sweep_covers_every_file(inside: Workspace) -> None:
    covered = {name for name, _field in all_fields(inside)}
    assert covered == set(JSON_FILES)
    assert len(all_fields(inside)) > 100


def sweep_batches(workspace: Workspace) -> Iterator[tuple[str, list[tuple[tuple, Any]]]]:
    """(file, [(field, value), ...]) batches: every field of every file gets a value of every JSON
    type exactly once. A batch changes at most one field per line (document), so one run of the
    commands covers a field of each line; the variant of a type rotates over the fields."""
    by_file: dict[str, dict[int, list[tuple]]] = {}
    for name, field in all_fields(workspace):
        by_file.setdefault(name, {}).setdefault(field[0], []).append(field)
    for name, lines in by_file.items():
        depth = max(len(fields) for fields in lines.values())
        for _kind, variants in VALUES_BY_TYPE.items():
            for round_number in range(depth):
                batch = [(fields[round_number], variants[(round_number + line) % len(variants)])
                         for line, fields in lines.items() if round_number < len(fields)]
                yield name, batch


def json_type(value: Any) -> str:
    return next(kind for kind, variants in VALUES_BY_TYPE.items() if any(type(v) is type(value) for v in variants))


def apply_batch(workspace: Workspace, name: str, batch: list[tuple[tuple, Any]]) -> str:
    workspace.restore()
    docs = documents(workspace.pristine[name], name)
    for (line, *keys), value in batch:
        if not keys:
            docs[line] = value
            continue
        target = docs[line]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    workspace.files[name].write_bytes(encode(docs, name))
    return "; ".join(f"{name}{list(field)} = {value!r:.60}" for field, value in batch)


@pytest.mark.parametrize("headerless", [False, True], ids=["with header", "headerless transcript"])
def test_every_field_of_every_sidecar_takes_every_json_type(inside: Workspace, headerless: bool) -> None:
    inside.headerless = headerless
    try:
        sweep(inside, only="meta" if headerless else None)
    finally:
        inside.headerless = False
        inside.restore()


def sweep(inside: Workspace, only: str | None) -> None:
    batches = [(name, batch) for name, batch in sweep_batches(inside) if only is None or name == only]
    covered = {(name, field, json_type(value)) for name, batch in batches for field, value in batch}
    fields = [(name, field) for name, field in all_fields(inside) if only is None or name == only]
    assert len(covered) == len(fields) * len(VALUES_BY_TYPE)  # every field, every JSON type
    for name, batch in batches:
        check(inside, name, apply_batch(inside, name, batch))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_random_values_in_two_fields_at_once(inside: Workspace, data: st.DataObject) -> None:
    fields = all_fields(inside)
    inside.restore()
    names = []
    for _ in range(2):
        name, field = data.draw(st.sampled_from(fields))
        value = data.draw(st.sampled_from(VALUES) | json_values)
        try:
            current = inside.files[name].read_bytes()
            inside.pristine[name], saved = current, inside.pristine[name]
            payload = mutated(inside, name, field, value)
        except (KeyError, IndexError, TypeError):  # the first mutation removed this field's container
            inside.pristine[name] = saved
            continue
        inside.pristine[name] = saved
        inside.files[name].write_bytes(payload)
        names.append((name, f"{name}{list(field)} = {value!r:.80}"))
    for name, what in names:
        check(inside, name, what)
    inside.restore()


@pytest.mark.parametrize("damage", ["empty", "header only", "cut in half", "one byte short", "flip every 7th byte",
                                    "json text", "zeros"])
def test_a_damaged_index_sidecar_is_rebuilt_or_ignored(inside: Workspace, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.reader import index_path_for

    run_in_process(["sessions", "show", inside.session_id])  # builds it
    index = Path(index_path_for(SessionFiles.for_transcript(inside.transcript)))
    good = index.read_bytes()
    assert good
    damaged = {
        "empty": b"", "header only": good[:16], "cut in half": good[: len(good) // 2], "one byte short": good[:-1],
        "flip every 7th byte": bytes(byte ^ 0xFF if position % 7 == 3 else byte for position, byte in enumerate(good)),
        "json text": b'{"entries": [1, 2, 3]}\n', "zeros": bytes(len(good)),
    }[damage]
    index.write_bytes(damaged)
    check(inside, "index", f"index: {damage}", allowed=(index, index.parent))  # the one allowed write: the cache
    shutil.rmtree(index.parent, ignore_errors=True)


@pytest.mark.parametrize("headerless", [False, True], ids=["with header", "headerless transcript"])
def test_every_meta_key_takes_every_value(inside: Workspace, headerless: bool) -> None:
    """Meta keys are read one by one, so all of them change at once: in batch k, key i holds
    VALUES[i + k], and every key meets every value of `VALUES` (1e308 and 10**30 as `createdAt`
    of a headerless transcript, whose header is built from it, included)."""
    inside.headerless = headerless
    keys = list(json.loads(inside.pristine["meta"]))
    try:
        for k in range(len(VALUES)):
            inside.restore()
            meta = {key: VALUES[(i + k) % len(VALUES)] for i, key in enumerate(keys)}
            inside.files["meta"].write_bytes(encode([meta], "meta"))
            check(inside, "meta", f"meta = {meta!r:.300}")
    finally:
        inside.headerless = False
        inside.restore()
