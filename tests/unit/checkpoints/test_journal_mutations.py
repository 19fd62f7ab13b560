"""Every field of a real restore journal, set to every JSON type: each command that reads journals
prints one line or a result, never a traceback, and never writes outside what it may.

The journal is real: a code rewind of a session (files written, edited, created in a new folder,
and a folder removed since, so the restore re-creates it) runs as a subprocess with the
`COMMANDCODE_TEST_STEP_DELAY_MS` hook and is SIGKILLed once it has begun changing files. The data
dir and the project as the kill left them are saved; every case starts from that copy.

Each case changes one field (found by walking the journal at every depth: each key of the top
object, each field of each action record, `source` and its keys, each `createdDirs` item, and a
path field in its `{"hex": …}` form) to one value of `VALUES_BY_TYPE` (null, bools, ints incl.
huge/negative, floats incl. -0.0/1e308, strings incl. empty/huge/control characters, lists,
objects), or deletes one key, or cuts the file (torn, empty, not JSON). Then it runs one of the
commands that read journals (`checkpoints list`, `rewind --dry-run`, `rewind --to 2 --mode code
--yes`, `-c -p hello`, `sessions show`; the command rotates over the cases) in-process through
`commandcode.cli.run` with `COMMANDCODE_DEBUG=1`, so an unhandled exception escapes as itself.

The outcome is one of two, and the test says which it was:

- refused: exit 1, one `error:` line (a `hint:` may follow), the journal byte-identical, and the
  data dir (but `locks/`), the project and the sentinel folder outside exactly as before;
- left (`sessions show` only, which never recovers): exit 0, everything as before;
- finished: exit 0, the journal gone, the project equal to the tree a clean finish of the
  untampered journal gives (bytes, kinds, modes; no stray temp), and the sentinel untouched.

A third thing, a mutation that is still valid but steers the restore somewhere else, would show as
"finished with a different tree" and fail. The whole module runs in well under a minute.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import CATALOG_FILES, cli_env, run_in_process, run_ok
from helpers.json_fields import fields_of

VALUES_BY_TYPE: dict[str, list[Any]] = {
    "null": [None],
    "bool": [True, False],
    "int": [0, -1, 1, 2, 420, 0o4755, 2**31, 2**63, 2**64 + 1, -(2**63) - 1, 10**30, -(10**30)],
    "float": [-0.0, 0.5, 1e308, -1e308, 1.5e-323, 2.0],
    "string": ["", " ", "x" * 20_000, "\x00\x1b[31m\n\r\u2028\u202e", "../../sentinel/victim", "/", ".", "open",
               "committed", "write", "delete", "swap", "in_place", "0" * 64, "zz"],
    "list": [[], [None], [1, "a", {}], [[[]]], ["/"]],
    "object": [{}, {"": None}, {"hex": "2f"}, {"hex": "zz"}, {"hex": 5}, {"object": None}, {"file": "/etc/passwd"},
               {"blob": "/", "sha256": "0" * 64}, {"a": {"b": [1.5, None]}}],
}

COMMANDS = ("list", "dry-run", "rewind", "turn", "show")
LOOKS_ONLY = ("show",)  # reads the session, never recovers: leaves any journal as it is


class World:
    """A data dir holding a session whose code rewind was killed midway, its project `work`, and a
    `sentinel` folder outside both; `reset` puts all three back as the kill left them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.work = root / "work"
        self.sentinel = root / "sentinel"
        self.saved = root / "saved"
        self.work.mkdir()
        self.sentinel.mkdir()
        (self.sentinel / "victim").write_text("precious\n")
        write = 'call write_file {{"file_path":"{}","content":"{}"}}'
        # The sweep is about journals whose sources are our store's objects: compatible backups
        # (raw sha256 blobs, the default) would make every source a `file-history` blob instead.
        # Shell tracking is off: its baseline thread would go on writing objects after an
        # in-process `-p` returns, into the data dir each case puts back.
        self.data.mkdir()
        (self.data / "settings.json").write_text('{"checkpoints": {"compatibleBackups": false, "trackShell": false}}')
        run_ok(["-p", write.format("a.txt", "one")], self.work, self.data)
        for name in ("d/e.txt", *(f"pkg/f{index}.txt" for index in range(8))):
            run_ok(["-c", "-p", write.format(name, "first " * 50)], self.work, self.data)
        run_ok(["-c", "-p", write.format("a.txt", "two")], self.work, self.data)  # the checkpoint rewound to
        run_ok(["-c", "-p", write.format("new/c.txt", "cee")], self.work, self.data)
        run_ok(["-c", "-p", write.format("d/e.txt", "second")], self.work, self.data)
        for index in range(8):
            run_ok(["-c", "-p", write.format(f"pkg/f{index}.txt", "second")], self.work, self.data)
        shutil.rmtree(self.work / "d")  # the restore must create it again (hence --force below)
        (transcript,) = [path for path in (self.data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
        self.session = transcript.stem
        self.journal = self.data / "journals" / f"{self.session}.json"
        self.to = "11"  # the state before the turn that wrote "two" (a.txt back to "one")
        self._kill_a_restore()
        self.pristine = self.journal.read_bytes()
        self.document = json.loads(self.pristine)
        shutil.copytree(self.data, self.saved / "data", symlinks=True)
        shutil.copytree(self.work, self.saved / "work", symlinks=True)
        self.sentinel_state = tree(self.sentinel)
        # The wanted tree: what a clean finish of the untampered journal gives.
        with self.inside():
            code, _, err = run_in_process(["checkpoints", "list", self.session])
        assert code == 0 and "finished a restore" in err, err
        assert not self.journal.exists()
        self.wanted = tree(self.work)
        assert (self.work / "a.txt").read_text() == "one" and (self.work / "d" / "e.txt").exists(), self.wanted
        assert not (self.work / "new" / "c.txt").exists()
        self.reset()

    def _kill_a_restore(self) -> None:
        env = {**cli_env(self.data), "COMMANDCODE_TEST_STEP_DELAY_MS": "40"}
        before = tree(self.work)
        process = subprocess.Popen([sys.executable, "-m", "commandcode", "rewind", self.session, "--to", self.to,
                                    "--mode", "code", "--yes", "--force"], cwd=self.work, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline and process.poll() is None:
                if self.journal.exists() and tree(self.work) != before:
                    break
                time.sleep(0.005)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        journal = json.loads(self.journal.read_text())
        assert journal["version"] == 2 and journal["state"] == "open", journal
        assert journal["createdDirs"] and len(journal["ops"]) >= 3, journal

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        saved_env, saved_cwd = dict(os.environ), os.getcwd()
        os.environ.update(cli_env(self.data, COMMANDCODE_DEBUG="1", COLUMNS="120"))
        os.environ.pop("COMMANDCODE_TEST_STEP_DELAY_MS", None)
        os.chdir(self.work)
        try:
            yield
        finally:
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)

    def reset(self) -> None:
        for name in ("data", "work"):
            shutil.rmtree(self.root / name)
            shutil.copytree(self.saved / name, self.root / name, symlinks=True)
        shutil.rmtree(self.sentinel)
        self.sentinel.mkdir()
        (self.sentinel / "victim").write_text("precious\n")

    def argv(self, command: str) -> list[str]:
        return {"list": ["checkpoints", "list", self.session],
                "dry-run": ["rewind", self.session, "--to", self.to, "--mode", "code", "--dry-run"],
                "rewind": ["rewind", self.session, "--to", self.to, "--mode", "code", "--yes"],
                "turn": ["-c", "-p", "hello"],
                "show": ["sessions", "show", self.session]}[command]


def tree(base: Path) -> dict[str, Any]:
    """Every entry under `base`: its kind and mode, and the bytes of a file or a link's target."""
    out: dict[str, Any] = {}
    for folder, folders, names in os.walk(base):
        rel = os.path.relpath(folder, base)
        if "locks" in Path(rel).parts:
            continue
        for name in folders + names:
            if name in CATALOG_FILES:  # the session catalog: a cache every listing may refresh
                continue
            path = os.path.join(folder, name)
            info = os.lstat(path)
            key = os.path.join(rel, name)
            if os.path.islink(path):
                out[key] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[key] = ("dir", info.st_mode)
            else:
                with open(path, "rb") as handle:
                    out[key] = ("file", info.st_mode, handle.read())
    return out



@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("journal-mutations").resolve()
    return World(root)


# --------------------------------------------------------------------------------------------
# Fields, mutations, the check


def the_fields(document: dict[str, Any]) -> list[tuple]:
    """Every field at every depth; for the many action records, the first three and the last in
    full (with their hex forms), the others by their path fields only (the same code reads them)."""
    ops = document["ops"]
    full = {0, 1, 2, len(ops) - 1}
    out = []
    for field in fields_of(document):
        if not field:  # the whole document: not a field
            continue
        if len(field) >= 2 and field[0] == "ops" and field[1] not in full and (len(field) < 3 or field[2] != "target"):
            continue
        out.append(field)
    return out


def with_hex_paths(document: dict[str, Any]) -> dict[str, Any]:
    """The journal with every path in its byte-exact `{"hex": …}` form (still a valid journal)."""
    out = copy.deepcopy(document)

    def encode(path: Any) -> Any:
        return {"hex": path.encode().hex()} if isinstance(path, str) and path.startswith("/") else path

    for key in ("store", "root", "trash"):
        if key in out:
            out[key] = encode(out[key])
    out["createdDirs"] = [encode(item) for item in out["createdDirs"]]
    for op in out["ops"]:
        for key in ("target", "folder", "temp", "rollback"):
            op[key] = encode(op.get(key))
        if isinstance(op.get("source"), dict):
            op["source"] = {key: encode(value) if key in ("blob", "file") else value for key, value in op["source"].items()}
    return out


_DELETE = object()


def mutate(document: dict[str, Any], field: tuple, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(document)
    target = out
    for key in field[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[field[-1]]
    else:
        target[field[-1]] = value
    return out


def encode(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


def settle(world: World) -> None:
    """Waits for the background removal of a finished restore's trash folder (a thread of the
    Rust core, apply.rs: freeing old bytes after the commit), so that it cannot delete the next
    case's fresh copy of it."""
    deadline = time.monotonic() + 60
    while any(name.endswith(".trash") for name in os.listdir(world.journal.parent)):
        assert time.monotonic() < deadline, os.listdir(world.journal.parent)
        time.sleep(0.002)


def check(world: World, payload: bytes, command: str, what: str, spared: tuple[str, ...] = ()) -> str:
    """Plants `payload` as the journal, runs `command`; returns "refused", "left" or "finished".
    `spared`: targets (relative) whose op the mutation removed, which a finish may leave as they were."""
    world.reset()
    world.journal.write_bytes(payload)
    before_data, before_work = tree(world.data), tree(world.work)
    argv = world.argv(command)
    with world.inside():
        try:
            code, _stdout, stderr = run_in_process(argv)
        except BaseException as error:  # noqa: BLE001 - the point of the test
            raise AssertionError(f"{what}: `commandcode {' '.join(argv)}` raised {type(error).__name__}: {error}") from error
    where = f"{what}: `commandcode {' '.join(argv)}` -> {code}\n{stderr[:2000]}"
    assert code in (0, 1), where
    assert "Traceback" not in stderr and "internal error" not in stderr, where
    assert tree(world.sentinel) == world.sentinel_state, where
    assert sorted(os.listdir(world.root)) == ["data", "saved", "sentinel", "work"], where
    if world.journal.exists():
        assert world.journal.read_bytes() == payload, where
        assert tree(world.work) == before_work, where
        assert tree(world.data) == before_data, where
        if code == 0 and command in LOOKS_ONLY:
            return "left"
        lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
        assert code == 1, where
        assert lines and lines[0].startswith("error: ") and len(lines) <= 2, where
        assert len(lines) == 1 or lines[1].startswith("hint: "), where
        assert world.journal.read_bytes() == payload, where
        assert tree(world.work) == before_work, where
        assert tree(world.data) == before_data, where
        return "refused"
    # A finish of a journal that lost an action record leaves that target as the kill left it, so
    # the rewind that follows the recovery refuses it as changed outside the tracked tools.
    assert code == 0 or (spared and command == "rewind" and "finished a restore" in stderr
                         and "changed outside the tracked tools" in stderr), where
    settle(world)
    after = tree(world.work)
    wanted = {**world.wanted, **{key: value for key, value in before_work.items() if key.lstrip("./") in spared}}
    for key in spared:
        if key not in before_work:
            wanted.pop("./" + key if "./" + key in wanted else key, None)
    assert after == wanted or after == world.wanted, (where, sorted(key for key in after.keys() | world.wanted.keys()
                                                  if after.get(key) != wanted.get(key)))
    return "finished"


# --------------------------------------------------------------------------------------------
# The tests


def spared_by(world: World, field: tuple) -> tuple[str, ...]:
    """The target a deleted action record (or a deleted `ops`) no longer names."""
    ops = world.document["ops"]
    chosen = ops if field == ("ops",) else [ops[field[1]]] if len(field) == 2 and field[0] == "ops" else []
    return tuple(os.path.relpath(op["target"], world.work) for op in chosen)


def cases(world: World) -> Iterator[tuple[str, bytes, tuple[str, ...]]]:
    """(what, journal bytes): every field x every JSON type (the variant rotating over the
    fields), every key deleted, the same on the hex form of the paths, and torn files."""
    for form, document in (("plain", world.document), ("hex", with_hex_paths(world.document))):
        fields = the_fields(document)
        for number, field in enumerate(fields):
            for _kind, variants in VALUES_BY_TYPE.items():
                if form == "hex" and field[-1] != "hex":
                    continue  # in the hex form only the hex strings themselves are new fields
                value = variants[number % len(variants)]
                yield f"{form} {list(field)} = {value!r:.60}", encode(mutate(document, field, value)), ()
            yield f"{form} del {list(field)}", encode(mutate(document, field, _DELETE)), spared_by(world, field)
    for size in (0, 1, len(world.pristine) // 3, len(world.pristine) // 2, len(world.pristine) - 1):
        yield f"torn at {size}", world.pristine[:size], ()
    yield "torn and padded", world.pristine[: len(world.pristine) // 2] + b"\0" * 512, ()
    yield "not json", b"\xff\xfe not json", ()
    yield "a list", b"[]", ()
    yield "a scalar", b"2", ()
    yield "two documents", world.pristine + world.pristine, ()
    yield "hex form, untouched", encode(with_hex_paths(world.document)), ()


def test_the_journal_is_real_and_the_sweep_covers_every_field(world: World) -> None:
    ops = world.document["ops"]
    assert {op["action"] for op in ops} == {"write", "delete"}
    assert {key for op in ops for key in op} >= {"target", "folder", "temp", "rollback", "originalExisted", "content",
                                                  "method", "source", "mode", "before"}
    assert {"version", "state", "store", "createdDirs", "trash", "ops"} <= set(world.document)
    covered = {field[-1] for field in the_fields(world.document)}
    assert covered >= {"version", "state", "store", "trash", "createdDirs", "target", "source", "hex"} - {"hex"}


def test_every_field_of_a_real_journal_takes_every_json_type(world: World) -> None:
    outcomes: dict[str, int] = {"refused": 0, "finished": 0, "left": 0}
    all_cases = list(cases(world))
    for number, (what, payload, spared) in enumerate(all_cases):
        outcomes[check(world, payload, COMMANDS[number % len(COMMANDS)], what, spared)] += 1
    assert outcomes["refused"] > len(all_cases) // 2, outcomes
    assert outcomes["finished"] > 0, outcomes  # e.g. a deleted optional key, the hex form


def test_the_untampered_journal_is_finished_by_every_command(world: World) -> None:
    for command in COMMANDS:
        assert check(world, world.pristine, command, "untampered") == ("left" if command in LOOKS_ONLY else "finished")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_values_in_two_fields_at_once(world: World, data: st.DataObject) -> None:
    document = world.document
    fields = the_fields(document)
    for _ in range(2):
        field = data.draw(st.sampled_from(fields))
        value = data.draw(st.sampled_from([v for vs in VALUES_BY_TYPE.values() for v in vs]) | json_values)
        try:
            document = mutate(document, field, value)
        except (KeyError, IndexError, TypeError):  # the first mutation removed this field's container
            continue
    command = data.draw(st.sampled_from(COMMANDS))
    check(world, encode(document), command, f"random {document!r:.300}")


@pytest.mark.parametrize("damage", ["content null", "source null", "object without a store"])
def test_a_write_naming_no_content_is_refused_before_any_target_is_touched(world: World, damage: str) -> None:
    """Found by the sweep: recovery redid the records before a write with `content: null`, then
    stopped at it, so a journal of the wrong shape was refused with the project half changed."""
    document = copy.deepcopy(world.document)
    writes = [op for op in document["ops"] if op["action"] == "write" and op["source"] and "object" in op["source"]]
    last = writes[-1]
    assert last is not document["ops"][0]
    if damage == "content null":
        last["content"] = None
    elif damage == "source null":
        last["source"] = None
    else:
        document["store"] = None
    assert check(world, encode(document), "list", damage) == "refused"
