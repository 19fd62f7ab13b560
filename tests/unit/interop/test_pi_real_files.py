"""The pi reader on real files written by pi's own `SessionManager` (tests/support/pi_sessions.mjs):
every entry type, a branch summary, a compaction, labels, a fork that drops labels (repaired),
a clone with `parentSession`, and the v1/v2 legacy shapes migrated in memory only. What we read
is compared with what pi itself builds from the same file."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.pi import open_pi, pi_transcripts
from helpers.locations import SUPPORT
from helpers.npm_programs import Programs

pytestmark = [pytest.mark.npm]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for message in messages:
        texts = [block.get("text") or block.get("thinking") or block.get("name") or ""
                 for block in message["content"]]
        out.append(" ".join(str(text) for text in texts))
    return out


@pytest.mark.parametrize("name", ["main", "clone", "v2", "v1"])
def test_the_context_is_the_one_pi_builds(pi_files: dict[str, Any], name: str) -> None:
    expected = pi_files[name]
    path = Path(expected["path"])
    before = _digest(path)
    session = open_pi(path)
    assert len(session.messages) == len(expected["context"]) == 4
    pi_roles = [context["role"] for context in expected["context"]]
    assert pi_roles[0] == "compactionSummary" and session.messages[0]["meta"]["isSummary"]
    assert "Summary: a file was written" in session.messages[0]["content"][0]["text"]
    assert [message["role"] for message in session.messages[1:]] == pi_roles[1:]
    for ours, theirs in zip(_texts(session.messages[1:]), expected["context"][1:]):
        assert ours in theirs["text"]
    assert session.model == expected["model"]["modelId"] == "stub-model-2"
    assert session.effort == expected["thinkingLevel"] == "high"
    assert set(session.labels.items()) == set(expected["labels"].items())
    assert _digest(path) == before  # read-only, legacy files included (pi would rewrite them)


def test_legacy_files_are_migrated_in_memory_and_say_so(pi_files: dict[str, Any]) -> None:
    for name, version in (("v1", 1), ("v2", 2)):
        session = open_pi(pi_files[name]["path"])
        assert session.version_read == version
        assert any(f"pi v{version} file" in warning for warning in session.warnings)
        assert session.leaf_id == session.rows[-1].id  # v1: ids derived from the line, stable
        assert open_pi(pi_files[name]["path"]).leaf_id == session.leaf_id
    v2 = open_pi(pi_files["v2"]["path"])
    custom = [entry for entry in v2.entries_v3 if entry.get("type") == "message" and entry["message"]["role"] == "custom"]
    assert custom, "the v2 hookMessage role is read as custom"


def test_every_entry_type_is_read(pi_files: dict[str, Any]) -> None:
    session = open_pi(pi_files["main"]["path"])
    assert [row.type for row in session.rows] == pi_files["main"]["types"]
    assert session.unknown_types == {}
    assert session.name == pi_files["main"]["name"] == "Pi Session One"
    assert session.leaf_id == pi_files["main"]["leaf"]
    summary = next(row for row in session.rows if row.type == "branch_summary")
    assert summary.parent_id == pi_files["ids"]["answer"]  # hangs under the entry navigated to
    assert not next(row for row in session.rows if row.id == pi_files["ids"]["abandoned"]).on_active_path
    labelled = {row.id: row.label for row in session.rows if row.label}
    assert labelled == pi_files["main"]["labels"]


def test_a_fork_that_dropped_labels_is_repaired_and_says_what(pi_files: dict[str, Any]) -> None:
    expected = pi_files["branched"]
    session = open_pi(expected["path"])
    assert len(expected["context"]) == 2, "pi's own context of its fork stops at the dropped label"
    assert len(session.messages) == 4 and session.messages[0]["meta"]["isSummary"]
    assert len(session.repairs) == 1
    assert session.repairs[0]["missing_parent"] not in {row.id for row in session.rows}
    assert any("a label pi's fork dropped" in warning for warning in session.warnings)
    assert session.parent_session_id == open_pi(pi_files["main"]["path"]).id
    assert session.header.parent_session == pi_files["main"]["path"]


def test_a_clone_names_its_source_and_lists_under_its_own_cwd(pi_files: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi_files["agent"]))
    clone = open_pi(pi_files["clone"]["path"])
    assert clone.cwd == str(pi_files["other"])
    assert clone.parent_session_path == pi_files["main"]["path"]
    assert [path.name for path in pi_transcripts(str(pi_files["other"]))] == [Path(pi_files["clone"]["path"]).name]
    assert len(pi_transcripts(str(pi_files["cwd"]))) == 2


def test_the_commands_read_pi_sessions_and_leave_pi_untouched(pi_files: dict[str, Any], home: Path, tmp_path: Path) -> None:
    import shutil

    from helpers.cli import run_cli, snapshot

    agent = tmp_path / "pi-home" / ".pi" / "agent"
    shutil.copytree(pi_files["agent"], agent)
    main = agent / "sessions" / Path(pi_files["main"]["path"]).parent.name / Path(pi_files["main"]["path"]).name
    torn = main.with_name(main.name.replace(main.stem[-4:], "beef"))
    torn.write_bytes(main.read_bytes().replace(json.dumps("Pi Session One").encode(), b'"Torn Copy"')[:-20])
    before = snapshot(agent)
    env = {"HOME": str(tmp_path / "pi-home")}
    cwd = pi_files["cwd"]
    listing = run_cli(["sessions", "list", "--source", "pi", "--json"], cwd, home, **env)
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert {row["source"] for row in rows} == {"pi"} and len(rows) == 3
    shown = json.loads(run_cli(["sessions", "show", "pi session one", "--source", "pi", "--json"], cwd, home, **env).stdout)
    assert shown["id"] == open_pi(main).id and shown["labels"] and shown["version"] == 3
    torn_shown = run_cli(["sessions", "show", str(torn), "--source", "pi", "--json"], cwd, home, **env)
    assert torn_shown.returncode == 0, torn_shown.stderr
    assert [line["reason"] for line in json.loads(torn_shown.stdout)["skipped_lines"]] == ["torn"]
    for command in (["context"], ["tree"], ["context", "--json"], ["tree", "--json"]):
        completed = run_cli(["sessions", *command, str(main), "--source", "pi"], cwd, home, **env)
        assert completed.returncode == 0 and "Traceback" not in completed.stderr, (command, completed.stderr)
    assert snapshot(agent) == before


def test_import_pi_keeps_the_tree_context_labels_and_lineage(pi_files: dict[str, Any], home: Path) -> None:
    from helpers.cli import run_cli, snapshot

    env = {"PI_CODING_AGENT_DIR": str(pi_files["agent"])}
    before = snapshot(pi_files["agent"])
    cwd = pi_files["cwd"]
    for name in ("main", "branched"):
        source = open_pi(pi_files[name]["path"])
        done = run_cli(["import", "pi", source.id, "--json"], cwd, home, **env)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["already_imported"] is False
        if name == "branched":
            assert any("re-attached" in warning for warning in result["warnings"])
        context = json.loads(run_cli(["sessions", "context", result["id"], "--json"], cwd, home).stdout)
        assert [message["role"] for message in context["messages"]] == [m["role"] for m in source.messages]
        assert "Summary: a file was written" in context["messages"][0]["content"][0]["text"]
        tree = json.loads(run_cli(["sessions", "tree", result["id"], "--json"], cwd, home).stdout)
        assert len(tree["entries"]) == len(source.rows)
        assert {row["label"] for row in tree["entries"] if row["label"]} == set(source.labels.values())
        shown = json.loads(run_cli(["sessions", "show", result["id"], "--json"], cwd, home).stdout)
        assert shown["model"] == "stub/stub-model-2" and shown["effort"] == "high"
        meta = json.loads(Path(result["path"]).with_suffix(".meta.json").read_text())
        assert meta["importedFrom"] == {**meta["importedFrom"], "tool": "pi", "sessionId": source.id,
                                        "path": str(source.path)}
        again = json.loads(run_cli(["import", "pi", str(source.path), "--json"], cwd, home, **env).stdout)
        assert again["already_imported"] and again["id"] == result["id"]
    missing = run_cli(["import", "pi", "no-such-session"], cwd, home, **env)
    assert missing.returncode == 1 and missing.stderr.startswith("error: no pi session matches")
    assert snapshot(pi_files["agent"]) == before
