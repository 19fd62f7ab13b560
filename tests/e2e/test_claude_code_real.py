"""The Claude Code reader on files the real `claude` binary wrote, run offline against the stub
Anthropic Messages API (helpers/stub_models.py) in a network namespace of its own: plain turns,
parallel tool calls, file edits with file-history backups, `--continue`, `--resume`,
`--fork-session`, `/compact`, a subagent, and a project whose path makes a long slug. Then the
`--source claude` commands on them, with `~/.claude` byte-identical afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.claude_code import ClaudeSession, claude_transcripts, open_claude
from commandcode.interop.locations import claude_slug
from helpers.cli import run_cli, snapshot

pytestmark = [pytest.mark.npm, pytest.mark.slow]


def _session(claude_home: dict[str, Any], key: str, monkeypatch: pytest.MonkeyPatch) -> ClaudeSession:
    monkeypatch.setenv("HOME", str(claude_home["home"]))
    return open_claude(claude_home[key])


def test_parallel_tool_calls_and_both_results_are_in_the_context(claude_home: dict[str, Any],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session(claude_home, "first", monkeypatch)
    calls = [(position, block) for position, message in enumerate(session.messages)
             for block in message["content"] if block.get("type") == "tool_use" and block.get("name") == "Write"]
    results = [position for position, message in enumerate(session.messages)
               for block in message["content"] if block.get("type") == "tool_result"
               and block.get("tool_use_id") in {call["id"] for _, call in calls}]
    assert len(calls) == 2 and len(results) == 2
    # the two calls share one message.id and come before both results, as the API requires
    ids = {session.by_uuid[session.context_ids[position]]["message"]["id"] for position, _ in calls}
    assert len(ids) == 1
    assert max(position for position, _ in calls) < min(results)
    # a plain walk up from the leaf misses one of the results: the regrouping is what finds it
    from commandcode.interop.claude_chain import _walk_up

    plain = set(_walk_up(session.leaf_id or "", session.by_uuid, set(), []))
    assert not {session.context_ids[position] for position in results} <= plain
    assert session.warnings == []


def test_the_leaf_title_model_and_resumed_turns(claude_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session(claude_home, "first", monkeypatch)
    pointers = [entry for entry in session.entries() if entry.get("type") == "last-prompt"]
    assert session.leaf_id == pointers[-1]["leafUuid"]
    texts = [block.get("text", "") for message in session.messages if message["role"] == "user"
             for block in message["content"] if block.get("type") == "text"]
    assert texts[0] == "hello there" and any(text.startswith("again") for text in texts)  # -c and -r continued it
    assert session.first_message() == "hello there"
    assert session.model and session.model.startswith("claude-")
    assert session.cwd == str(claude_home["proj"])
    assert session.version == "2.1.332"


def test_file_history_checkpoints_and_backups(claude_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session(claude_home, "first", monkeypatch)
    backups = [(checkpoint, path, backup) for checkpoint in session.checkpoints
               for path, backup in checkpoint.files.items()]
    names = {backup.get("backupFileName") for _, path, backup in backups if path == "c.txt"}
    assert None not in names and len(names) >= 2
    folder = claude_home["home"] / ".claude" / "file-history" / session.id
    contents = {(folder / str(name)).read_bytes() for name in names}
    assert b"base\n" in contents and b"changed\n" in contents
    created = [backup for _, path, backup in backups if path == "a.txt"]
    assert created and created[0]["backupFileName"] is None  # did not exist: a rewind deletes it


def test_a_fork_keeps_the_uuids_and_names_its_source(claude_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    first = _session(claude_home, "first", monkeypatch)
    fork = _session(claude_home, "fork", monkeypatch)
    assert fork.parent_session_id == first.id
    assert set(first.by_uuid) & set(fork.by_uuid)


def test_a_compaction_starts_the_context_and_a_subagent_is_its_own_file(claude_home: dict[str, Any],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fork = _session(claude_home, "fork", monkeypatch)
    assert any(row.type == "system:compact_boundary" for row in fork.rows)
    assert fork.messages[0]["meta"].get("isSummary")
    texts = [block.get("text", "") for message in fork.messages for block in message["content"]]
    assert "after the compaction" in texts and "hello there" not in texts
    assert len(fork.subagents) == 1
    agent = fork.subagents[0]
    assert agent.meta.get("description") == "helper" and agent.session is not None
    assert agent.session.message_count >= 1


def test_a_long_path_is_found_by_its_cut_slug(claude_home: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(claude_home["home"]))
    deep = str(claude_home["deep"])
    assert len(claude_slug(deep)) > 200
    found = claude_transcripts(deep)
    assert len(found) == 1 and found[0].parent.name != claude_slug(deep)
    assert found[0].parent.name.startswith(claude_slug(deep)[:200] + "-")
    assert open_claude(found[0]).cwd == deep


def test_the_commands_read_them_and_leave_claude_untouched(claude_home: dict[str, Any], home: Path) -> None:
    claude_dir = claude_home["home"] / ".claude"
    before = snapshot(claude_dir)
    env = {"HOME": str(claude_home["home"])}
    proj = claude_home["proj"]
    listing = run_cli(["sessions", "list", "--source", "claude", "--json"], proj, home, **env)
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert {row["id"] for row in rows} == {claude_home["first"].stem, claude_home["fork"].stem}
    assert all(row["source"] == "claude" for row in rows)
    every = run_cli(["sessions", "list", "--source", "all", "--all-projects", "--json"], proj, home, **env)
    assert len(json.loads(every.stdout)) == 3
    for command in (["show"], ["context"], ["tree"], ["show", "--json"], ["context", "--json"], ["tree", "--json"]):
        completed = run_cli(["sessions", *command, claude_home["first"].stem[:8], "--source", "claude"], proj, home, **env)
        assert completed.returncode == 0, (command, completed.stderr)
    context = json.loads(run_cli(["sessions", "context", claude_home["first"].stem, "--source", "claude", "--json"],
                                 proj, home, **env).stdout)
    assert context["leaf"] and len(context["messages"]) == len(context["entry_ids"]) > 4
    missing = run_cli(["sessions", "show", "nope", "--source", "claude"], proj, home, **env)
    assert missing.returncode == 1 and missing.stderr.startswith("error: no claude session matches 'nope'")
    bad = run_cli(["sessions", "list", "--source", "gemini"], proj, home, **env)
    assert bad.returncode == 2 and "error: unknown source 'gemini'" in bad.stderr
    assert snapshot(claude_dir) == before


def test_bad_input_is_read_with_warnings_never_a_crash(claude_home: dict[str, Any], tmp_path: Path, home: Path) -> None:
    """A real transcript, copied, then: an unknown entry type, a newer version, a rewind's
    all-zero leaf, a torn last line; its subagent file and one backup removed."""
    import shutil

    source = claude_home["home"] / ".claude"
    copy = tmp_path / "home" / ".claude"
    shutil.copytree(source, copy)
    fork = copy / "projects" / claude_home["fork"].parent.name / claude_home["fork"].name
    shutil.rmtree(fork.parent / fork.stem / "subagents")
    first = copy / "projects" / claude_home["first"].parent.name / claude_home["first"].name
    history = copy / "file-history" / first.stem
    victim = sorted(history.iterdir())[0]
    victim.unlink()
    with first.open("a") as handle:
        handle.write(json.dumps({"type": "brand-new-kind", "uuid": "11111111-2222-4333-8444-555555555555",
                                 "parentUuid": None, "timestamp": "2026-12-01T00:00:00.000Z", "payload": [1]}) + "\n")
        handle.write(json.dumps({"type": "user", "version": "9.0.0", "isSidechain": True, "uuid": "u-newer",
                                 "parentUuid": None, "message": {"role": "user", "content": "x"}}) + "\n")
        handle.write(json.dumps({"type": "last-prompt", "leafUuid": "00000000-0000-0000-0000-000000000000",
                                 "explicit": True, "sessionId": first.stem}) + "\n")
        handle.write('{"type":"user","uuid":"torn')
    before = snapshot(copy)
    env = {"HOME": str(tmp_path / "home")}
    shown = run_cli(["sessions", "show", first.stem, "--source", "claude", "--json"], claude_home["proj"], home, **env)
    assert shown.returncode == 0, shown.stderr
    details = json.loads(shown.stdout)
    warnings = "\n".join(details["warnings"])
    assert details["unknown_types"] == {"brand-new-kind": 1}
    assert "newer than the newest read here" in warnings
    assert f"backup(s) missing from {history}" in warnings
    assert details["rewound_to_start"] is True and details["leaf"] is None
    assert [line["reason"] for line in details["skipped_lines"]] == ["torn"]
    text = run_cli(["sessions", "show", first.stem, "--source", "claude"], claude_home["proj"], home, **env)
    assert text.returncode == 0 and "warning" in text.stderr.lower() and "Traceback" not in text.stderr
    tree = json.loads(run_cli(["sessions", "tree", first.stem, "--source", "claude", "--json"], claude_home["proj"],
                              home, **env).stdout)
    assert "brand-new-kind" in {row["type"] for row in tree["entries"]}
    context = json.loads(run_cli(["sessions", "context", first.stem, "--source", "claude", "--json"],
                                 claude_home["proj"], home, **env).stdout)
    assert context["messages"] == []  # rewound to before the first prompt
    fork_shown = json.loads(run_cli(["sessions", "show", fork.stem, "--source", "claude", "--json"],
                                    claude_home["proj"], home, **env).stdout)
    assert any("was launched but its file" in warning for warning in fork_shown["warnings"])
    assert snapshot(copy) == before


def test_import_then_rewind_puts_the_code_back(claude_home: dict[str, Any], home: Path) -> None:
    claude_dir = claude_home["home"] / ".claude"
    before = snapshot(claude_dir)
    env = {"HOME": str(claude_home["home"])}
    proj = claude_home["proj"]
    first_id = claude_home["first"].stem
    done = run_cli(["import", "claude", first_id[:8], "--json"], proj, home, **env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["already_imported"] is False and result["checkpoints"] >= 3
    assert result["source"] == {"tool": "claude", "path": str(claude_home["first"]), "sessionId": first_id}
    again = json.loads(run_cli(["import", "claude", first_id, "--json"], proj, home, **env).stdout)
    assert again["already_imported"] is True and again["id"] == result["id"] and again["path"] == result["path"]
    text = run_cli(["import", "claude", first_id], proj, home, **env)
    assert text.returncode == 0 and f"already imported: {result['id']}" in text.stdout
    meta = json.loads(Path(result["path"]).with_suffix(".meta.json").read_text())
    assert meta["importedFrom"]["tool"] == "claude" and meta["importedFrom"]["sessionId"] == first_id
    # our context: the same conversation, parallel calls merged into one message as the API saw it
    ours = json.loads(run_cli(["sessions", "context", result["id"], "--json"], proj, home).stdout)["messages"]
    source = open_claude(claude_home["first"])
    calls = [block for message in ours if message["role"] == "assistant" for block in message["content"]
             if block.get("type") == "tool_use" and block.get("name") == "Write"]
    assert len(calls) == 2
    merged = next(message for message in ours if any(block.get("name") == "Write" for block in message["content"]))
    position = ours.index(merged)
    assert [block["type"] for block in ours[position + 1]["content"]] == ["tool_result", "tool_result"]
    assert len(ours) < len(source.messages)
    shown = json.loads(run_cli(["sessions", "show", result["id"], "--json"], proj, home).stdout)
    assert shown["model"] == f"anthropic/{source.model}" and shown["skipped_lines"] == []
    records = json.loads(run_cli(["checkpoints", "list", result["id"], "--json"], proj, home).stdout)["checkpoints"]
    edit_turn = next(record for record in records if str(record.get("prompt", "")).startswith("edit it"))
    assert "code" in edit_turn["modes"]
    assert (proj / "c.txt").read_text() == "third\n"
    rewound = run_cli(["rewind", result["id"], "--to", str(edit_turn["number"]), "--mode", "code", "--yes"],
                      proj, home)
    assert rewound.returncode == 0, rewound.stderr
    assert (proj / "c.txt").read_text() == "base\n"
    assert snapshot(claude_dir) == before


def test_an_imported_compaction_is_one_entry_with_its_summary(claude_home: dict[str, Any], home: Path) -> None:
    """The fork's `/compact` (Claude Code 2.1.332) imports as one `compaction` entry whose summary
    is the real one (issue 32 §4: it was written twice, once off the path)."""
    env = {"HOME": str(claude_home["home"])}
    done = run_cli(["import", "claude", claude_home["fork"].stem, "--json"], claude_home["proj"], home, **env)
    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in Path(json.loads(done.stdout)["path"]).read_text().splitlines()]
    compactions = [entry for entry in entries if entry.get("type") == "compaction"]
    assert len(compactions) == 1, compactions
    source = open_claude(claude_home["fork"])
    summary = next(message for message in source.messages if message["meta"].get("isSummary"))
    assert compactions[0]["summary"] and compactions[0]["summary"] in summary["content"][0]["text"]
