"""The branching operations of the crash harness (`helpers.crash_harness`): fork, clone, goto, label.

Each has its own workspace seeded with a two-turn session and a checkpoints file, and is run as
`commandcode sessions fork|clone|goto|label ...`, SIGKILLed at random moments like the others.
After every point, on top of the harness's checks (every transcript opens, whole header, ...):

- fork, clone (the seed has a sub-agent run beside it): after the recovery the next fork, sweep or `doctor --gc` runs, no hidden transcript
  temp of a killed run is left (`sessions/stale_temps.py`); the source's transcript, meta and
  checkpoints are byte-identical to the seed; every
  other transcript is a complete copy: its meta is an object naming the source as
  `parentSessionId`, a fork holds every source entry (plus, for a named source, the `session_info` naming it `<name> (fork)`; the same context) and the source's
  checkpoints and sub-agent runs byte for byte, a clone the same context and no checkpoints; every copy a run
  reported (`--json` read whole) exists;
- goto: every leaf a run reported is in the transcript (the jump reached disk), and the
  transcript opens with a whole last line (the harness's checks);
- label: the target's label is the last reported one or one of a run started since.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

BRANCHING_OPERATIONS = ("fork", "clone", "goto", "label")


def _files(workspace: Any) -> Any:
    from commandcode.config.paths import project_dir
    from commandcode.sessions.files import SessionFiles

    return SessionFiles(project_dir(workspace.project), workspace.session_id)


def seed(workspace: Any) -> None:
    from commandcode.sessions.reader import open_session
    from commandcode.sessions.writer import SessionWriter

    workspace.session_id = workspace._seed_session()
    files = _files(workspace)
    with SessionWriter(files, str(workspace.project)) as writer:
        writer.append_message({"role": "user", "content": [{"type": "text", "text": "second turn " * 200}]})
        writer.append_message({"role": "assistant", "content": [{"type": "text", "text": "second answer"}]})
        writer.commit()
    files.checkpoints.write_text('{"id":"c1","messageId":"c1","turnNumber":1,"createdAt":"2026-01-01T00:00:00.000Z",'
                                 '"messageCount":0,"files":[]}')
    files.meta.write_text('{\n  "title": "seeded"\n}')
    from helpers.subagents import write_run

    write_run(files, str(workspace.project), tool_use_id="call_seed")  # a sub-agent run every fork carries
    path = open_session(files.transcript).path_ids()
    state = workspace.branching
    state["targets"] = (path[0], path[1])
    state["source"] = {suffix: files.sidecar_path(suffix) for suffix in (".jsonl", ".meta.json", ".checkpoints.jsonl")}
    state["source_bytes"] = {suffix: Path(path_).read_bytes() for suffix, path_ in state["source"].items()}
    state["runs"] = _runs(files.folder, files.session_id)
    state["reported"] = set()
    state["label"] = None
    state["pending_labels"] = set()
    state["jumps"] = set(path)


def next_run(workspace: Any, rng: random.Random, marker: str) -> list[str]:
    sid = workspace.session_id
    state = workspace.branching
    if workspace.operation in ("fork", "clone"):
        return ["sessions", workspace.operation, sid, "--json"]
    first, second = state["targets"]
    if workspace.operation == "goto":
        from commandcode.sessions.reader import open_session

        leaf = open_session(state["source"][".jsonl"]).leaf_id
        target = first if leaf == second else rng.choice((first, second))
        summary = rng.choice(([], ["--no-summary"], ["--summary", f"summary {marker}"]))
        return ["sessions", "goto", sid, target, *summary, "--json"]
    text = [f"label {marker}"] if rng.random() < 0.7 else []
    return ["sessions", "label", sid, first, *text]


def started(workspace: Any, args: list[str]) -> None:
    if workspace.operation == "label":
        workspace.branching["pending_labels"].add(args[4] if len(args) > 4 else None)


def record_report(workspace: Any, args: list[str], stdout: str) -> bool:
    state = workspace.branching
    if workspace.operation == "label":
        line = stdout.strip()
        if not line.endswith(("nothing written", f"entry {state['targets'][0]}")):
            return False
        state["label"] = args[4] if len(args) > 4 else None
        state["pending_labels"] = set()
        return True
    try:
        value = json.loads(stdout)
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    if workspace.operation == "goto":
        if "leaf_id" not in value:
            return False
        state["reported"].add(value["leaf_id"])
        return True
    if "id" not in value:
        return False
    state["reported"].add(value["id"])
    return True


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.sessions.reader import open_session

    state = workspace.branching
    if workspace.operation in ("fork", "clone"):
        for suffix, path in state["source"].items():
            if Path(path).read_bytes() != state["source_bytes"][suffix]:
                violations.append(f"{label}: the source's {suffix} changed")
        if _runs(str(Path(state["source"][".jsonl"]).parent), workspace.session_id) != state["runs"]:
            violations.append(f"{label}: the source's sub-agent runs changed")
        _check_records_settled(workspace, violations, label)
        _check_copies(workspace, violations, label)
        _check_temps_recovered(workspace, violations, label)
        return
    session = open_session(state["source"][".jsonl"])
    if workspace.operation == "goto":
        for leaf in state["reported"]:
            if not session.has_entry(leaf):
                violations.append(f"{label}: the reported jump {leaf} is not in the transcript")
        return
    current = session.labels().get(state["targets"][0])
    if current not in {state["label"], *state["pending_labels"]}:
        violations.append(f"{label}: label {current!r}, reported {state['label']!r}")


def _check_copies(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode.sessions.reader import open_session

    state = workspace.branching
    source = open_session(state["source"][".jsonl"])
    context = source.context().messages
    seen = set()
    for transcript in workspace.transcripts():
        copy_id = transcript.name[: -len(".jsonl")]
        if copy_id == workspace.session_id:
            continue
        seen.add(copy_id)
        meta_path = transcript.with_name(f"{copy_id}.meta.json")
        try:
            meta = json.loads(meta_path.read_bytes())
        except (OSError, ValueError):
            violations.append(f"{label}: copy {copy_id} has no whole meta")
            continue
        if not isinstance(meta, dict) or meta.get("parentSessionId") != workspace.session_id:
            violations.append(f"{label}: copy {copy_id}'s meta names no parent: {meta!r}")
        copy = open_session(transcript)
        if copy.context().messages != context:
            violations.append(f"{label}: copy {copy_id} has another context than the source")
        checkpoints = transcript.with_name(f"{copy_id}.checkpoints.jsonl")
        if workspace.operation == "fork":
            named = 1 if source.name else 0  # a named source's fork ends with its own `session_info`
            if copy.entry_count != source.entry_count + named:
                violations.append(f"{label}: fork {copy_id} holds {copy.entry_count} of {source.entry_count} entries")
            elif named and not (copy.name or "").startswith(f"{source.name} (fork)"):
                violations.append(f"{label}: fork {copy_id} is named {copy.name!r}, not after {source.name!r}")
            if not checkpoints.is_file() or checkpoints.read_bytes() != state["source_bytes"][".checkpoints.jsonl"]:
                violations.append(f"{label}: fork {copy_id} lacks the source's checkpoints")
            if _runs(str(transcript.parent), copy_id) != state["runs"]:
                violations.append(f"{label}: fork {copy_id} lacks the source's sub-agent runs")
        elif checkpoints.exists():
            violations.append(f"{label}: clone {copy_id} has checkpoints")
    for reported in state["reported"] - seen:
        violations.append(f"{label}: the reported copy {reported} does not exist")


def _runs(folder: str, session_id: str) -> dict[str, bytes]:
    """The files of a session's sub-agent runs (`<sid>/subagents/`), by name."""
    runs = Path(folder, session_id, "subagents")
    return {path.name: path.read_bytes() for path in sorted(runs.iterdir())} if runs.is_dir() else {}


def machine_crash(workspace: Any, label: str) -> None:
    """A crash of the machine on top of the kill, before any check opens a session: every fork
    whose body the disk may not hold yet (its `.unsynced` record is there) loses a random tail of
    it, as a lost write-back would, and its record names another boot. Opening the fork (the
    harness's checks) must give it its whole body again (`sessions/unsynced.py`), which
    `_check_copies` then reads."""
    if workspace.operation != "fork":
        return
    from commandcode.config.paths import project_dir

    folder = project_dir(workspace.project)
    rng = random.Random(label)
    for record in sorted(folder.glob(".*.jsonl.unsynced")):
        transcript = folder / record.name[1:-len(".unsynced")]
        try:
            value = json.loads(record.read_bytes())
        except ValueError:
            continue  # torn: the fork was never published
        value["boot"] = "a-boot-before-the-crash"
        record.write_text(json.dumps(value))
        if transcript.exists():
            with transcript.open("r+b") as handle:
                handle.truncate(rng.randrange(transcript.stat().st_size + 1))
            workspace.notes["unsynced_bodies_cut"] = workspace.notes.get("unsynced_bodies_cut", 0) + 1


def _check_records_settled(workspace: Any, violations: list[str], label: str) -> None:
    """After the sweep's settling no fork record is left (those of published forks went when the
    checks opened them; the sweep drops those of forks killed before they were published)."""
    from commandcode.config.paths import project_dir
    from commandcode.sessions.unsynced import settle_folder

    folder = project_dir(workspace.project)
    settle_folder(folder)
    left = sorted(path.name for path in folder.glob(".*.jsonl.unsynced"))
    if left:
        violations.append(f"{label}: fork records left after recovery: {left}")


def _check_temps_recovered(workspace: Any, violations: list[str], label: str) -> None:
    """The recovery the next fork, clone, sweep and `doctor --gc` run (`sessions/stale_temps.py`)
    leaves no hidden transcript temp of a killed run in the project folder."""
    from commandcode.config.paths import project_dir
    from commandcode.sessions.stale_temps import remove_stale_temps

    folder = project_dir(workspace.project)
    removed, _ = remove_stale_temps(folder)
    workspace.notes["stale_temps_removed"] = workspace.notes.get("stale_temps_removed", 0) + removed
    left = sorted(path.name for path in folder.glob(".*.jsonl.*.tmp"))
    if left:
        violations.append(f"{label}: transcript temps left after recovery: {left}")
