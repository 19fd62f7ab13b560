"""A restore journal is input: recovery checks every path it names against the confinement the
restore had before touching anything (issue 11, class 1).

Matrix: for every path-bearing field of every journal version and state (v2 open, v1 open, v2
committed; write, delete, createdDirs, trash, temp, set-aside original, sources, store), each
hostile value (an absolute path outside, a `..` escape, a symlinked parent that escapes, the data
dir itself, another session's file or folder) makes `checkpoints list` print one line naming the
journal and exit 1; the journal stays byte-identical and the sentinel folder, the project and the
data dir are untouched. A control case shows the untampered journal is finished.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from commandcode.checkpoints import store as backups
from helpers.cli import CATALOG_FILES

OTHER_SESSION = "00000000-0000-4000-8000-0000000000ff"
RESTORED = b"restored\n"
TREES = ("sentinel", "work")


class World:
    """One session with a checkpoint, its project `work`, and a `sentinel` folder outside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.work = root / "work"
        self.sentinel = root / "sentinel"
        self.env = {**os.environ, "COMMANDCODE_HOME": str(self.data), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
        self.reset()
        self.run("-p", 'call write_file {"file_path":"a.txt","content":"one"}')
        self.run("-c", "-p", 'call write_file {"file_path":"a.txt","content":"two"}')
        (transcript,) = [path for path in (self.data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
        self.session = transcript.name[: -len(".jsonl")]
        self.project_folder = transcript.parent
        self.journal = self.data / "journals" / f"{self.session}.json"
        self.trash = self.data / "journals" / f".{self.session}.json.1.2.trash"
        self.blobs = self.data / "file-history" / self.session
        self.blobs.mkdir(parents=True, exist_ok=True)
        (self.blobs / hashlib.sha256(RESTORED).hexdigest()).write_bytes(RESTORED)
        # Another session's files: its transcript and its blob folder.
        (self.project_folder / f"{OTHER_SESSION}.jsonl").write_text('{"type":"header"}\n')
        other_blobs = self.data / "file-history" / OTHER_SESSION
        other_blobs.mkdir(parents=True, exist_ok=True)
        (other_blobs / hashlib.sha256(b"theirs").hexdigest()).write_bytes(b"theirs")
        self.reset()

    def run(self, *args: str) -> tuple[int, str, str]:
        done = subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=self.work, env=self.env,
                              capture_output=True, timeout=300, check=False)
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")

    def reset(self) -> None:
        """The project and the sentinel folder in their known state; no journal, no trash."""
        shutil.rmtree(self.sentinel, ignore_errors=True)
        (self.sentinel / "sub").mkdir(parents=True)
        (self.sentinel / "victim").write_text("precious\n")
        (self.sentinel / "sub" / "deep").write_text("deep\n")
        self.work.mkdir(exist_ok=True)
        for child in self.work.iterdir():
            if child.name != "a.txt":
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        (self.work / "b.txt").write_text("bee\n")
        (self.work / "link").symlink_to(self.sentinel)
        for leftover in (self.data / "journals").glob("*") if (self.data / "journals").exists() else ():
            if not leftover.name.endswith(".lock"):
                shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        if hasattr(self, "trash"):
            self.trash.mkdir(parents=True)

    def snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for base in (self.sentinel, self.work, self.data):
            for path in sorted(base.rglob("*")):
                if path.name.endswith(".lock") or "locks" in path.relative_to(base).parts or path.name in CATALOG_FILES:
                    continue  # (the session catalog is a cache every listing may refresh)
                key = str(path)
                if path.is_symlink():
                    out[key] = ("link", os.readlink(path))
                elif path.is_dir():
                    out[key] = "dir"
                else:
                    out[key] = path.read_bytes()
        return out

    # Journals ------------------------------------------------------------------------------

    def write_op(self, **extra: Any) -> dict[str, Any]:
        return {"action": "write", "target": str(self.work / "a.txt"), "folder": str(self.work),
                "temp": str(self.work / ".a.txt.1.2.tmp"), "rollback": str(self.trash / "0"),
                "originalExisted": True, "content": backups.content_id(RESTORED), "method": "swap",
                "source": {"blob": str(self.blobs), "sha256": hashlib.sha256(RESTORED).hexdigest()},
                "mode": 0o644, "before": None, **extra}

    def delete_op(self, **extra: Any) -> dict[str, Any]:
        return {"action": "delete", "target": str(self.work / "b.txt"), "folder": str(self.work), "temp": None,
                "rollback": str(self.trash / "1"), "originalExisted": True, "content": None, "method": "swap",
                "source": None, "mode": 0o644, "before": None, **extra}

    def journal_v2(self, state: str = "open") -> dict[str, Any]:
        return {"version": 2, "state": state, "store": str(self.data / "objects"), "root": str(self.work),
                "createdDirs": [str(self.work / "newdir")], "trash": str(self.trash),
                "ops": [self.write_op(), self.delete_op()]}

    def journal_v1(self) -> dict[str, Any]:
        write = self.write_op(source=None)
        del write["method"], write["source"], write["mode"], write["before"], write["folder"]
        delete = self.delete_op()
        del delete["method"], delete["source"], delete["mode"], delete["before"], delete["folder"]
        return {"version": 1, "state": "open", "createdDirs": [str(self.work / "newdir")], "trash": str(self.trash),
                "ops": [write, delete]}

    def committed(self) -> dict[str, Any]:
        journal = self.journal_v2("committed")
        journal["ops"][0]["rollback"] = str(self.work / ".a.txt.1.2.ccrollback")
        return journal


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield World(tmp_path_factory.mktemp("confinement").resolve())


def hostile(world: World, kind: str) -> dict[str, str]:
    """The hostile values for a field naming a file (`file`) or a folder (`folder`)."""
    if kind == "file":
        return {"outside": str(world.sentinel / "victim"),
                "dotdot": f"{world.work}/../sentinel/victim",
                "symlink": str(world.work / "link" / "victim"),
                "data_dir": str(world.data),
                "other_session": str(world.project_folder / f"{OTHER_SESSION}.jsonl")}
    return {"outside": str(world.sentinel),
            "dotdot": f"{world.work}/../sentinel/sub",
            "symlink": str(world.work / "link" / "sub"),
            "data_dir": str(world.data),
            "other_session": str(world.data / "file-history" / OTHER_SESSION)}


Setter = Callable[[dict[str, Any], str], None]


def op_field(index: int, name: str) -> Setter:
    def set_field(journal: dict[str, Any], value: str) -> None:
        journal["ops"][index][name] = value
    return set_field


def source(key: str) -> Setter:
    def set_source(journal: dict[str, Any], value: str) -> None:
        op = journal["ops"][0]
        if key == "blob":
            op["source"] = {"blob": value, "sha256": hashlib.sha256(RESTORED).hexdigest()}
        elif key == "file":
            op["source"] = {"file": value}
        else:  # an object of a store the journal names
            op["source"] = {"object": backups.content_id(RESTORED)}
            journal["store"] = value
    return set_source


def created_dirs(journal: dict[str, Any], value: str) -> None:
    journal["createdDirs"] = [value]


def trash(journal: dict[str, Any], value: str) -> None:
    journal["trash"] = value


# (journal builder, field name, value kind, setter)
FIELDS: list[tuple[str, str, str, Setter]] = [
    ("v2", "write.target", "file", op_field(0, "target")),
    ("v2", "write.folder", "folder", op_field(0, "folder")),
    ("v2", "write.temp", "file", op_field(0, "temp")),
    ("v2", "write.rollback", "file", op_field(0, "rollback")),
    ("v2", "write.source.blob", "folder", source("blob")),
    ("v2", "write.source.file", "file", source("file")),
    ("v2", "write.source.object.store", "folder", source("object")),
    ("v2", "delete.target", "file", op_field(1, "target")),
    ("v2", "delete.folder", "folder", op_field(1, "folder")),
    ("v2", "delete.rollback", "file", op_field(1, "rollback")),
    ("v2", "createdDirs", "folder", created_dirs),
    ("v2", "trash", "folder", trash),
    ("v1", "write.target", "file", op_field(0, "target")),
    ("v1", "write.temp", "file", op_field(0, "temp")),
    ("v1", "write.rollback", "file", op_field(0, "rollback")),
    ("v1", "delete.target", "file", op_field(1, "target")),
    ("v1", "delete.rollback", "file", op_field(1, "rollback")),
    ("v1", "createdDirs", "folder", created_dirs),
    ("v1", "trash", "folder", trash),
    ("committed", "write.rollback", "file", op_field(0, "rollback")),
    ("committed", "delete.rollback", "file", op_field(1, "rollback")),
    ("committed", "trash", "folder", trash),
]
VALUES = ("outside", "dotdot", "symlink", "data_dir", "other_session")


def base(world: World, version: str) -> dict[str, Any]:
    return {"v2": world.journal_v2, "v1": world.journal_v1, "committed": world.committed}[version]()


def plant(world: World, journal: dict[str, Any]) -> bytes:
    world.journal.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(journal).encode()
    world.journal.write_bytes(text)
    return text


def assert_refused(world: World, text: bytes, args: tuple[str, ...]) -> None:
    before = world.snapshot()
    code, _, err = world.run(*args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1, (code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert str(world.journal) in lines[0] and "nothing was touched" in lines[0], err
    assert "Traceback" not in err
    assert world.journal.read_bytes() == text
    assert world.snapshot() == before


@pytest.mark.parametrize("version", ["v2", "v1", "committed"])
def test_an_untampered_journal_is_finished(world: World, version: str) -> None:
    world.reset()
    plant(world, base(world, version))
    code, _, err = world.run("checkpoints", "list", world.session)
    assert code == 0, err
    verb = "undid" if version == "v1" else "finished"
    assert f"{verb} a restore of session {world.session}" in err, err
    assert not world.journal.exists()
    if version == "v2":
        assert (world.work / "a.txt").read_bytes() == RESTORED
        assert not (world.work / "b.txt").exists()
    assert (world.sentinel / "victim").read_text() == "precious\n"


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize(("version", "field", "kind", "setter"), FIELDS, ids=[f"{v}-{f}" for v, f, _, _ in FIELDS])
def test_a_hostile_path_in_any_journal_field_is_refused(
    world: World, version: str, field: str, kind: str, setter: Setter, value: str
) -> None:
    world.reset()
    (world.work / "a.txt").write_text("two\n")
    journal = copy.deepcopy(base(world, version))
    setter(journal, hostile(world, kind)[value])
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))


def test_a_trash_naming_any_folder_is_not_deleted(world: World) -> None:
    """The issue's first example: a committed journal with no ops whose trash is a folder outside."""
    world.reset()
    journal = {"version": 2, "state": "committed", "store": None, "createdDirs": [], "trash": str(world.sentinel),
               "ops": []}
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))
    assert (world.sentinel / "sub" / "deep").read_text() == "deep\n"


def test_an_open_journal_acting_outside_does_not_run_on_the_next_turn(world: World) -> None:
    """The issue's second example: a delete outside, a created folder outside and a write copied
    from an arbitrary file; the next `-c -p` refuses in one line and runs nothing."""
    world.reset()
    (world.root / "secret").write_bytes(RESTORED)
    journal = world.journal_v2()
    journal["createdDirs"] = [str(world.sentinel / "made")]
    journal["ops"] = [
        world.write_op(target=str(world.sentinel / "copy"), folder=str(world.sentinel),
                       temp=str(world.sentinel / ".copy.tmp"), source={"file": str(world.root / "secret")}),
        world.delete_op(target=str(world.sentinel / "victim"), folder=str(world.sentinel),
                        rollback=str(world.sentinel / ".victim.rb")),
    ]
    text = plant(world, journal)
    assert_refused(world, text, ("-c", "-p", "hello"))
    assert not (world.sentinel / "made").exists() and not (world.sentinel / "copy").exists()


def test_an_old_journal_without_a_root_is_held_to_the_session_cwd(world: World) -> None:
    """A v2 journal written before the root was recorded: still confined to the transcript's cwd."""
    world.reset()
    journal = world.journal_v2()
    del journal["root"]
    journal["ops"][1]["target"] = str(world.sentinel / "victim")
    journal["ops"][1]["folder"] = str(world.sentinel)
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))


def test_a_recorded_root_only_narrows(world: World) -> None:
    """A journal that claims `/` as its root gains nothing: the session's cwd still bounds it."""
    world.reset()
    journal = world.journal_v2()
    journal["root"] = "/"
    journal["ops"][1]["target"] = str(world.sentinel / "victim")
    journal["ops"][1]["folder"] = str(world.sentinel)
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))


def hex_path(path: str) -> dict[str, str]:
    """A path in the journal's byte-exact encoding (`{"hex": …}`, used for names that are not UTF-8)."""
    return {"hex": path.encode().hex()}


@pytest.mark.parametrize("version", ["v2", "v1", "committed"])
@pytest.mark.parametrize("field", ["target", "rollback", "trash", "createdDirs"])
def test_a_hex_encoded_path_is_held_to_the_same_rules(world: World, version: str, field: str) -> None:
    world.reset()
    journal = base(world, version)
    if field == "trash":
        journal["trash"] = hex_path(str(world.sentinel))
    elif field == "createdDirs":
        journal["createdDirs"] = [hex_path(str(world.sentinel / "made"))]
    else:
        journal["ops"][1][field] = hex_path(str(world.sentinel / "victim"))
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o1777])
def test_a_journal_cannot_hand_out_setuid_setgid_or_sticky_bits(world: World, mode: int) -> None:
    world.reset()
    journal = world.journal_v2()
    journal["ops"][0]["mode"] = mode
    text = plant(world, journal)
    assert_refused(world, text, ("checkpoints", "list", world.session))
    assert (world.work / "a.txt").stat().st_mode & 0o7000 == 0
