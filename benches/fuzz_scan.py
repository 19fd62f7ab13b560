#!/usr/bin/env python3
"""Fuzzing the transcript scanner and the restore planner, for a fixed time budget.

    .venv/bin/python benches/fuzz_scan.py [--target scan|plan|both] [--seconds 300] [--seed 1]
                                          [--engine auto|atheris|random] [--save] [--json OUT]

**scan**: mutated real transcripts (seeded from the real CLI's samples and the bad-input corpus)
go through `_native.scan_session`, then `Session.context()`, the tree rows, labels, the path and
the first message. Invariants: the process never crashes; nothing raises but `OSError` or a
`CommandcodeError` (and never `SessionChangedError`: the file does not change); every non-blank
line is accounted for (entries + skipped lines + the header); the leaf is the last entry. When
`_native.scan_session` takes an index sidecar, each input is also scanned through one, then grown,
cut or rewritten in place and scanned again: every indexed scan must equal a cold scan.

**plan**: mutated checkpoints files (paths inside and outside the project, through symlinks, with
NUL bytes; digests real, missing, malformed; odd modes and numbers) are planned with
`rewind(..., dry_run=True)`, and every tenth one restored for real with `--force`. Invariants:
nothing raises but `OSError` or a `CommandcodeError`; nothing outside the project changes (a
canary folder beside it, holding the files the paths aim at, is compared after every run).

Engines: `atheris` (coverage-guided libFuzzer with a domain-aware custom mutator; Python-level
coverage only, the Rust core is not instrumented) when it is installed, else `random` (the same
mutator driven by a seeded PRNG). Each runs in a child process that writes the input to a file
before executing it, so an input that kills the process is kept. Failures are grouped by
signature; `--save` writes the first input of each new signature to
`tests/fixtures/fuzz_regressions/` (replayed by `tests/e2e/test_hostile.py`). Prints a JSON report:
executions per target, failures per signature, the budget used.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
REGRESSIONS = ROOT / "tests" / "fixtures" / "fuzz_regressions"
SAMPLES = Path(os.environ.get("COMMANDCODE_SAMPLES_HOME", "/work/shared/reference/samples/home")) / ".commandcode"
FIXTURES = ROOT / "tests" / "fixtures"
RUST_WHITESPACE = frozenset(b" \t\n\x0c\r")
SID = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
MAX_INPUT = 1 << 20


# --------------------------------------------------------------------------------------------
# Seeds and the mutator


def scan_seeds() -> list[bytes]:
    seeds = []
    for folder in (SAMPLES / "projects", FIXTURES):
        if folder.is_dir():
            for path in sorted(folder.rglob("*.jsonl")):
                if ".checkpoints." not in path.name and path.stat().st_size <= MAX_INPUT:
                    seeds.append(path.read_bytes())
    return seeds or [b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n']


def plan_seeds() -> list[bytes]:
    seeds = []
    for folder in (SAMPLES / "projects", FIXTURES / "hostile"):
        if folder.is_dir():
            seeds += [path.read_bytes() for path in sorted(folder.glob("*.checkpoints.jsonl"))]
    return seeds


TOKENS = [b"\x00" * 8, b"\\ud800", b"\\udc00", "\u2028".encode(), "\u2029".encode(), b"\r\n", b"\xef\xbb\xbf",
          b"\xff\xfe", b"\xc0\xaf", b"\xe2\x82", b"[" * 64, b"{" * 64, b"1e999999", b"-0", b"9" * 400, b"\\u0000",
          b'"parentId":null', b'"type":"session"', b'"version":4', b'"version":3', b'"id":"aaaa0001"',
          b'{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n',
          b'{"type":"session","version":4,"id":"x","timestamp":"t","cwd":"/"}\n',
          b'{"type":"compaction","id":"cccc0001","parentId":null,"timestamp":"t","summary":"s","firstKeptEntryId":"","tokensBefore":1}\n',
          b'{"type":"label","id":"dddd0001","parentId":null,"timestamp":"t","targetId":"aaaa0001"}\n',
          b'"../../../etc/passwd"', b'"hash":null', b'"algo":"sha256"', b'"mode":-1', b'"mode":4294967296',
          b'"afterHash":"zz"', b'"skipped":"symlink"', b'"turnNumber":0']
ENTRY_TYPES = ["message", "model_change", "effort_change", "compaction", "branch_summary", "custom", "custom_message",
               "label", "session_info", "session", "mesage", 7, None]


def mutate(data: bytes, rng: random.Random, seeds: list[bytes]) -> bytes:
    """One to four domain-aware mutations of `data`."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(14)
        size = len(out)
        if choice == 0 and size:  # flip a byte
            out[rng.randrange(size)] ^= 1 << rng.randrange(8)
        elif choice == 1:  # insert a token
            position = rng.randint(0, size)
            out[position:position] = rng.choice(TOKENS)
        elif choice == 2 and size:  # delete a range
            start = rng.randrange(size)
            del out[start:start + rng.randint(1, 64)]
        elif choice == 3 and size:  # truncate (a torn write)
            del out[rng.randrange(size):]
        elif choice in (4, 5, 6, 7):  # line operations
            lines = bytes(out).split(b"\n")
            index = rng.randrange(len(lines))
            if choice == 4:
                lines.insert(rng.randrange(len(lines) + 1), lines[index])
            elif choice == 5 and len(lines) > 1:
                del lines[index]
            elif choice == 6 and len(lines) > 1:
                other = rng.randrange(len(lines))
                lines[index], lines[other] = lines[other], lines[index]
            elif choice == 7 and index + 1 < len(lines):  # glue two lines
                lines[index:index + 2] = [lines[index][: rng.randint(0, len(lines[index]))] + lines[index + 1]]
            out = bytearray(b"\n".join(lines))
        elif choice == 8:  # splice a line from another seed
            donor = rng.choice(seeds).split(b"\n")
            lines = bytes(out).split(b"\n")
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(donor))
            out = bytearray(b"\n".join(lines))
        elif choice in (9, 10, 11):  # JSON-aware field mutation
            lines = bytes(out).split(b"\n")
            index = rng.randrange(len(lines))
            try:
                value = json.loads(lines[index])
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                _mutate_object(value, rng, lines)
                text = json.dumps(value, ensure_ascii=rng.random() < 0.5, separators=(",", ":"))
                lines[index] = text.encode("utf-8", "surrogatepass")  # a lone surrogate: invalid UTF-8, kept
                out = bytearray(b"\n".join(lines))
        elif choice == 12:  # random bytes
            position = rng.randint(0, size)
            out[position:position] = rng.randbytes(rng.randint(1, 16))
        elif choice == 13:  # nesting
            depth = rng.choice([10, 200, 5000, 100_000])
            position = rng.randint(0, size)
            out[position:position] = b"[" * depth + b"]" * depth
    return bytes(out[:MAX_INPUT])


def _ids(lines: list[bytes]) -> list[Any]:
    found = []
    for line in lines[:200]:
        with contextlib.suppress(ValueError, RecursionError, AttributeError):
            value = json.loads(line)
            if isinstance(value, dict) and "id" in value:
                found.append(value["id"])
    return found or ["aaaa0001"]


def _mutate_object(value: dict[str, Any], rng: random.Random, lines: list[bytes]) -> None:
    key = rng.choice(["id", "parentId", "type", "timestamp", "version", "cwd", "files", "message", "targetId",
                      "firstKeptEntryId", "path", "hash", "mode", "turnNumber", "label", "name"])
    ids = _ids(lines)
    options: list[Any] = [None, 7, -1, 2**70, 1.5, "", "x" * rng.randint(0, 300), True, [], {}, "\u2028", "\ud800",
                          rng.choice(ids), value.get("id"), "../../x", "/etc/passwd"]
    if key == "type":
        options += ENTRY_TYPES
    if key == "files" and isinstance(value.get("files"), list) and value["files"]:
        item = rng.choice(value["files"])
        if isinstance(item, dict):
            _mutate_object(item, rng, lines)
            return
    value[key] = rng.choice(options)


# --------------------------------------------------------------------------------------------
# The targets


class Failure(Exception):
    """An invariant was broken; the message is its signature's first line."""


def _nonblank_lines(data: bytes) -> int:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    return sum(1 for piece in pieces if any(byte not in RUST_WHITESPACE for byte in piece))


def run_scan(data: bytes, work: Path) -> None:
    """Scans `data` as a transcript and rebuilds everything a reader asks for."""
    from commandcode import _native
    from commandcode.errors import CommandcodeError, SessionChangedError
    from commandcode.sessions.files import SessionFiles
    from commandcode.sessions.reader import Session

    transcript = work / f"{SID}.jsonl"
    transcript.write_bytes(data)
    try:
        index = _native.scan_session(str(transcript))
        session = Session(SessionFiles.for_transcript(transcript), index)
        rows = list(session.tree_rows())
        path = session.path_ids()
        context = session.context()
        session.first_message()
        dict(index.labels())
        session.message_id_map()
        _ = (session.name, session.model, session.effort, session.message_count, session.header, session.modified)
    except SessionChangedError as error:
        raise Failure(f"SessionChangedError on an unchanged file: {str(error).split(':')[0][-40:]}") from error
    except (CommandcodeError, OSError):
        return
    except Exception as error:
        raise Failure(f"{type(error).__name__} escapes the reader: {_first_line(error)}") from error
    accounted = len(rows) + len(index.skipped) + (1 if index.header is not None else 0)
    if accounted != _nonblank_lines(data):
        raise Failure(f"line accounting: {_nonblank_lines(data)} non-blank lines, {accounted} accounted for")
    if rows and session.leaf_id != rows[-1].id:
        raise Failure("the leaf is not the last entry in file order")
    known = {row.id for row in rows}
    if not set(path) <= known or not set(context.entry_ids) <= set(path) | known:
        raise Failure("the path or context names an entry that is not in the file")
    if _index_supported():
        _check_index(transcript, data, work)


_INDEX: list[bool] = []


def _index_supported() -> bool:
    if not _INDEX:
        from commandcode import _native

        _INDEX.append("index_path" in (_native.scan_session.__text_signature__ or ""))
    return _INDEX[0]


def _view(index: Any) -> tuple[Any, ...]:
    header = index.header
    return ([tuple(row) for row in index.tree_rows()], [(line["line"], line["offset"], line["reason"]) for line in index.skipped],
            None if header is None else (header["id"], header["cwd"], header["line"]), index.leaf_id, index.format,
            index.ends_with_newline, index.line_count)


def _check_index(transcript: Path, data: bytes, work: Path) -> None:
    """Differential check of the index sidecar: a scan through it, before and after the file
    grows, shrinks or changes in place, must give exactly what a cold scan gives."""
    from commandcode import _native
    from commandcode.errors import CommandcodeError

    sidecar = work / "index.idx"
    sidecar.unlink(missing_ok=True)
    rng = random.Random(hashlib.sha1(data).digest())
    later = [data + rng.choice(TOKENS) + b"\n", data + data[: rng.randint(0, len(data))],
             data[: rng.randint(0, len(data))], data[::-1][: len(data)]][rng.randrange(4)]
    for step, content in enumerate((data, data, later, later)):
        if step in (0, 2):
            transcript.write_bytes(content)
        try:
            warm = _view(_native.scan_session(str(transcript), str(sidecar)))
        except (CommandcodeError, OSError) as error:
            warm = ("error", type(error).__name__)
        except Exception as error:
            raise Failure(f"{type(error).__name__} escapes an indexed scan: {_first_line(error)}") from error
        try:
            cold = _view(_native.scan_session(str(transcript)))
        except (CommandcodeError, OSError) as error:
            cold = ("error", type(error).__name__)
        if warm != cold:
            raise Failure(f"an indexed scan differs from a cold scan (step {step})")


class PlanSandbox:
    """A session with a transcript, a project, stored objects and a canary folder beside it."""

    def __init__(self, work: Path) -> None:
        self.root = work / "plan"
        shutil.rmtree(self.root, ignore_errors=True)
        self.data = self.root / "home" / ".commandcode"
        self.project = self.root / "project"
        self.canary = self.root / "canary"
        for folder in (self.data, self.project, self.canary):
            folder.mkdir(parents=True)
        (self.canary / "victim.txt").write_text("canary")
        (self.project / "link").symlink_to(self.canary, target_is_directory=True)
        (self.project / "filelink.txt").symlink_to(self.canary / "victim.txt")
        os.environ["COMMANDCODE_HOME"] = str(self.data)
        os.environ["COMMANDCODE_INDEX"] = "off"
        from commandcode.checkpoints import store as backups
        from commandcode.config.paths import project_dir
        from commandcode.sessions.files import SessionFiles

        self.store = backups.BackupStore()
        self.digests = [self.store.put_bytes(f"content {number}\n".encode()) for number in range(3)]
        self.sha = hashlib.sha256(b"raw blob\n").hexdigest()
        self.files = SessionFiles(project_dir(self.project), SID)
        self.files.file_history.mkdir(parents=True)
        (self.files.file_history / self.sha).write_bytes(b"raw blob\n")
        self.files.directory.mkdir(parents=True)
        self.files.transcript.write_bytes(
            (FIXTURES / "hostile" / "session.jsonl").read_bytes().replace(b"{{PROJECT}}", str(self.project).encode()))
        self.canary_state = self._canary()

    def _canary(self) -> dict[str, bytes]:
        out = {}
        for folder, _, names in os.walk(self.canary):
            for name in names:
                out[os.path.join(folder, name)] = Path(folder, name).read_bytes()
        return out

    def substitute(self, data: bytes) -> bytes:
        replacements = {b"{{PROJECT}}": str(self.project).encode(), b"{{OUTSIDE}}": str(self.canary).encode(),
                        b"{{OBJECT}}": self.digests[0].encode(), b"{{SHA}}": self.sha.encode(),
                        b"{{TRANSCRIPT}}": str(self.files.transcript).encode()}
        for key, value in replacements.items():
            data = data.replace(key, value)
        return data

    def reset_project(self) -> None:
        for entry in list(self.project.iterdir()):
            if entry.name not in ("link", "filelink.txt"):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        for number, _digest in enumerate(self.digests):
            (self.project / f"f{number}.txt").write_text(f"now {number}\n")


_SANDBOX: PlanSandbox | None = None


def run_plan(data: bytes, work: Path, *, real: bool) -> None:
    """Plans (and, when `real`, carries out) a code rewind to each checkpoint of `data`."""
    global _SANDBOX
    from commandcode.checkpoints.modes import RewindMode
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.rewind import RewindOptions, rewind
    from commandcode.checkpoints.rewind_numbers import checkpoint_numbers
    from commandcode.errors import CommandcodeError

    if _SANDBOX is None or _SANDBOX.root.parent != work:
        _SANDBOX = PlanSandbox(work)
    sandbox = _SANDBOX
    sandbox.reset_project()
    sandbox.files.checkpoints.write_bytes(sandbox.substitute(data))
    try:
        records = read_checkpoints(sandbox.files.checkpoints)
    except Exception as error:
        raise Failure(f"{type(error).__name__} escapes read_checkpoints: {_first_line(error)}") from error
    numbers = checkpoint_numbers(records)[:3]
    for number in numbers:
        for dry_run in (True, False) if real else (True,):
            try:
                rewind(sandbox.files, sandbox.project, number, RewindMode.CODE, RewindOptions(dry_run=dry_run, force=True))
            except (CommandcodeError, OSError):
                pass
            except Exception as error:
                raise Failure(f"{type(error).__name__} escapes rewind(dry_run={dry_run}): {_first_line(error)}") from error
            if sandbox._canary() != sandbox.canary_state:
                raise Failure(f"a rewind (dry_run={dry_run}) changed a file outside the project")


def _first_line(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    # Keep signatures stable: drop digests, paths and numbers.
    import re

    text = re.sub(r'"[^"]*"|\'[^\']*\'', "<s>", text)
    text = re.sub(r"/[^ ;:'\"]*", "<path>", text)
    text = re.sub(r"[0-9a-f]{12,}", "<hex>", text)
    return re.sub(r"\d+", "N", text)[:120]


def execute(target: str, data: bytes, work: Path, counter: int) -> None:
    if target == "scan":
        run_scan(data, work)
    else:
        run_plan(data, work, real=counter % 10 == 0)


# --------------------------------------------------------------------------------------------
# The child: runs inputs until its deadline, writing each one first


def child(target: str, seed: int, seconds: float, work: Path, engine: str) -> None:
    sys.setrecursionlimit(10_000)
    seeds = scan_seeds() if target == "scan" else plan_seeds()
    current = work / "current-input"
    results = {"execs": 0, "failures": {}}
    deadline = time.monotonic() + seconds

    def one(data: bytes) -> None:
        current.write_bytes(data)
        try:
            execute(target, data, work, results["execs"])
        except Failure as failure:
            signature = str(failure)
            entry = results["failures"].setdefault(signature, {"count": 0, "example": None, "size": None})
            entry["count"] += 1
            if entry["example"] is None or len(data) < entry["size"]:  # keep the smallest example
                keep = work / f"failure-{hashlib.sha1(signature.encode()).hexdigest()[:10]}"
                keep.write_bytes(data)
                entry["example"], entry["size"] = str(keep), len(data)
        results["execs"] += 1
        if time.monotonic() > deadline:
            raise TimeoutError

    if engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=["commandcode"]):  # Python-level coverage feedback
            import commandcode.checkpoints.manager
            import commandcode.checkpoints.rewind
            import commandcode.sessions.reader  # noqa: F401
        rng = random.Random(seed)

        def test_one_input(data: bytes) -> None:
            with contextlib.suppress(TimeoutError):
                one(data)
                return
            _dump(work, results)
            os._exit(0)

        def custom_mutator(data: bytes, max_size: int, mutation_seed: int) -> bytes:
            local = random.Random(mutation_seed ^ rng.getrandbits(32))
            base = data if data and local.random() < 0.8 else local.choice(seeds)
            return mutate(base, local, seeds)[:max_size]

        corpus = work / "corpus"
        corpus.mkdir(exist_ok=True)
        for number, data in enumerate(seeds):
            (corpus / f"seed{number}").write_bytes(data)
        atheris.Setup([sys.argv[0], str(corpus), f"-seed={seed}", f"-max_len={MAX_INPUT}", "-rss_limit_mb=4096",
                       "-timeout=60"], test_one_input, custom_mutator=custom_mutator)
        atheris.Fuzz()
        return
    rng = random.Random(seed)
    try:
        for data in seeds:
            one(data)
        while True:
            one(mutate(rng.choice(seeds), rng, seeds))
    except TimeoutError:
        pass
    _dump(work, results)


def _dump(work: Path, results: dict[str, Any]) -> None:
    (work / "results.json").write_text(json.dumps(results))


# --------------------------------------------------------------------------------------------
# The supervisor


def supervise(target: str, seconds: float, seed: int, engine: str, save: bool) -> dict[str, Any]:
    """Runs children until the budget is spent; an input that kills a child is a crash."""
    work = Path(tempfile.mkdtemp(prefix=f"cc-fuzz-{target}-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    deadline = time.monotonic() + seconds
    execs = 0
    failures: dict[str, dict[str, Any]] = {}
    round_number = 0
    try:
        while (left := deadline - time.monotonic()) > 1:
            (work / "results.json").unlink(missing_ok=True)
            process = subprocess.run([sys.executable, __file__, "--child", target, "--seed", str(seed + round_number),
                                      "--seconds", str(left), "--engine", engine, "--work", str(work)],
                                     capture_output=True, timeout=left + 120)
            round_number += 1
            if (work / "results.json").exists():
                results = json.loads((work / "results.json").read_text())
                execs += results["execs"]
                for signature, entry in results["failures"].items():
                    merged = failures.setdefault(signature, {"count": 0, "example": entry["example"]})
                    merged["count"] += entry["count"]
            else:
                last = (process.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
                signature = f"the process died (exit {process.returncode}): {_first_line(Exception(last))}"
                keep = work / f"crash-{round_number}"
                with contextlib.suppress(FileNotFoundError):
                    shutil.copyfile(work / "current-input", keep)
                merged = failures.setdefault(signature, {"count": 0, "example": str(keep)})
                merged["count"] += 1
                execs += 1
        saved = []
        if save:
            REGRESSIONS.mkdir(parents=True, exist_ok=True)
            for signature, entry in failures.items():
                example = Path(entry["example"]) if entry["example"] else None
                if example is None or not example.exists():
                    continue
                data = example.read_bytes()
                name = f"{target}-{hashlib.sha1(data).hexdigest()[:12]}.{'jsonl' if target == 'scan' else 'json'}"
                (REGRESSIONS / name).write_bytes(data)
                (REGRESSIONS / f"{name}.txt").write_text(signature + "\n")
                saved.append(name)
        return {"target": target, "engine": engine, "budget_seconds": seconds, "execs": execs,
                "execs_per_second": round(execs / max(seconds, 1e-9), 1), "children": round_number,
                "failures": {signature: entry["count"] for signature, entry in failures.items()}, "saved": saved}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def replay(path: Path, work: Path) -> str | None:
    """Replays one kept input (`scan-*.jsonl` or `plan-*.json`); the failure, or None."""
    target = "scan" if path.name.startswith("scan-") else "plan"
    work.mkdir(parents=True, exist_ok=True)
    with mock.patch.dict(os.environ):  # the runs point COMMANDCODE_* at their sandboxes; undone here
        try:
            if target == "scan":
                run_scan(path.read_bytes(), work)
            else:
                run_plan(path.read_bytes(), work, real=True)
        except Failure as failure:
            return str(failure)
        except Exception:
            return traceback.format_exc()
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=("scan", "plan", "both"), default="both")
    parser.add_argument("--seconds", type=float, default=300.0, help="budget per target (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    parser.add_argument("--save", action="store_true", help="keep one input per new failure in tests/fixtures/fuzz_regressions")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", choices=("scan", "plan"), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    if options.child:
        child(options.child, options.seed, options.seconds, options.work, options.engine)
        return 0
    engine = options.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "random"
    targets = ("scan", "plan") if options.target == "both" else (options.target,)
    started = time.monotonic()
    reports = [supervise(target, options.seconds, options.seed, engine, options.save) for target in targets]
    result = {"seed": options.seed, "elapsed_seconds": round(time.monotonic() - started, 1), "targets": reports}
    text = json.dumps(result, indent=2)
    print(text)
    if options.json:
        options.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
