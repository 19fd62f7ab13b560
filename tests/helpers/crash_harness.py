"""Crash injection: run real `commandcode` processes, SIGKILL them at random moments, then check
every promise the files make. Shared by `tests/crash/test_crash_injection.py` (a small budget in CI)
and `benches/crash_harness.py` (the full run, `--points N --seed S`).

Ten operations (and the branching ones of `helpers.crash_branching`, the Claude Code import of
`helpers.crash_interop`), each in its own workspace (a data dir and a project folder):

- `append`: `commandcode -p PROMPT -r SID` on an existing session;
- `first_write`: `commandcode -p PROMPT` starting a new session (its first turn writes a file);
- `backup`: a turn whose `edit_file` calls back up multi-megabyte files first;
- `rewind`: `commandcode rewind SID --to N --mode code --yes` over a few hundred files, and
  about a third of the time `commandcode rewind SID --redo --yes` (undoing the last rewind);
- `shell`: a turn whose `bash` call rewrites, deletes and creates files in a project of a few
  megabytes, so kills land in the shell-tracking baseline (taken while the model is called), in
  the command, and in the records of what it changed;
- `meta`: `commandcode -p PROMPT -r SID -n NAME` (a `session_info` entry and a meta update);
- `export`: `commandcode export SID -o out.(md|html|jsonl)` over an existing export of the same
  name (the target must be the old export or a whole new one, the transcript unchanged).
- `compact`: `commandcode -p LONG_PROMPT -r SID --effort high` in a project whose settings give a
  3,000-token `contextWindow`: an `effort_change` committed on its own, and every other turn or so
  an automatic compaction (a `compaction` entry committed before the turn, then `meta.compaction`).
- `import`: `commandcode import pi PATH --json` of a new pi session (the store, checkpoints, meta
  and the transcript last: a kill leaves no imported session or a complete one).
- `rename`: `commandcode sessions rename SID NAME --json` (the same entry and update, no turn).

A point is one run killed either after a random delay (up to the operation's measured duration;
for a rewind also 0-40 ms after its restore journal appears, so kills land inside the native
restore) or, through `tests/support/killable_cli.py`, at a random Python-level mutating
file-system call (sometimes mid-write, leaving a torn write). Prompts carry a unique marker; with
`--output-format json` the CLI prints its result only after the turn is committed, so a marker
whose JSON result was read whole before the kill was *reported committed*.

After every point the harness checks (each failure is a violation):

- every transcript of the data dir opens with the library, starts with a whole header line (no
  half-created session), and, with the index on, gives exactly what a cold scan gives;
- every reported-committed marker is in its session, on the active path;
- no line of a transcript is two records glued together;
- every checkpoints line is whole JSON, and every blake3 object a checkpoint names exists;
- every object in the store decompresses and hashes to its name;
- every meta file is a JSON object, and a reported rename is in it;
- after the next open's recovery (`backups.recover_pending`), the project is wholly as before a
  rewind or wholly as after it, with no temp or set-aside file left in it;
- a run that was not killed succeeded (so the run after a crash works; a rewind refused because
  our own interrupted restore looks like an outside edit is such a failure).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import crash_branching, crash_interop, crash_shell_baseline
from helpers.crash_branching import BRANCHING_OPERATIONS
from helpers.crash_interop import INTEROP_OPERATIONS
from helpers.locations import KILLABLE

OPERATIONS = ("append", "first_write", "backup", "rewind", "meta", "export", "compact", "import", "rename", "shell")
SHELL_FILES = 60
ALL_OPERATIONS = OPERATIONS + BRANCHING_OPERATIONS + INTEROP_OPERATIONS
# operations whose seed, runs and checks live in a module of their own (seed/next_run/started/record_report/check)
PLUGINS: dict[str, Any] = {**{name: crash_branching for name in BRANCHING_OPERATIONS},  # fork, clone, goto, label
                           **{name: crash_interop for name in INTEROP_OPERATIONS}}  # import claude
EXPORT_TURNS = 300  # the exported session: enough rows that a kill lands mid-render or mid-write
COMPACT_WINDOW = 3_000  # tokens: a few long turns pass 90 % of it
COMPACT_TEXT = "long words " * 360  # ~1,000 tokens a prompt
LANE_POINTS = 40  # a fresh workspace after this many points (bounds data growth)
REWIND_FILES = 90  # two turns stay under the 200-backups-per-session cap
BACKUP_FILES = 4
BACKUP_FILE_BYTES = 2_000_000
_GLUED = re.compile(rb'\{"type":"')


def index_supported() -> bool:
    """Whether `_native.scan_session` takes an index sidecar path (engineer A's index sidecars)."""
    from commandcode import _native

    with tempfile.TemporaryDirectory() as folder:
        transcript = Path(folder) / "probe.jsonl"
        transcript.write_bytes(b"")
        try:
            _native.scan_session(str(transcript), str(Path(folder) / "probe.idx"))
        except TypeError:
            return False
        except Exception:
            return True
    return True


def python_path_env() -> dict[str, str]:
    package_root = str(Path(__import__("commandcode").__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH", "")]))
    return {"PYTHONPATH": python_path}


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class OperationStats:
    runs: int = 0
    killed: int = 0
    survived: int = 0
    violations: int = 0
    reported_then_killed: int = 0
    kill_modes: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)

    def merge(self, other: OperationStats) -> None:
        self.runs += other.runs
        self.killed += other.killed
        self.survived += other.survived
        self.violations += other.violations
        self.reported_then_killed += other.reported_then_killed
        for key, value in other.kill_modes.items():
            self.kill_modes[key] = self.kill_modes.get(key, 0) + value
        for key, value in other.notes.items():
            self.notes[key] = self.notes.get(key, 0) + value

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "killed": self.killed, "survived": self.survived, "violations": self.violations,
                "reported_then_killed": self.reported_then_killed, "kill_modes": dict(sorted(self.kill_modes.items())),
                "notes": dict(sorted(self.notes.items()))}


@dataclass
class LaneResult:
    operation: str
    stats: OperationStats
    violations: list[str]


# --------------------------------------------------------------------------------------------
# Snapshots


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and symlink under `root`: relative path → (bytes or link text, mode bits)."""
    out: dict[str, tuple[bytes, int]] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            status = os.lstat(path)
            relative = os.path.relpath(path, root)
            if os.path.islink(path):
                out[relative] = (b"->" + os.readlink(path).encode(), 0)
            else:
                with open(path, "rb") as handle:
                    out[relative] = (handle.read(), status.st_mode & 0o7777)
    return out


@contextlib.contextmanager
def data_dir_env(data: Path, index: bool) -> Iterator[None]:
    """Points this process's commandcode at `data` (the library reads the env on each call)."""
    saved = {key: os.environ.get(key) for key in ("COMMANDCODE_HOME", "COMMANDCODE_INDEX")}
    os.environ["COMMANDCODE_HOME"] = str(data)
    os.environ["COMMANDCODE_INDEX"] = "on" if index else "off"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --------------------------------------------------------------------------------------------
# A workspace: one data dir, one project, the state the checks compare against


class Workspace:
    def __init__(self, root: Path, operation: str, index: bool) -> None:
        self.root = root
        self.operation = operation
        self.index = index
        self.data = root / "home" / ".commandcode"
        self.project = (root / "project").resolve() if (root / "project").exists() else root / "project"
        self.session_id: str | None = None
        self.reported: dict[str, list[str]] = {}  # session id -> markers reported committed
        self.reported_names: dict[str, str] = {}  # session id -> last name reported committed
        self.pending_names: dict[str, set[str]] = {}  # session id -> names of runs started since
        self.rewind_states: dict[int, dict[str, tuple[bytes, int]]] = {}  # checkpoint number -> tree
        self.verified_objects: set[tuple[str, int, int]] = set()
        self.duration = 1.0
        self.calls = 0
        self.journal_window = 0.04  # how long a rewind's restore journal exists (calibrated)
        self.notes: dict[str, int] = {}  # what the checks saw, e.g. interrupted restores and their fate
        self.branching: dict[str, Any] = {}  # the state of a `PLUGINS` operation (`crash_branching`, `crash_interop`)
        self.last_killed = False
        self.last_format = ""
        self.setup()

    # ---- environment

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
        env.update(python_path_env())
        env.update({"COMMANDCODE_HOME": str(self.data), "COMMANDCODE_INDEX": "on" if self.index else "off",
                    "NO_COLOR": "1", "PYTHONUNBUFFERED": "1", "GIT_CONFIG_NOSYSTEM": "1", "COLUMNS": "200",
                    "COMMANDCODE_SCRATCHPAD_BASE": str(self.root / "scratchpads"),
                    "PI_CODING_AGENT_DIR": str(self.root / "pi-agent"),
                    "CLAUDE_CONFIG_DIR": str(self.root / "claude-config")})
        return env

    def new_pi_source(self, marker: str) -> Path:
        """A new pi v3 session file to import, its prompt carrying `marker`."""
        session_id = str(uuid.uuid4())
        folder = self.root / "pi-agent" / "sessions" / ("--" + str(self.project).lstrip("/").replace("/", "-") + "--")
        folder.mkdir(parents=True, exist_ok=True)
        stamp = "2026-01-02T03:04:05.000Z"
        lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": str(self.project)},
                 {"type": "message", "id": "a0000001", "parentId": None, "timestamp": stamp,
                  "message": {"role": "user", "content": f"{marker} import", "timestamp": 1}},
                 {"type": "message", "id": "a0000002", "parentId": "a0000001", "timestamp": stamp,
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "imported reply"}],
                              "provider": "stub", "model": "stub-model", "usage": {"input": 1, "output": 1},
                              "stopReason": "stop", "timestamp": 2}}]
        path = folder / f"2026-01-02T03-04-05-000Z_{session_id}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    # ---- setup

    def setup(self) -> None:
        self.project.mkdir(parents=True, exist_ok=True)
        self.project = self.project.resolve()
        self.data.parent.mkdir(parents=True, exist_ok=True)
        with data_dir_env(self.data, self.index):
            if self.operation == "export":
                self.session_id = self._seed_session(turns=EXPORT_TURNS)
                self.exported: dict[str, bytes] = {}
                self.export_source = next(iter(self.transcripts())).read_bytes()
            elif self.operation in ("append", "meta", "backup", "rename", "shell"):
                if self.operation == "backup":
                    for number in range(BACKUP_FILES):
                        self._write_big(number, 0)
                if self.operation == "shell":
                    for number in range(SHELL_FILES):
                        path = self.project / f"src{number % 6}/module{number}.txt"
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text(f"module {number} version 0\n" * 3000)
                if self.operation == "shell":
                    for number in range(SHELL_FILES):
                        path = self.project / f"src{number % 6}/module{number}.txt"
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text(f"module {number} version 0\n" * 3000)
                self.session_id = self._seed_session()
            elif self.operation == "compact":
                (self.project / ".commandcode").mkdir(exist_ok=True)
                (self.project / ".commandcode" / "settings.json").write_text(json.dumps({"contextWindow": COMPACT_WINDOW}))
                self.session_id = self._seed_session(turns=6, text=COMPACT_TEXT)
            elif self.operation == "rewind":
                self._seed_rewind()
            elif self.operation in PLUGINS:
                PLUGINS[self.operation].seed(self)

    def _write_big(self, number: int, version: int) -> None:
        rng = random.Random(number)
        words = [f"w{rng.randrange(10**6):06d}" for _ in range(4096)]
        body = " ".join(rng.choice(words) for _ in range(BACKUP_FILE_BYTES // 8))
        (self.project / f"big{number}.txt").write_text(f"VERSION {version}\n{body}\n")

    def _seed_session(self, turns: int = 1, text: str = "") -> str:
        from commandcode.config.paths import project_dir
        from commandcode.sessions.files import SessionFiles
        from commandcode.sessions.writer import SessionWriter

        files = SessionFiles(project_dir(self.project), str(uuid.uuid4()))
        with SessionWriter(files, str(self.project)) as writer:
            for turn in range(turns):
                prompt = f"seed turn {turn}\n{text}" if text else "seed turn"
                writer.append_message({"role": "user", "content": [{"type": "text", "text": prompt}],
                                       "meta": {"source": "user", "messageId": str(uuid.uuid4())}})
                reply = "seeded" if turn == 0 else f"reply {turn}: " + "lorem ipsum dolor sit amet " * 200
                writer.append_message({"role": "assistant", "content": [{"type": "text", "text": reply}],
                                       "meta": {"source": "model", "messageId": str(uuid.uuid4())}}, model="seed")
            writer.commit()
        return files.session_id

    def _seed_rewind(self) -> None:
        """Turn 1 takes every file from state A to B, turn 2 from B to C; rewinds then alternate
        between checkpoint 1 (state A) and checkpoint 2 (state B)."""
        from commandcode.checkpoints.manager import CheckpointManager

        self.session_id = self._seed_session()
        from commandcode.config.paths import project_dir
        from commandcode.sessions.files import SessionFiles

        files = SessionFiles(project_dir(self.project), self.session_id)
        names = [f"pkg{index % 9}/file{index}.txt" for index in range(REWIND_FILES)]
        for index, name in enumerate(names):
            path = self.project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"A {index}\n" * ((index % 7 + 1) * 300))
        (self.project / "big.bin").write_bytes(random.Random(7).randbytes(3_000_000))
        names.append("big.bin")
        self.rewind_states[1] = tree_state(self.project)
        manager = CheckpointManager.for_session(files, self.project)
        for turn, (letter, state) in enumerate((("B", 2), ("C", 3)), start=1):
            manager.open_checkpoint(f"turn {turn}", turn * 2, None)
            for index, name in enumerate(names):
                path = self.project / name
                manager.backup_before_edit(str(path))
                if index % 11 == 5 and letter == "B":
                    path.unlink()  # deleted in turn 1, back again in turn 2
                elif name == "big.bin":
                    path.write_bytes(random.Random(state).randbytes(3_000_000))
                else:
                    path.write_text(f"{letter} {index}\n" * ((index % 5 + 2) * 300))
                    os.chmod(path, 0o600 if (index + turn) % 3 == 0 else 0o644)
                manager.record_after_edit(str(path))
            manager.flush()
            self.rewind_states[state] = tree_state(self.project)

    # ---- checks

    def transcripts(self) -> list[Path]:
        from commandcode.config.paths import is_transcript_name

        found = []
        projects = self.data / "projects"
        if projects.is_dir():
            for folder in sorted(projects.iterdir()):
                for path in sorted(folder.iterdir()):
                    if is_transcript_name(path.name) and path.is_file():
                        found.append(path)
        return found

    def check(self, violations: list[str], label: str) -> None:
        with data_dir_env(self.data, self.index):
            self._check_sessions(violations, label)
            self._check_checkpoints_and_objects(violations, label)
            self._check_meta(violations, label)
            if self.operation == "rewind":
                self._check_rewind(violations, label)
            if self.operation in PLUGINS:
                PLUGINS[self.operation].check(self, violations, label)
            if self.operation == "export":
                self._check_export(violations, label)
            if self.operation == "shell":
                self._check_shell(violations, label)
                crash_shell_baseline.check(self, violations, label)

    def _check_export(self, violations: list[str], label: str) -> None:
        """The transcript is unchanged; each target is absent, the previous export or a whole new
        one (its format's end); a temporary file is left only by a killed export."""
        if next(iter(self.transcripts())).read_bytes() != self.export_source:
            violations.append(f"{label}: the export changed the transcript")
        ends = {"md": b"_Exported from Command Code_\n", "html": b"</html>\n"}
        for name in ("md", "html", "jsonl"):
            target = self.project / f"out.{name}"
            if not target.exists():
                continue
            data = target.read_bytes()
            whole = data == self.export_source if name == "jsonl" else data.endswith(ends[name])
            if data != self.exported.get(name) and not whole:
                violations.append(f"{label}: {target.name} is half written ({len(data)} bytes)")
            self.exported[name] = data
        if not self.last_killed:
            prefix = f".out.{self.last_format}."
            leftovers = [path.name for path in self.project.iterdir() if path.name.startswith(prefix)]
            if leftovers:
                violations.append(f"{label}: an export that finished left {leftovers}")

    def _check_shell(self, violations: list[str], label: str) -> None:
        """Every reported-committed shell turn recorded the file its command made (`source: shell`)."""
        from commandcode.checkpoints.records import read_checkpoints

        recorded = {Path(item.path).name for path in (self.data / "projects").glob("*/*.checkpoints.jsonl")
                    for record in read_checkpoints(path) for item in record.files if item.extra.get("source") == "shell"}
        for markers in self.reported.values():
            for marker in markers:
                made = f"made-{marker}.txt"
                if made not in recorded and any(self.project.rglob(made)):
                    violations.append(f"{label}: the shell turn {marker} was committed but {made} is not in its checkpoint")

    def _check_sessions(self, violations: list[str], label: str) -> None:
        from commandcode import _native
        from commandcode.sessions.reader import open_session

        for transcript in self.transcripts():
            session_id = transcript.name[: -len(".jsonl")]
            try:
                session = open_session(transcript)
                context = session.context()
            except Exception as error:
                violations.append(f"{label}: {transcript.name} does not open: {type(error).__name__}: {error}")
                continue
            header = session.header
            if header.synthesized or header.line != 1:
                # A half-created transcript: the real CLI takes a file whose first line is not a
                # header for v1 and "migrates" it to an empty session (format §2.6).
                violations.append(f"{label}: {transcript.name} has no whole header line ({transcript.stat().st_size} bytes)")
            if self.index:
                cold = _native.scan_session(str(transcript))
                warm = [row.id for row in session.tree_rows()]
                if [row[0] for row in cold.tree_rows()] != warm or len(cold.skipped) != len(session.skipped_lines):
                    violations.append(f"{label}: {transcript.name}: the index gives another view than a cold scan")
            texts = set()
            for message in context.messages:
                for block in message.get("content", []):
                    if isinstance(block, dict) and isinstance(block.get("text"), str):
                        texts.add(block["text"])
            joined = "\n".join(texts)
            for marker in self.reported.get(session_id, []):
                if marker not in joined:
                    violations.append(f"{label}: {transcript.name}: reported turn {marker} is not on the active path")
            name = self.reported_names.get(session_id)
            if name is not None and session.name not in {name, *self.pending_names.get(session_id, ())}:
                violations.append(f"{label}: {transcript.name}: reported name {name!r}, session says {session.name!r}")
            for skipped in session.skipped_lines:
                raw = _read_range(transcript, skipped.offset, skipped.length)
                for match in _GLUED.finditer(raw, 1):
                    try:
                        value = json.loads(raw[match.start():])
                    except ValueError:
                        continue
                    if isinstance(value, dict) and "id" in value:
                        violations.append(f"{label}: {transcript.name} line {skipped['line']}: a record glued onto a fragment")
                        break

    def _check_checkpoints_and_objects(self, violations: list[str], label: str) -> None:
        from commandcode import _native

        objects = self.data / "objects"
        referenced: set[str] = set()
        for path in sorted((self.data / "projects").glob("*/*.checkpoints.jsonl")):
            for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line[1:] if line.startswith(b"#") else line)  # a hidden line (format §6.1)
                except ValueError:
                    violations.append(f"{label}: {path.name} line {number} is not whole JSON")
                    continue
                for item in record.get("files", []):
                    if item.get("algo") == "blake3" and item.get("hash"):
                        referenced.add(item["hash"])
                    if isinstance(item.get("blake3"), str):  # a compatible backup's copy in our store
                        referenced.add(item["blake3"])
        if not objects.is_dir():
            if referenced:
                violations.append(f"{label}: checkpoints name {len(referenced)} objects but there is no store")
            return
        store = _native.ObjectStore(str(objects))
        present = set()
        for folder in sorted(objects.iterdir()):
            if not (folder.is_dir() and len(folder.name) == 2):
                continue
            for path in folder.iterdir():
                if len(path.name) != 62:
                    continue  # temp files are swept later
                content_id = folder.name + path.name
                present.add(content_id)
                status = path.stat()
                key = (content_id, status.st_ino, status.st_size)
                if key in self.verified_objects:
                    continue
                try:
                    store.verify(content_id)
                except Exception as error:
                    violations.append(f"{label}: object {content_id[:12]} fails verification: {error}")
                    continue
                self.verified_objects.add(key)
        for missing in sorted(referenced - present):
            violations.append(f"{label}: a checkpoint names object {missing[:12]}, which is not in the store")

    def _check_meta(self, violations: list[str], label: str) -> None:
        for path in sorted((self.data / "projects").glob("*/*.meta.json")):
            try:
                value = json.loads(path.read_bytes())
            except ValueError:
                violations.append(f"{label}: {path.name} is not whole JSON")
                continue
            if not isinstance(value, dict):
                violations.append(f"{label}: {path.name} is not a JSON object")
                continue
            session_id = path.name[: -len(".meta.json")]
            name = self.reported_names.get(session_id)
            if name is not None and value.get("title") not in {name, *self.pending_names.get(session_id, ())}:
                violations.append(f"{label}: {path.name}: reported name {name!r} not in the meta ({value.get('title')!r})")

    def _check_rewind(self, violations: list[str], label: str) -> None:
        from commandcode.checkpoints import store as backups
        from commandcode.config.paths import project_dir
        from commandcode.sessions.files import SessionFiles

        try:
            files = SessionFiles(project_dir(self.project), self.session_id or "")
            outcome = backups.recover_pending(files, self.project)
            if outcome is not None:
                key = f"interrupted_restore_{outcome[0]}"
                self.notes[key] = self.notes.get(key, 0) + 1
        except Exception as error:
            violations.append(f"{label}: recovery failed: {type(error).__name__}: {error}")
        tree = tree_state(self.project)
        if tree not in (self.rewind_states[1], self.rewind_states[2], self.rewind_states.get(3)):
            changed = sorted(name for name in set(tree) | set(self.rewind_states[1])
                             if tree.get(name) not in (self.rewind_states[1].get(name), self.rewind_states[2].get(name)))
            violations.append(f"{label}: the project is half restored ({len(changed)} files differ, e.g. {changed[:3]})")
        stray = [name for name in tree if any(part.startswith(".") for part in Path(name).parts)]
        if stray:
            violations.append(f"{label}: stray files in the project: {stray[:3]}")

    def can_redo(self) -> bool:
        """Whether the session has a rewind a redo can undo (then a redo point is run instead)."""
        from commandcode.checkpoints.records import read_checkpoints
        from commandcode.checkpoints.redo_points import undoable
        from commandcode.config.paths import project_dir
        from commandcode.sessions.files import SessionFiles

        with data_dir_env(self.data, self.index):
            files = SessionFiles(project_dir(self.project), self.session_id or "")
            return undoable(read_checkpoints(files.checkpoints)) is not None

    def current_rewind_state(self) -> int | None:
        tree = tree_state(self.project)
        for number, state in self.rewind_states.items():
            if tree == state:
                return number
        return None


def _read_range(path: Path, offset: int, length: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)


# --------------------------------------------------------------------------------------------
# Running one point


@dataclass
class Run:
    args: list[str]
    marker: str
    name: str | None = None


def _next_run(workspace: Workspace, rng: random.Random) -> Run:
    marker = f"marker-{uuid.uuid4().hex[:16]}"
    operation = workspace.operation
    if operation in PLUGINS:
        return Run(PLUGINS[operation].next_run(workspace, rng, marker), marker)
    if operation == "append":
        return Run(["-p", f"{marker} append", "-r", workspace.session_id or "", "--output-format", "json"], marker)
    if operation == "first_write":
        prompt = f"{marker} first\ncall write_file {json.dumps({'file_path': f'{marker}.txt', 'content': marker})}"
        return Run(["-p", prompt, "--output-format", "json"], marker)
    if operation == "backup":
        version = rng.randrange(1, 10**6)
        calls = []
        for number in range(BACKUP_FILES):
            current = (workspace.project / f"big{number}.txt").read_text().split("\n", 1)[0]
            calls.append("call edit_file " + json.dumps({"file_path": f"big{number}.txt", "old_string": current,
                                                        "new_string": f"VERSION {version}"}))
        return Run(["-p", f"{marker} backup\n" + "\n".join(calls), "-r", workspace.session_id or "",
                    "--output-format", "json"], marker)
    if operation == "export":
        fmt = rng.choice(("md", "html", "jsonl"))
        workspace.last_format = fmt
        return Run(["export", workspace.session_id or "", "--full", "-o", str(workspace.project / f"out.{fmt}")], marker)
    if operation == "compact":
        return Run(["-p", f"{marker} compact\n{COMPACT_TEXT}", "-r", workspace.session_id or "", "--effort", "high",
                    "--output-format", "json"], marker)
    if operation == "shell":  # a headless bash call needs the bypass mode
        version = rng.randrange(1, 10**6)
        picked = sorted(rng.sample(range(SHELL_FILES), 6))
        edits = " && ".join(f"sed -i 's/version [0-9]*/version {version}/' src{number % 6}/module{number}.txt"
                            for number in picked[:4])
        folder = f"src{picked[5] % 6}" if rng.random() < 0.6 else f"new-{marker}/deep"  # folders a rewind removes
        command = (f"{edits} && rm -f src{picked[4] % 6}/module{picked[4]}.txt && "
                   f"mkdir -p {folder} && echo {marker} > {folder}/made-{marker}.txt")
        return Run(["-p", f"{marker} shell\ncall bash {json.dumps({'command': command})}", "-r", workspace.session_id or "",
                    "--yolo", "--output-format", "json"], marker)
    if operation == "meta":
        name = f"name {marker}"
        return Run(["-p", f"{marker} meta", "-r", workspace.session_id or "", "-n", name, "--output-format", "json"],
                   marker, name)
    if operation == "import":
        return Run(["import", "pi", str(workspace.new_pi_source(marker)), "--json"], marker)
    if operation == "rename":
        name = f"name {marker}"
        return Run(["sessions", "rename", workspace.session_id or "", name, "--json"], marker, name)
    if rng.random() < 0.35 and workspace.can_redo():
        return Run(["rewind", workspace.session_id or "", "--redo", "--yes", "--json"], marker)
    state = workspace.current_rewind_state()
    target = 2 if state == 1 else 1
    return Run(["rewind", workspace.session_id or "", "--to", str(target), "--mode", "code", "--yes", "--json"],
               marker)


def _record_report(workspace: Workspace, run: Run, stdout: str) -> bool:
    """Whether the run's result was read whole; if so, records what it promised."""
    if workspace.operation in PLUGINS:
        return bool(PLUGINS[workspace.operation].record_report(workspace, run.args, stdout))
    if workspace.operation == "export":
        return stdout.startswith("exported ")
    try:
        value = json.loads(stdout)
    except ValueError:
        return False
    if workspace.operation == "rewind":
        return isinstance(value, dict) and "checkpoint" in value
    if workspace.operation == "import":
        if not isinstance(value, dict) or value.get("already_imported") is not False:
            return False
        workspace.reported.setdefault(str(value["id"]), []).append(run.marker)
        return True
    if workspace.operation == "rename":  # `{"id", "name"}` once the entry and the meta are written
        if not isinstance(value, dict) or value.get("name") != run.name or not isinstance(value.get("id"), str):
            return False
        workspace.reported_names[value["id"]] = run.name
        workspace.pending_names[value["id"]] = set()
        return True
    if not isinstance(value, dict) or value.get("type") != "result":
        return False
    session_id = value.get("session_id")
    if isinstance(session_id, str):
        workspace.reported.setdefault(session_id, []).append(run.marker)
        if run.name is not None:
            workspace.reported_names[session_id] = run.name
            workspace.pending_names[session_id] = set()
    return True


def _start(workspace: Workspace, run: Run, extra_env: dict[str, str], *, killable: bool) -> subprocess.Popen[bytes]:
    if run.name is not None and workspace.session_id is not None:
        workspace.pending_names.setdefault(workspace.session_id, set()).add(run.name)
    if workspace.operation in PLUGINS:
        PLUGINS[workspace.operation].started(workspace, run.args)
    command = [sys.executable, str(KILLABLE)] if killable else [sys.executable, "-m", "commandcode"]
    return subprocess.Popen([*command, *run.args], cwd=workspace.project, env={**workspace.env(), **extra_env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def calibrate(workspace: Workspace, rng: random.Random, stats: OperationStats, violations: list[str], label: str) -> None:
    """Two runs without a kill: the duration (the shorter, so that a run slowed by a busy
    machine does not push every timed kill past the end of the runs that follow) and the number
    of kill points."""
    _calibration_run(workspace, rng, stats, violations, label)
    slower = workspace.duration
    _calibration_run(workspace, rng, stats, violations, label)
    workspace.duration = min(slower, workspace.duration)


def _calibration_run(workspace: Workspace, rng: random.Random, stats: OperationStats, violations: list[str],
                     label: str) -> None:
    run = _next_run(workspace, rng)
    count_file = workspace.root / "count.txt"
    started = time.monotonic()
    process = _start(workspace, run, {"COMMANDCODE_TEST_COUNT_FILE": str(count_file)}, killable=True)
    if workspace.operation == "rewind":
        workspace.journal_window = _journal_lifetime(workspace, process) or workspace.journal_window
    stdout, stderr = process.communicate(timeout=300)
    elapsed = time.monotonic() - started
    stats.runs += 1
    _judge_unkilled(workspace, run, process.returncode, stdout, stderr, stats, violations, label)
    workspace.duration = elapsed
    with contextlib.suppress(OSError, ValueError):
        workspace.calls = max(1, int(count_file.read_text()))
    workspace.check(violations, label)


def _journal_lifetime(workspace: Workspace, process: subprocess.Popen[bytes]) -> float | None:
    """How long the restore journal of a running rewind exists (at least 2 ms), so that journal-
    timed kills land anywhere in the restore however fast it is; `None` if it was not seen."""
    journal = workspace.data / "journals" / f"{workspace.session_id}.json"
    appeared = None
    while process.poll() is None:
        present = journal.exists()
        if present and appeared is None:
            appeared = time.monotonic()
        elif appeared is not None and not present:
            return max(0.002, time.monotonic() - appeared)
        time.sleep(0.0002)
    return None


def _judge_unkilled(workspace: Workspace, run: Run, code: int, stdout: bytes, stderr: bytes, stats: OperationStats,
                    violations: list[str], label: str) -> None:
    text = stdout.decode("utf-8", "replace")
    if code == 0 and _record_report(workspace, run, text):
        return
    error = stderr.decode("utf-8", "replace").strip()
    violations.append(f"{label}: a run that was not killed failed (exit {code}): {error[-400:]}")


def run_point(workspace: Workspace, rng: random.Random, stats: OperationStats, violations: list[str], label: str) -> None:
    """One run, killed at a random moment (or at a random kill point), then every check."""
    run = _next_run(workspace, rng)
    # Native writes (object store, restore) are reached by timed kills only: weight those up there.
    # A restore is short next to the process around it, so most timed rewind kills are timed from
    # the moment its journal appears ("journal": within the journal's calibrated lifetime).
    timed = 0.6 if workspace.operation in ("rewind", "backup") else 0.34
    mode = "timer" if rng.random() < timed else rng.choice(("call", "call-torn"))
    if workspace.operation == "rewind" and mode == "timer" and rng.random() < 0.6:
        mode = "journal"
    extra: dict[str, str] = {}
    if mode != "timer":
        point = rng.randint(1, max(1, workspace.calls))
        extra["COMMANDCODE_TEST_KILL_AT"] = f"{point}:torn" if mode == "call-torn" else str(point)
    process = _start(workspace, run, extra, killable=mode not in ("timer", "journal"))
    # Most of a run's first third is interpreter start-up, where nothing is written: aim most timed
    # kills past it.
    delay = rng.uniform(workspace.duration * (0.3 if rng.random() < 0.7 else 0.0), workspace.duration * 0.95)
    try:
        if mode == "timer":
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                _kill_group(process)
        elif mode == "journal":
            journal = workspace.data / "journals" / f"{workspace.session_id}.json"
            while process.poll() is None and not journal.exists():
                time.sleep(0.0005)
            if process.poll() is None:
                time.sleep(rng.uniform(0.0, workspace.journal_window))
                _kill_group(process)
        stdout, stderr = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        violations.append(f"{label}: a run hung for 300 s")
    stats.runs += 1
    killed = process.returncode == -signal.SIGKILL
    workspace.last_killed = killed
    if killed:
        stats.killed += 1
        stats.kill_modes[mode] = stats.kill_modes.get(mode, 0) + 1
        if _record_report(workspace, run, stdout.decode("utf-8", "replace")):
            stats.reported_then_killed += 1
    else:
        _judge_unkilled(workspace, run, process.returncode, stdout, stderr, stats, violations, label)
    before = len(violations)
    workspace.check(violations, label)
    if killed and len(violations) == before:
        stats.survived += 1
    for key, value in workspace.notes.items():
        stats.notes[key] = stats.notes.get(key, 0) + value
    workspace.notes.clear()


def run_lane(operation: str, root: Path, points: int, seed: int, index: bool) -> LaneResult:
    """Runs `points` killed runs of one operation, in fresh workspaces of `LANE_POINTS` points."""
    rng = random.Random(f"{seed}:{operation}:{root.name}")
    stats = OperationStats()
    violations: list[str] = []
    done = 0
    generation = 0
    while done < points:
        folder = root / f"{operation}-{generation}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        workspace = Workspace(folder, operation, index)
        calibrate(workspace, rng, stats, violations, f"{operation}#{done}/calibrate")
        lane_points = min(LANE_POINTS, points - done)
        for _ in range(lane_points):
            run_point(workspace, rng, stats, violations, f"{operation}#{done}")
            done += 1
        shutil.rmtree(folder, ignore_errors=True)
        generation += 1
    stats.violations = len(violations)
    return LaneResult(operation, stats, violations)


def split_points(points: int, operations: tuple[str, ...] = ALL_OPERATIONS) -> dict[str, int]:
    """`points` spread over the operations as evenly as possible."""
    base, extra = divmod(points, len(operations))
    return {operation: base + (1 if position < extra else 0) for position, operation in enumerate(operations)}


def report(results: list[LaneResult], *, seed: int, index: bool, elapsed: float) -> dict[str, Any]:
    """The JSON report: counts per operation, then every violation (capped)."""
    per_operation: dict[str, OperationStats] = {}
    violations: list[str] = []
    for result in results:
        per_operation.setdefault(result.operation, OperationStats()).merge(result.stats)
        violations.extend(result.violations)
    total = OperationStats()
    for stats in per_operation.values():
        total.merge(stats)
    return {
        "seed": seed,
        "index": "on" if index else "off",
        "elapsed_seconds": round(elapsed, 1),
        "operations": {name: per_operation[name].to_json() for name in ALL_OPERATIONS if name in per_operation},
        "total": total.to_json(),
        "violation_list": violations[:100],
    }
