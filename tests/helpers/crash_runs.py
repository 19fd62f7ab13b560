"""One point of the crash harness (`helpers.crash_harness`): the run an operation makes next, the
process started and killed (after a random delay, at a restore journal's appearance, just before
it (while the restore verifies and stores its redo point's objects), in the restore's settle
after its commit returned (before the flush, before the journal's removal, or after it; and in a
`--mode both` rewind between its commit and its final checkpoints write), or at a
Python-level file-system call through `tests/support/killable_cli.py`), what it reported, and the
judging of a run that was not killed; `calibrate` measures an operation's duration first."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from helpers.crash_workspace import (
    BACKUP_FILES,
    COMPACT_TEXT,
    PLUGINS,
    SHELL_FILES,
    OperationStats,
    Workspace,
    data_dir_env,
)
from helpers.locations import KILLABLE

# --------------------------------------------------------------------------------------------
# Running one point

SETTLE_PAUSE_MS = 150
"""The settle kills' `COMMANDCODE_TEST_SETTLE_PAUSE_MS`: the settle waits this long before its
flush, before the companion copy's removal, between it and the journal's removal, and after that,
where the kills aim (the last pause keeps the process, whose exit waits for the settle, there to
be killed)."""
SETTLE_POINTS = ("settle_before_flush", "settle_before_removal", "settle_after_removal", "settle_before_final_write")
"""`settle_before_final_write`: a `--mode both` rewind (or the redo of one) killed after its commit
returned, while its settle is held with the companion's copy removed and the journal still open:
the final write of the checkpoints file waits for the settle (`checkpoints/settling.py`); had it
not, the file would no longer hold the bytes the journal names, and with no copy to take them
from, the recovery could not finish."""
BOTH_POINT = "settle_before_final_write"


@dataclass
class Run:
    args: list[str]
    marker: str
    name: str | None = None


def _next_run(workspace: Workspace, rng: random.Random, mode: str | None = None) -> Run:
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
                   f"mkdir -p {folder} && echo {marker} > {folder}/made-{marker}.txt"
                   # a symlink and an empty folder too: their records and restore join the lane
                   f" && ln -s made-{marker}.txt {folder}/link-{marker} && mkdir -p hollow-{marker}/inner")
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
    state = workspace.current_rewind_state()
    if mode == BOTH_POINT:  # files and leaf back to checkpoint 1, or the redo of that
        if state == 1 and workspace.can_redo():
            return Run(["rewind", workspace.session_id or "", "--redo", "--yes", "--json"], marker)
        return Run(["rewind", workspace.session_id or "", "--to", "1", "--mode", "both", "--yes", "--json"], marker)
    if rng.random() < 0.35 and workspace.can_redo():
        return Run(["rewind", workspace.session_id or "", "--redo", "--yes", "--json"], marker)
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
    plugin = PLUGINS.get(workspace.operation)
    if plugin is not None and hasattr(plugin, "command"):  # a plugin running its own driver (crash_interrupt)
        command = plugin.command(workspace, killable)
        extra_env = {**plugin.env(workspace), **extra_env}
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
    appeared, started = None, time.monotonic()
    while process.poll() is None:
        present = journal.exists()
        if present and appeared is None:
            appeared = time.monotonic()
            workspace.journal_at = appeared - started
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


def run_point(workspace: Workspace, rng: random.Random, stats: OperationStats, violations: list[str], label: str,
              mode: str | None = None) -> None:
    """One run, killed at a random moment (or at a random kill point; `mode` picks the kind, such
    as one of `SETTLE_POINTS`), then every check."""
    forced = mode
    # Native writes (object store, restore) are reached by timed kills only: weight those up there.
    # A restore is short next to the process around it, so most timed rewind kills are timed from
    # the moment its journal appears ("journal": within the journal's calibrated lifetime).
    timed = 0.6 if workspace.operation in ("rewind", "backup") else 0.34
    mode = "timer" if rng.random() < timed else rng.choice(("call", "call-torn"))
    if workspace.operation == "rewind" and mode == "timer" and rng.random() < 0.25:
        mode = rng.choice(SETTLE_POINTS)  # the settle, after the commit returned
    elif workspace.operation == "rewind" and mode == "timer" and rng.random() < 0.6:
        mode = "journal"
    elif workspace.operation == "rewind" and mode == "timer" and workspace.journal_at and rng.random() < 0.5:
        # just before the journal: the restore's verification and its redo point's objects
        # (stored from the verified bytes, each durable before the records that name them)
        mode = "keep"
    mode = forced or mode
    run = _next_run(workspace, rng, mode)
    extra: dict[str, str] = {}
    if mode in SETTLE_POINTS:
        extra["COMMANDCODE_TEST_SETTLE_PAUSE_MS"] = str(SETTLE_PAUSE_MS)
    if mode != "timer":
        point = rng.randint(1, max(1, workspace.calls))
        extra["COMMANDCODE_TEST_KILL_AT"] = f"{point}:torn" if mode == "call-torn" else str(point)
    process = _start(workspace, run, extra, killable=mode not in ("timer", "journal", "keep", *SETTLE_POINTS))
    # Most of a run's first third is interpreter start-up, where nothing is written: aim most timed
    # kills past it.
    delay = rng.uniform(workspace.duration * (0.3 if rng.random() < 0.7 else 0.0), workspace.duration * 0.95)
    if mode == "keep":
        delay = rng.uniform(workspace.journal_at * 0.75, workspace.journal_at)
    try:
        if mode in ("timer", "keep"):
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
        elif mode in SETTLE_POINTS:
            _kill_in_settle(workspace, process, mode, rng)
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
    if mode in SETTLE_POINTS:
        _check_settled(workspace, violations, label)
    if mode == BOTH_POINT:
        _check_conversation(workspace, violations, label)
    if killed and len(violations) == before:
        stats.survived += 1
    for key, value in workspace.notes.items():
        stats.notes[key] = stats.notes.get(key, 0) + value
    workspace.notes.clear()


def _journal(workspace: Workspace) -> Path:
    return workspace.data / "journals" / f"{workspace.session_id}.json"


def _committed(workspace: Workspace) -> bool:
    """Whether the running rewind's commit returned: the checkpoints file (its companion, the
    last step the restore applies) is its copy beside the journal, exchanged into place."""
    copy = _journal(workspace).with_name(f"{workspace.session_id}.json.companion")
    try:
        inode = copy.stat().st_ino
        return any(path.stat().st_ino == inode
                   for path in (workspace.data / "projects").glob(f"*/{workspace.session_id}.checkpoints.jsonl"))
    except FileNotFoundError:
        return False


def _kill_in_settle(workspace: Workspace, process: subprocess.Popen[bytes], point: str, rng: random.Random) -> None:
    """Kills a rewind at `point` of its settle (a rewind with nothing to restore has none: it ends)."""
    pause = SETTLE_PAUSE_MS / 1000
    while process.poll() is None and not _committed(workspace):
        time.sleep(0.0005)
    if process.poll() is not None:
        return
    if point == "settle_before_flush":
        time.sleep(rng.uniform(0.0, pause * 0.6))
    elif point == BOTH_POINT:  # the copy removed, the journal not yet
        copy = _journal(workspace).with_name(f"{workspace.session_id}.json.companion")
        while process.poll() is None and copy.exists():
            time.sleep(0.0005)
        time.sleep(rng.uniform(0.0, pause * 0.6))
    elif point == "settle_before_removal":
        time.sleep(pause + rng.uniform(pause * 0.3, pause * 0.8))
    else:
        while process.poll() is None and _journal(workspace).exists():
            time.sleep(0.0005)
        time.sleep(rng.uniform(0.0, pause * 0.6))
    _kill_group(process)


def _check_settled(workspace: Workspace, violations: list[str], label: str) -> None:
    """After a kill in a settle and the recovery `workspace.check` ran: nothing of the restore is
    left (no journal, no companion copy, no journal temp; a trash folder only until the next
    restore sweeps it)."""
    journal = _journal(workspace)
    left = [path.name for path in (journal, journal.with_name(journal.name + ".companion")) if path.exists()]
    left += [name for name in os.listdir(journal.parent) if name.endswith(".cctmp")] if journal.parent.is_dir() else []
    if left:
        violations.append(f"{label}: a restore killed in its settle left {left} after recovery")


def _check_conversation(workspace: Workspace, violations: list[str], label: str) -> None:
    """After a kill of a `--mode both` rewind or its redo and the next open's recovery (the journal,
    then the leaf's move): no redo point still says its move is pending, and the transcript holds
    the leaf marker of every one that moved the leaf (files, checkpoints file and conversation agree)."""
    from commandcode.checkpoints.records import read_checkpoints
    from commandcode.checkpoints.rewind import recover_pending
    from commandcode.config.paths import project_dir
    from commandcode.sessions.files import SessionFiles

    with data_dir_env(workspace.data, workspace.index):
        files = SessionFiles(project_dir(workspace.project), workspace.session_id or "")
        try:
            recover_pending(files, workspace.project)
        except Exception as error:
            violations.append(f"{label}: the conversation's recovery failed: {type(error).__name__}: {error}")
            return
        points = [record for record in read_checkpoints(files.checkpoints) if record.redo is not None]
        markers = set()
        for line in files.transcript.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                data = json.loads(line).get("data")
                if isinstance(data, dict) and isinstance(data.get("redoPointId"), str):
                    markers.add(data["redoPointId"])
    for point in points:
        facts = point.redo or {}
        if facts.get("conversation") is not None:
            violations.append(f"{label}: redo point {point.id} still says its conversation move is pending")
        elif facts.get("moveLeaf") and point.id not in markers:
            violations.append(f"{label}: redo point {point.id} moved the leaf but the transcript has no marker of it")
