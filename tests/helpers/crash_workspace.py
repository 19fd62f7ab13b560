"""The crash harness's workspace (`helpers.crash_harness`): the operations and their sizes, the
per-operation counts, snapshots of a tree, and `Workspace` — one data dir and one project, seeded
for its operation, with the state its checks compare against and the checks themselves (the
generic ones in `helpers.crash_checks`, an operation's own in its plugin module)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import (
    crash_blobs,
    crash_branching,
    crash_checks,
    crash_interop,
    crash_interrupt,
    crash_shell_baseline,
    crash_subagents,
)
from helpers.crash_blobs import BLOB_OPERATIONS
from helpers.crash_branching import BRANCHING_OPERATIONS
from helpers.crash_interop import INTEROP_OPERATIONS
from helpers.crash_interrupt import INTERRUPT_OPERATIONS
from helpers.crash_subagents import SUBAGENT_OPERATIONS

OPERATIONS = ("append", "first_write", "backup", "rewind", "meta", "export", "compact", "import", "rename", "shell")
SHELL_FILES = 60
ALL_OPERATIONS = (OPERATIONS + BRANCHING_OPERATIONS + INTEROP_OPERATIONS + BLOB_OPERATIONS + INTERRUPT_OPERATIONS
                  + SUBAGENT_OPERATIONS)
# operations whose seed, runs and checks live in a module of their own (seed/next_run/started/record_report/check)
PLUGINS: dict[str, Any] = {**{name: crash_branching for name in BRANCHING_OPERATIONS},  # fork, clone, goto, label
                           **{name: crash_interop for name in INTEROP_OPERATIONS},  # import claude
                           **{name: crash_blobs for name in BLOB_OPERATIONS},  # the backup rule's blobs
                           **{name: crash_interrupt for name in INTERRUPT_OPERATIONS},  # a turn Esc interrupted
                           **{name: crash_subagents for name in SUBAGENT_OPERATIONS}}  # sub-agents' backups
EXPORT_TURNS = 300  # the exported session: enough rows that a kill lands mid-render or mid-write
COMPACT_WINDOW = 3_000  # tokens: a few long turns pass 90 % of it
COMPACT_TEXT = "long words " * 360  # ~1,000 tokens a prompt
LANE_POINTS = 40  # a fresh workspace after this many points (bounds data growth)
REWIND_FILES = 90  # two turns stay under the 200-backups-per-session cap (with the delta files)
DELTA_FILES = 8
BACKUP_FILES = 4
BACKUP_FILE_BYTES = 2_000_000


def _delta_text(index: int, letter: str) -> bytes:
    """A ~24 KB file of state `letter`: B changes one line in its middle, C also appends one (a
    rewind between them rewrites one or two of its six blocks)."""
    lines = [f"delta {index} line {number:05d}\n" for number in range(1000)]
    if letter in "BC":
        lines[500] = f"delta {index} line changed in turn {letter}\n"
    if letter == "C":
        lines.append("appended in turn 2\n")
    return "".join(lines).encode()


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


def assert_kill_points_recover(run_points: Callable[..., tuple[int, list[str]]], root: Path, operation: str, *,
                               points: int, seed_value: int, least: int) -> None:
    """Runs an operation's kill points (`run_points(root, operation, points, seed_value=)` of its
    crash module): no check is violated, and at least `least` runs were really killed."""
    killed, violations = run_points(root, operation, points, seed_value=seed_value)
    assert violations == []
    assert killed >= least, f"only {killed} of {points} runs were killed: the kills missed the operation"


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
        self.journal_at = 0.0  # when a rewind's journal appears, from its start (calibrated; 0: unknown)
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
        between checkpoint 1 (state A) and checkpoint 2 (state B). The transcript has two turns,
        so a `--mode both` rewind to checkpoint 1 moves the leaf too."""
        from commandcode.checkpoints.manager import CheckpointManager

        self.session_id = self._seed_session(turns=2)
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
        # Edits that leave most of a file's blocks as they were (one line changed, one appended):
        # a restore overwrites only the blocks that differ, so a kill can leave a file part old, part new.
        deltas = [f"pkg{index}/delta{index}.txt" for index in range(DELTA_FILES)]
        for index, name in enumerate(deltas):
            (self.project / name).write_bytes(_delta_text(index, "A"))
        names.extend(deltas)
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
                elif name in deltas:
                    path.write_bytes(_delta_text(deltas.index(name), letter))
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
            plugin = PLUGINS.get(self.operation)
            if plugin is not None and hasattr(plugin, "machine_crash"):  # the page cache lost too
                plugin.machine_crash(self, label)
            crash_checks.check_sessions(self, violations, label)
            crash_checks.check_checkpoints_and_objects(self, violations, label)
            crash_checks.check_meta(self, violations, label)
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
        """Every reported-committed shell turn recorded the file, symlink and empty folder its
        command made (`source: shell`; the link and folder with their `afterKind`). A killed
        one too, once the next open recovered its note (`checkpoints/shell_pending.py`): every
        `made-*.txt` in the project is in a checkpoint, whichever run made it."""
        from commandcode.checkpoints import shell_pending
        from commandcode.checkpoints import store as backups
        from commandcode.checkpoints.records import read_checkpoints
        from commandcode.sessions.files import SessionFiles

        for transcript in self.transcripts():
            shell_pending.recover(SessionFiles.for_transcript(transcript), self.project, backups.BackupStore())
        recorded = {Path(item.path).name: item.extra.get("afterKind")
                    for path in (self.data / "projects").glob("*/*.checkpoints.jsonl")
                    for record in read_checkpoints(path) for item in record.files if item.extra.get("source") == "shell"}
        for markers in self.reported.values():
            for marker in markers:
                for made, kind in ((f"made-{marker}.txt", None), (f"link-{marker}", "symlink"), (f"hollow-{marker}", "folder")):
                    if kind == "folder" and not (self.project / f"hollow-{marker}").is_dir():
                        continue
                    if kind != "folder" and not any(self.project.rglob(made)):
                        continue
                    if made not in recorded or recorded[made] != kind:
                        violations.append(f"{label}: the shell turn {marker} was committed but {made} is not in "
                                          f"its checkpoint as a {kind or 'file'}")
        for made in sorted(path.name for path in self.project.rglob("made-*.txt")):
            if made not in recorded:
                violations.append(f"{label}: {made} was made by a command, killed or not, and no checkpoint has it")

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
