"""Hostile and broken input: every case opens with a clear report or is refused with one line,
no file of the case is modified, and nothing is written outside the data dir or the project.

The corpus is `tests/fixtures/` (the bad-input transcripts of `test_bad_input.py`, checked here
again through the text commands) plus `tests/fixtures/hostile/` (see its README): checkpoints
that point outside the project or through symlinks, backups whose bytes do not match their name,
headers that claim `/` as their working directory, terminal escape sequences, meta files that are
not objects, FIFOs where files should be, session references with `../`, and a 200 MB line.
Symlinks, FIFOs, planted objects and big files are made at test time.

For each case the whole tmp dir (data dir, project, and a folder `outside` beside them) is
snapshotted before and after: pre-existing files keep their bytes, mode and mtime; new files may
appear only in the data dir's own folders (`locks/`, `journals/`, `index/`, `objects/`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from commandcode.config.paths import project_dir
from commandcode.sessions.lock import lock_path_for
from helpers.checkpoints import lstat_walk
from helpers.cli import run_process
from helpers.locations import FIXTURES, REPO

HOSTILE = FIXTURES / "hostile"
REGRESSIONS = FIXTURES / "fuzz_regressions"
SID = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TIMEOUT = 30



# --------------------------------------------------------------------------------------------
# A case's world: a data dir, a project and an `outside` folder, all under one tmp dir


@dataclass
class World:
    root: Path
    data: Path
    project: Path
    outside: Path
    folder: Path  # the session's project folder in the data dir
    values: dict[str, str] = field(default_factory=dict)

    @property
    def transcript(self) -> Path:
        return self.folder / f"{SID}.jsonl"

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("COMMANDCODE_")}
        index = os.environ.get("COMMANDCODE_TEST_HOSTILE_INDEX", "off")  # `on` to rerun the corpus through the index
        env.update({"COMMANDCODE_HOME": str(self.data), "COMMANDCODE_INDEX": index, "NO_COLOR": "1",
                    "COLUMNS": "200", "PYTHONUNBUFFERED": "1"})
        return env

    def fill(self, data: bytes) -> bytes:
        for key, value in self.values.items():
            data = data.replace(("{{" + key + "}}").encode(), json.dumps(value)[1:-1].encode())
        return data

    def place(self, fixture: str, destination: Path) -> Path:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(self.fill((HOSTILE / fixture).read_bytes()))
        return destination

    def run(self, args: list[str]) -> tuple[int, str, str]:
        try:
            done = run_process(args, self.project, self.env(), timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return (-1, "", f"timed out after {TIMEOUT} s (hung)")
        return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def make_world(tmp_path: Path, *, data_inside_project: bool = False, transcript: str | None = "session.jsonl") -> World:
    root = tmp_path.resolve()
    project = root / "project"
    project.mkdir()
    data = project / ".commandcode" if data_inside_project else root / "home" / ".commandcode"
    data.mkdir(parents=True)
    outside = root / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("precious, outside the project\n")
    (outside / "secret.json").write_text('{"title": "outside"}')
    (project / "kept.txt").write_text("the project's own file\n")
    world = World(root, data, project, outside, data / "projects" / project_dir(project).name)
    world.values.update({"PROJECT": str(project), "OUTSIDE": str(outside), "TRANSCRIPT": str(world.transcript)})
    if transcript is not None:
        world.place(transcript, world.transcript)
    return world


Snapshot = dict[str, tuple]


def snapshot(root: Path) -> Snapshot:
    """Every entry under `root`: files (bytes, mode, mtime), links (target), folders and FIFOs (mode)."""
    out: Snapshot = {}
    for relative, path, status in lstat_walk(root):
        if stat.S_ISLNK(status.st_mode):
            out[relative] = ("link", os.readlink(path))
        elif stat.S_ISREG(status.st_mode):
            with open(path, "rb") as handle:
                out[relative] = ("file", hashlib.sha256(handle.read()).hexdigest(), status.st_mode, status.st_mtime_ns)
        else:
            out[relative] = ("other", stat.S_IFMT(status.st_mode), status.st_mode & 0o7777)
    return out


def assert_untouched(world: World, before: Snapshot, *, writes: bool = False) -> None:
    """Nothing that existed changed; new entries only in the data dir's own folders (and, for a
    command that runs a turn, anywhere in the data dir and the project)."""
    after = snapshot(world.root)
    data = os.path.relpath(world.data, world.root)
    project = os.path.relpath(world.project, world.root)
    caches = [os.path.join(data, name) for name in ("catalog.sqlite3", "catalog.sqlite3-wal", "catalog.sqlite3-shm")]
    allowed = [os.path.join(data, name) for name in ("locks", "journals", "index", "objects")] + caches
    if writes:
        allowed += [data, project]
    changed = sorted(key for key, value in before.items() if after.get(key) != value and key not in caches
                     and not (writes and key.startswith((data + os.sep, project + os.sep))))
    assert changed == [], f"modified or removed: {changed}"
    created = sorted(key for key in set(after) - set(before)
                     if not any(key == prefix or key.startswith(prefix + os.sep) for prefix in allowed))
    assert created == [], f"created outside the data dir's own folders: {created}"


def assert_clear(args: list[str], result: tuple[int, str, str], expect: int | None) -> None:
    """Exit 0 (a report), or exit 1 with one `error:` line and at most a `hint:` line; never a
    traceback; in text mode no control character reaches the terminal."""
    code, out, err = result
    shown = f"{args}: exit {code}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in err, shown
    assert code in (0, 1), shown
    if expect is not None:
        assert code == expect, shown
    if code == 1:
        lines = err.splitlines()
        assert 1 <= len(lines) <= 2 and lines[0].startswith("error: "), shown
        assert len(lines) == 1 or lines[1].startswith("hint: "), shown
    if "--json" not in args:
        assert not CONTROL.search(out) and not CONTROL.search(err), f"control characters reach the terminal: {shown}"


# --------------------------------------------------------------------------------------------
# Commands


def read_commands(ref: str = SID) -> list[list[str]]:
    return [["sessions", "list", "--all"], ["sessions", "show", ref], ["sessions", "show", ref, "--json"],
            ["sessions", "context", ref, "--json"], ["sessions", "tree", ref]]


def checkpoint_commands(ref: str = SID) -> list[list[str]]:
    return [["checkpoints", "list", ref], ["rewind", ref, "--to", "1", "--mode", "code", "--dry-run"],
            ["rewind", ref, "--to", "1", "--mode", "code", "--dry-run", "--json"]]


def run_all(world: World, commands: list[list[str]]) -> dict[tuple[str, ...], tuple[int, str, str]]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(world.run, commands))
    return {tuple(args): result for args, result in zip(commands, results)}


# --------------------------------------------------------------------------------------------
# Setups of the cases built at test time


def plant_object(world: World, stored: bytes, *, named_after: bytes | None = None, raw: bytes | None = None) -> str:
    """Puts a store object named after `named_after` (default: `stored`) whose file holds `stored`
    compressed (or `raw` as is)."""
    from commandcode import _native

    store = _native.ObjectStore(str(world.data / "objects"))
    name = _native.content_id(named_after if named_after is not None else stored)
    real, _ = store.put_bytes(stored)
    path = Path(store.object_path(name))
    if raw is not None or name != real:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.chmod(0o600)
        path.write_bytes(raw if raw is not None else Path(store.object_path(real)).read_bytes())
        path.chmod(0o400)
    world.values["OBJECT"] = name
    return name


def zstd_rle_bomb(total: int, byte: int = 0x41) -> bytes:
    """A valid zstd frame of RLE blocks that decompresses to `total` bytes (no content size)."""
    frame = bytearray(b"\x28\xb5\x2f\xfd")  # magic
    frame += bytes([0x00, 0x38])  # descriptor: no checksum, no size; window 128 KiB
    block = 128 * 1024
    remaining = total
    while remaining:
        size = min(block, remaining)
        remaining -= size
        header = (size << 3) | (1 << 1) | (1 if remaining == 0 else 0)
        frame += header.to_bytes(3, "little") + bytes([byte])
    return bytes(frame)


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], World]
    commands: Callable[[World], list[list[str]]]
    expect: dict[str, int] = field(default_factory=dict)  # first words of a command -> exit code
    rewind_error: str | None = None  # regex the real rewind's error line must match (it must refuse)
    turn: bool = False  # also run `-p ... -r SID -n NAME` (a turn and a meta update)
    turn_error: str | None = None
    bug: str | None = None


def with_checkpoints(fixture: str, **options: object) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path, **options)  # type: ignore[arg-type]
        setup = SETUPS.get(fixture)
        if setup is not None:
            setup(world)
        world.place(f"{fixture}.checkpoints.jsonl", world.folder / f"{SID}.checkpoints.jsonl")
        return world

    return build


def _symlink_dir(world: World) -> None:
    (world.project / "linkdir").symlink_to(world.outside, target_is_directory=True)


def _symlink_file(world: World) -> None:
    (world.project / "link.txt").symlink_to(world.outside / "victim.txt")


def _subdir(world: World) -> None:
    (world.project / "subdir").mkdir()
    (world.project / "subdir" / "inner.txt").write_text("inner")


def _object_mismatch(world: World) -> None:
    plant_object(world, b"these bytes are not the ones the name promises\n", named_after=b"the original\n")


def _object_not_zstd(world: World) -> None:
    plant_object(world, b"x", named_after=b"the original\n", raw=b"this is not a zstd frame at all")


def _object_bomb(world: World) -> None:
    plant_object(world, b"x", named_after=b"the original\n", raw=zstd_rle_bomb(300 << 20))


def _sha256_mismatch(world: World) -> None:
    digest = hashlib.sha256(b"the original\n").hexdigest()
    blobs = world.data / "file-history" / SID
    blobs.mkdir(parents=True)
    (blobs / digest).write_bytes(b"tampered bytes\n")
    world.values["SHA"] = digest


def _real_object(world: World) -> None:
    plant_object(world, b"the original\n")


SETUPS: dict[str, Callable[[World], None]] = {
    "cp_through_symlink_dir": _symlink_dir,
    "cp_symlink_target": _symlink_file,
    "cp_directory_target": _subdir,
    "cp_object_mismatch": _object_mismatch,
    "cp_object_not_zstd": _object_not_zstd,
    "cp_object_bomb": _object_bomb,
    "cp_sha256_mismatch": _sha256_mismatch,
    "cp_bad_mode": _real_object,
}


def with_transcript(fixture: str, checkpoints: str | None = None) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path, transcript=f"{fixture}.jsonl")
        if checkpoints:
            world.place(checkpoints, world.folder / f"{SID}.checkpoints.jsonl")
        return world

    return build


def with_meta(fixture: str) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path)
        world.place(fixture, world.folder / f"{SID}.meta.json")
        return world

    return build


def meta_special(kind: str) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path)
        meta = world.folder / f"{SID}.meta.json"
        if kind == "directory":
            meta.mkdir()
        elif kind == "fifo":
            os.mkfifo(meta)
        else:
            meta.symlink_to(world.outside / "secret.json")
        return world

    return build


def transcript_special(kind: str) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path, transcript=None)
        world.folder.mkdir(parents=True)
        if kind == "fifo":
            os.mkfifo(world.transcript)
        else:
            target = world.outside / "evil.jsonl"
            target.write_bytes(world.fill((HOSTILE / "session.jsonl").read_bytes()))
            world.transcript.symlink_to(target)
        return world

    return build


def dotdot_names(tmp_path: Path) -> World:
    """Transcripts named `...jsonl` (session id `..`) and `..jsonl` (session id `.`)."""
    world = make_world(tmp_path, transcript=None)
    for name in ("...jsonl", "..jsonl"):
        world.place("session.jsonl", world.folder / name)
    world.place("cp_outside_absolute.checkpoints.jsonl", world.folder / "...checkpoints.jsonl")
    return world


def data_special(kind: str) -> Callable[[Path], World]:
    def build(tmp_path: Path) -> World:
        world = make_world(tmp_path)
        if kind == "history_fifo":
            os.mkfifo(world.data / "history.jsonl")
        elif kind == "journal_garbage":
            (world.data / "journals").mkdir()
            (world.data / "journals" / f"{SID}.json").write_text("{garbage")
            world.place("cp_outside_absolute.checkpoints.jsonl", world.folder / f"{SID}.checkpoints.jsonl")
        elif kind == "lock_symlink":
            lock = world.data / "locks" / lock_path_for(world.transcript).name
            lock.parent.mkdir()
            lock.symlink_to(world.outside / "victim.txt")
        elif kind == "store_config_garbage":
            (world.data / "objects").mkdir()
            (world.data / "objects" / "config").write_text("[not a config")
        elif kind == "checkpoints_fifo":
            os.mkfifo(world.folder / f"{SID}.checkpoints.jsonl")
        return world

    return build


def _read(world: World) -> list[list[str]]:
    return read_commands()


def _read_and_checkpoints(world: World) -> list[list[str]]:
    return read_commands() + checkpoint_commands()


def _checkpoints(world: World) -> list[list[str]]:
    return checkpoint_commands()


def _refs(world: World) -> list[list[str]]:
    refs = ["../../etc/passwd", "..", f"../{SID}", f"{SID}/../{SID}", "/etc/passwd", "../outside/victim.txt",
            str(world.outside / "victim.txt"), f"../../{SID}.checkpoints.jsonl"]
    commands = []
    for position, ref in enumerate(refs):
        commands += [["sessions", "show", ref], ["checkpoints", "list", ref] if position % 2 else
                     ["rewind", ref, "--to", "1", "--mode", "code", "--yes"]]
    return commands


REFUSED_OUTSIDE = r"error: nothing was restored: .*victim\.txt is outside .*"
MALFORMED = r"error: nothing was restored: .*kept\.txt cannot be restored: its checkpoint record is malformed \("
CASES: dict[str, Case] = {
    # checkpoints that point where a restore must never write
    "cp_outside_absolute": Case(with_checkpoints("cp_outside_absolute"), _checkpoints, rewind_error=REFUSED_OUTSIDE),
    "cp_outside_dotdot": Case(with_checkpoints("cp_outside_dotdot"), _checkpoints, rewind_error=REFUSED_OUTSIDE),
    "cp_through_symlink_dir": Case(with_checkpoints("cp_through_symlink_dir"), _checkpoints,
                                   rewind_error=r"error: nothing was restored: .*linkdir/victim\.txt is outside .*"),
    "cp_symlink_target": Case(with_checkpoints("cp_symlink_target"), _checkpoints,
                              rewind_error=r"error: nothing was restored: .*link\.txt is a symlink \(never followed\)"),
    "cp_directory_target": Case(with_checkpoints("cp_directory_target"), _checkpoints,
                                rewind_error=r"error: nothing was restored: .*"),
    "cp_nul_path": Case(with_checkpoints("cp_nul_path"), _checkpoints, rewind_error=r"error: .*"),
    "cp_data_dir_target": Case(with_checkpoints("cp_data_dir_target", data_inside_project=True), _checkpoints,
                               rewind_error=r"error: nothing was restored: .*\.jsonl is inside commandcode's own data folder .*"),
    # backups that are not what they claim
    "cp_object_mismatch": Case(with_checkpoints("cp_object_mismatch"), _checkpoints,
                               rewind_error=r"error: nothing was restored: .*kept\.txt backup [0-9a-f]{12} is corrupt .*"),
    "cp_object_not_zstd": Case(with_checkpoints("cp_object_not_zstd"), _checkpoints,
                               rewind_error=r"error: nothing was restored: .*kept\.txt backup [0-9a-f]{12} is corrupt .*"),
    "cp_object_bomb": Case(with_checkpoints("cp_object_bomb"), _checkpoints,
                           rewind_error=r"error: nothing was restored: .*kept\.txt backup [0-9a-f]{12} is corrupt .*"),
    "cp_object_missing": Case(with_checkpoints("cp_object_missing"), _checkpoints,
                              rewind_error=r"error: nothing was restored: .*kept\.txt backup [0-9a-f]{12} is missing"),
    "cp_sha256_mismatch": Case(with_checkpoints("cp_sha256_mismatch"), _checkpoints,
                               rewind_error=r"error: nothing was restored: .*kept\.txt backup [0-9a-f]{12} is corrupt .*"),
    # fields that are not what the format says
    "cp_bad_hash": Case(with_checkpoints("cp_bad_hash"), _checkpoints, rewind_error=MALFORMED + r"`hash` .*"),
    "cp_bad_after_hash": Case(with_checkpoints("cp_bad_after_hash"), _checkpoints,
                              rewind_error=MALFORMED + r"`afterHash` \"not a digest\" is not a 64-digit hex digest\)"),
    "cp_bad_mode": Case(with_checkpoints("cp_bad_mode"), _checkpoints, rewind_error=MALFORMED + r"`mode` .*"),
    "cp_garbage_records": Case(with_checkpoints("cp_garbage_records"), _checkpoints),
    "checkpoints_fifo": Case(data_special("checkpoints_fifo"), _checkpoints, turn=True,
                             expect={"checkpoints": 1, "rewind": 1}),
    # headers that claim a dangerous working directory
    "header_cwd_root": Case(with_transcript("header_cwd_root", "header_cwd_root.checkpoints.jsonl"),
                            _read_and_checkpoints, rewind_error=REFUSED_OUTSIDE),
    "header_cwd_outside": Case(with_transcript("header_cwd_outside", "header_cwd_outside.checkpoints.jsonl"),
                               _read_and_checkpoints, rewind_error=REFUSED_OUTSIDE),
    "header_cwd_relative": Case(with_transcript("header_cwd_relative", "header_cwd_relative.checkpoints.jsonl"),
                                _read_and_checkpoints, rewind_error=REFUSED_OUTSIDE),
    "header_cwd_nul": Case(with_transcript("header_cwd_nul"), _read_and_checkpoints, turn=True),
    # text that would drive a terminal
    "terminal_escapes": Case(with_transcript("terminal_escapes", "terminal_escapes.checkpoints.jsonl"),
                             _read_and_checkpoints),
    # bytes and numbers
    "utf16": Case(with_transcript("utf16"), _read, turn=True),
    "cr_only": Case(with_transcript("cr_only"), _read, turn=True),
    "huge_numbers": Case(with_transcript("huge_numbers"), _read, turn=True),
    "long_id": Case(with_transcript("long_id"), _read, turn=True),
    # duplicate ids that disagree: the listing warns about this one session and lists the others
    "dup_id_message_string": Case(with_transcript("dup_id_message_string"), _read),
    # meta files that are not an object
    "meta_invalid_json": Case(with_meta("meta_invalid_json.meta.json"), _read, turn=True, turn_error="is not a JSON object"),
    "meta_null": Case(with_meta("meta_null.meta.json"), _read, turn=True, turn_error="is not a JSON object"),
    "meta_number": Case(with_meta("meta_number.meta.json"), _read, turn=True, turn_error="is not a JSON object"),
    "meta_nan": Case(with_meta("meta_nan.meta.json"), _read, turn=True, turn_error="is not a JSON object"),
    "meta_deep": Case(with_meta("meta_deep.meta.json"), _read, turn=True, turn_error="is not a JSON object"),
    "meta_invalid_utf8": Case(with_meta("meta_invalid_utf8.meta.json"), _read, turn=True,
                              turn_error="is not a JSON object"),
    "meta_directory": Case(meta_special("directory"), _read, turn=True, turn_error="meta.json"),
    "meta_fifo": Case(meta_special("fifo"), _read, turn=True, turn_error="meta.json"),
    "meta_symlink_outside": Case(meta_special("symlink"), _read, turn=True),
    # transcripts that are not regular files, names and references with `..`
    "transcript_fifo": Case(transcript_special("fifo"), _read, expect={"sessions show": 1, "sessions context": 1,
                                                                      "sessions tree": 1}),
    "transcript_symlink_outside": Case(transcript_special("symlink"), _read, turn=True, turn_error="evil.jsonl|jsonl"),
    "dotdot_session_ids": Case(dotdot_names, lambda world: read_commands("..") + checkpoint_commands("..")
                               + [["sessions", "show", "."]], expect={"rewind": 0}),
    "dotdot_references": Case(make_world, _refs, expect={"sessions": 1, "checkpoints": 1, "rewind": 1}),
    # the data dir's own files
    "history_fifo": Case(data_special("history_fifo"), _read, turn=True),
    "journal_garbage": Case(data_special("journal_garbage"), _checkpoints, turn=True,
                            rewind_error=r"error: .*unreadable restore journal.*", turn_error="unreadable restore journal"),
    "lock_symlink": Case(data_special("lock_symlink"), _read, turn=True, turn_error="lock"),
    "store_config_garbage": Case(data_special("store_config_garbage"), _read, turn=True,
                                 turn_error="unsupported backup store"),
}


def _params() -> list[object]:
    return [pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=case.bug)] if case.bug else [])
            for name, case in CASES.items()]


def _expected(case: Case, args: list[str]) -> int | None:
    for words, code in case.expect.items():
        if " ".join(args).startswith(words):
            return code
    return None


@pytest.mark.parametrize("name", _params())
def test_hostile_case(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    world = case.build(tmp_path)
    before = snapshot(world.root)
    commands = case.commands(world)
    for args, result in run_all(world, commands).items():
        assert_clear(list(args), result, _expected(case, list(args)))
    assert_untouched(world, before)
    if case.rewind_error is not None:
        args = ["rewind", SID, "--to", "1", "--mode", "code", "--yes"]
        result = world.run(args)
        assert_clear(args, result, 1)
        assert re.fullmatch(case.rewind_error, result[2].splitlines()[0]), result
        assert_untouched(world, before)
    if case.turn:
        args = ["-p", "a turn on a hostile session", "-r", SID, "-n", "renamed"]
        result = world.run(args)
        assert_clear(args, result, 1 if case.turn_error else 0)
        if case.turn_error:
            assert re.search(case.turn_error, result[2].splitlines()[0]), result
        assert_untouched(world, before, writes=True)


def test_a_session_with_disagreeing_duplicate_ids_is_listed(tmp_path: Path) -> None:
    world = with_transcript("dup_id_message_string")(tmp_path)
    code, out, err = world.run(["sessions", "list", "--all", "--json"])
    assert (code, err) == (0, "")
    assert [row["id"] for row in json.loads(out)] == [SID]


def test_one_hostile_session_does_not_hide_the_others(tmp_path: Path) -> None:
    world = with_transcript("dup_id_message_string")(tmp_path)
    healthy = "0d6c2f3e-5b7a-4c1e-9f0a-2b3c4d5e6f70"
    world.place("session.jsonl", world.folder / f"{healthy}.jsonl")
    for args in (["sessions", "list", "--all", "--json"], ["sessions", "list", "--all"]):
        code, out, err = world.run(args)
        assert_clear(args, (code, out, err), 0)
        assert healthy[:8] in out
        assert len(err.splitlines()) <= 1


# --------------------------------------------------------------------------------------------
# The bad-input corpus of test_bad_input.py, through the text commands


def _bad_input_fixtures() -> list[str]:
    return sorted(path.stem for path in FIXTURES.glob("*.jsonl"))


@pytest.mark.parametrize("name", _bad_input_fixtures())
def test_bad_input_corpus_through_the_text_commands(name: str, tmp_path: Path) -> None:
    world = make_world(tmp_path, transcript=None)
    world.folder.mkdir(parents=True)
    shutil.copyfile(FIXTURES / f"{name}.jsonl", world.transcript)
    for sidecar in FIXTURES.glob(f"{name}.*.json"):
        shutil.copyfile(sidecar, world.folder / f"{SID}{sidecar.name[len(name):]}")
    before = snapshot(world.root)
    legacy = name.startswith("legacy_")
    commands = [["sessions", "show", SID], ["sessions", "tree", SID], ["sessions", "list", "--all"]]
    results = {tuple(args): world.run(args) for args in commands} if legacy else run_all(world, commands)
    for args, result in results.items():
        assert_clear(list(args), result, None)
    if not legacy:  # a legacy file is migrated on first open (its original kept in .v2.bak)
        assert_untouched(world, before)


# --------------------------------------------------------------------------------------------
# Big inputs, generated at test time


@pytest.mark.slow
def test_a_200_mb_line(tmp_path: Path) -> None:
    world = make_world(tmp_path, transcript=None)
    world.folder.mkdir(parents=True)
    head = (HOSTILE / "session.jsonl").read_bytes().replace(b"{{PROJECT}}", str(world.project).encode())
    big = (b'{"type":"message","id":"bbbb0005","parentId":"bbbb0004","timestamp":"2026-01-02T03:04:10.000Z",'
           b'"message":{"role":"user","content":[{"type":"text","text":"' + b"y" * (200 << 20) + b'"}]}}\n')
    after = b'{"type":"custom","id":"bbbb0006","parentId":"bbbb0005","timestamp":"2026-01-02T03:04:11.000Z","customType":"c"}\n'
    world.transcript.write_bytes(head + big + after)
    del big
    before = snapshot(world.root)
    commands = [["sessions", "show", SID, "--json"], ["sessions", "tree", SID, "--json"],
                ["sessions", "context", SID, "--stats"], ["sessions", "list", "--all"]]
    for args in commands:
        result = world.run(args)
        assert_clear(args, result, 0)
    shown = json.loads(world.run(["sessions", "show", SID, "--json"])[1])
    assert (shown["leaf"], shown["message_count"], shown["skipped_lines"]) == ("bbbb0006", 5, [])
    stats = json.loads(world.run(["sessions", "context", SID, "--stats", "--json"])[1])
    assert stats["context_messages"] == 5
    assert_untouched(world, before)


@pytest.mark.slow
def test_a_200_mb_torn_line_is_one_skipped_tail(tmp_path: Path) -> None:
    """Generated sparse-free but cheap: the torn line is 200 MB of one byte, never read into Python."""
    world = make_world(tmp_path)
    with open(world.transcript, "ab") as handle:
        handle.write(b'{"type":"message","id":"bbbb0005","parentId":"bbbb0004","timestamp":"t","message":{"role":"user","content":"')
        chunk = b"z" * (8 << 20)
        for _ in range(25):
            handle.write(chunk)
    before = snapshot(world.root)
    result = world.run(["sessions", "show", SID, "--json"])
    assert_clear(["sessions", "show", SID, "--json"], result, 0)
    shown = json.loads(result[1])
    assert shown["leaf"] == "bbbb0004"
    assert [line["reason"] for line in shown["skipped_lines"]] == ["torn tail without newline"]
    assert_untouched(world, before)


# --------------------------------------------------------------------------------------------
# Fuzz regressions: every input the fuzzer kept replays without a crash


KNOWN_FAILURES: dict[str, str] = {  # the start of a kept input's failure signature -> the bug it shows
}


def _regressions() -> list[object]:
    params = []
    for path in sorted(REGRESSIONS.glob("*")):
        if path.suffix not in (".jsonl", ".json") or not path.is_file():
            continue
        signature = path.with_name(path.name + ".txt").read_text() if path.with_name(path.name + ".txt").exists() else ""
        bug = next((reason for start, reason in KNOWN_FAILURES.items() if signature.startswith(start)), None)
        marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
        params.append(pytest.param(path, id=path.name, marks=marks))
    return params


@pytest.mark.parametrize("path", _regressions())
def test_fuzz_regression_replays(path: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "benches"))
    try:
        import fuzz_scan
    finally:
        sys.path.pop(0)
    failure = fuzz_scan.replay(path, tmp_path)
    assert failure is None, failure


def test_the_hostile_corpus_is_documented() -> None:
    """Every committed hostile fixture has a row in the hostile README, and the corpus has at least
    40 inputs together with the bad-input transcripts."""
    readme = (HOSTILE / "README.md").read_text()
    committed = [path for path in HOSTILE.iterdir() if path.name not in ("README.md", "make_hostile.py")]
    for path in committed:
        assert f"`{path.name}`" in readme, path.name
    cases = len(CASES) + len(_bad_input_fixtures()) + 2  # + the two 200 MB lines
    assert cases >= 40
