"""The inspection commands on the real Command Code 1.64.0 sample files (format §4, §5, §4.8; ref §9).

The sample home is copied into a tmp dir used as `COMMANDCODE_HOME`, and the real `commandcode`
CLI runs in subprocesses against it. Sample sessions live in project `home-dev-proj` (cwd
`/home/dev/proj`), which no test directory maps to, so subprocesses use `--all-projects`, ids,
prefixes and names; the per-directory listing runs in-process with the cwd patched. Nothing in
the copied tree may change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from commandcode.config.paths import project_dir
from helpers.cli import (
    SAMPLE_DATA,
    SAMPLE_PROJECT_CWD,
    SAMPLE_SLUG,
    copy_samples,
    entries,
    needs_samples,
    run_cli,
    run_json,
    snapshot,
)

pytestmark = needs_samples

ORIGINAL = "1ccb4627-5286-46c5-84a9-ce35adae899d"
FORK = "9e07fc17-d9dc-44f4-9ea9-6398425fd60d"
NAMED = "8f5d2778-ec59-47df-be33-2428f5424c22"
CLONE = "8c45bc8f-52ff-4316-9d99-c798b511460d"

ORIGINAL_MESSAGES = ["1c72eb50", "d376f688", "f97df82e", "2d064dec", "5e0f7011", "a70f1f3f", "de8b8785",
                     "2fdb0719", "132726b5", "21be2455", "1a37daaa", "e20335b7"]

# (role, kind, text or (tool name, tool_use id, input) or (tool_use id, result text)) per context message
ORIGINAL_CONTEXT: list[tuple[str, str, Any]] = [
    ("user", "text", "Say hello please"),
    ("assistant", "text", "Hello from stub. You said: Say hello please"),
    ("user", "text", "Please CREATE /home/dev/proj/newfile.txt now"),
    ("assistant", "tool_use", ("write_file", "call_4af531d8",
                               {"file_path": "/home/dev/proj/newfile.txt", "content": "version one\n"})),
    ("user", "tool_result", ("call_4af531d8", "File created successfully at: /home/dev/proj/newfile.txt")),
    ("assistant", "text", "Created /home/dev/proj/newfile.txt"),
    ("user", "text", "Please MODIFY /home/dev/proj/existing.txt now"),
    ("assistant", "tool_use", ("read_file", "call_964f77d8", {"file_path": "/home/dev/proj/existing.txt"})),
    ("user", "tool_result", ("call_964f77d8", "Read 1/1 file, 1 line\n1: base")),
    ("assistant", "tool_use", ("write_file", "call_b84939fe",
                               {"file_path": "/home/dev/proj/existing.txt", "content": "version two\n"})),
    ("user", "tool_result", ("call_b84939fe", "The file /home/dev/proj/existing.txt has been updated successfully.")),
    ("assistant", "text", "Modified /home/dev/proj/existing.txt"),
]

EXPECTED: dict[str, dict[str, Any]] = {
    ORIGINAL: {
        "name": "Interactive Renamed",  # the last session_info (written by /rename)
        "created": "2026-11-29T18:51:03.579Z",
        "modified": "2026-11-29T18:52:27.281Z",
        "message_count": 12,
        "first_message": "Say hello please",
        "leaf": "ed90d868",  # the session_info line is the last line, so it is the leaf
        "entrypoint": "print",
        "parent_session_id": None,
        "header_id": ORIGINAL,
        "context_ids": ORIGINAL_MESSAGES,
        "context": ORIGINAL_CONTEXT,
        "tree_types": ["message"] * 12 + ["session_info"],
    },
    FORK: {
        "name": None,  # forked before the rename; the fork was not named
        "created": "2026-11-29T18:51:03.579Z",
        "modified": "2026-11-29T18:51:19.820Z",
        "message_count": 14,
        "first_message": "Say hello please",
        "leaf": "d8f39eab",
        "entrypoint": None,  # a fork gets no entrypoint, so it shows without --all
        "parent_session_id": ORIGINAL,
        "header_id": ORIGINAL,  # the fork quirk: the header keeps the parent's id
        "context_ids": [*ORIGINAL_MESSAGES, "a65c64ae", "d8f39eab"],
        "context": [*ORIGINAL_CONTEXT, ("user", "text", "hello from the fork"),
                    ("assistant", "text", "Hello from stub. You said: hello from the fork")],
        "tree_types": ["message"] * 14,
    },
    NAMED: {
        "name": "My Named Session",
        "created": "2026-11-29T18:51:20.857Z",
        "modified": "2026-11-29T18:51:21.026Z",
        "message_count": 2,
        "first_message": "a named run",
        "leaf": "e5605a96",
        "entrypoint": "print",
        "parent_session_id": None,
        "header_id": NAMED,
        "context_ids": ["52024a19", "e5605a96"],
        "context": [("user", "text", "a named run"), ("assistant", "text", "Hello from stub. You said: a named run")],
        "tree_types": ["session_info", "message", "message"],
    },
    CLONE: {
        "name": "Interactive Renamed",  # the clone's meta title (and the copied session_info)
        "created": "2026-11-29T18:52:30.499Z",
        "modified": "2026-11-29T18:52:27.281Z",  # entries keep the source's timestamps
        "message_count": 12,
        "first_message": "Say hello please",
        "leaf": "ed90d868",
        "entrypoint": None,
        "parent_session_id": ORIGINAL,
        "header_id": CLONE,
        "context_ids": ORIGINAL_MESSAGES,
        "context": ORIGINAL_CONTEXT,
        "tree_types": ["message"] * 12 + ["session_info"],
    },
}

LISTING_FIELDS = {"id", "name", "created", "modified", "message_count", "first_message", "git_branch", "entrypoint",
                  "parent_session_id", "path"}


@pytest.fixture(scope="module")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the sample home for the read-only tests of this module."""
    return copy_samples(tmp_path_factory.mktemp("samples") / "home")


@pytest.fixture(scope="module")
def sample_cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory that is not the samples' project."""
    return tmp_path_factory.mktemp("elsewhere").resolve()


@pytest.fixture(scope="module")
def pristine(sample_home: Path) -> dict[str, tuple[bytes | None, int]]:
    """The copied tree before any command ran."""
    return snapshot(sample_home)


def transcript_of(data: Path, session_id: str) -> Path:
    return data / "projects" / SAMPLE_SLUG / f"{session_id}.jsonl"


def test_the_copy_is_faithful(sample_home: Path, pristine: dict[str, tuple[bytes | None, int]]) -> None:
    original = snapshot(SAMPLE_DATA)
    assert {path: content for path, (content, _) in pristine.items()} == \
        {path: content for path, (content, _) in original.items()}
    assert project_dir(SAMPLE_PROJECT_CWD).name == SAMPLE_SLUG


@pytest.mark.parametrize("session_id", [ORIGINAL, FORK, NAMED, CLONE])
def test_show(sample_home: Path, sample_cwd: Path, pristine: object, session_id: str) -> None:
    expected = EXPECTED[session_id]
    shown = run_json(["sessions", "show", session_id, "--json"], sample_cwd, sample_home)
    assert shown["id"] == session_id  # from the file name, never the header
    assert shown["path"] == str(transcript_of(sample_home, session_id))
    assert shown["cwd"] == SAMPLE_PROJECT_CWD
    for key in ("name", "created", "modified", "message_count", "leaf", "entrypoint", "parent_session_id", "header_id"):
        assert shown[key] == expected[key], key
    assert shown["model"] == "local/stub-model"
    assert shown["effort"] is None
    assert shown["skipped_lines"] == []


@pytest.mark.parametrize("session_id", [ORIGINAL, FORK, NAMED, CLONE])
def test_context(sample_home: Path, sample_cwd: Path, pristine: object, session_id: str) -> None:
    expected = EXPECTED[session_id]
    context = run_json(["sessions", "context", session_id, "--json"], sample_cwd, sample_home)
    assert context["leaf"] == expected["leaf"]
    assert context["entry_ids"] == expected["context_ids"]
    messages = context["messages"]
    assert len(messages) == len(expected["context"])
    for message, (role, kind, value) in zip(messages, expected["context"]):
        assert message["role"] == role
        [block] = message["content"]
        assert block["type"] == kind
        if kind == "text":
            assert block["text"] == value
        elif kind == "tool_use":
            assert (block["name"], block["id"], block["input"]) == value
        else:
            assert (block["tool_use_id"], block["content"]) == (value[0], [{"type": "text", "text": value[1]}])
    # every tool_use is answered by the very next message, and every tool_result answers one
    for position, message in enumerate(messages):
        for block in message["content"]:
            if block["type"] == "tool_use":
                answer = messages[position + 1]["content"]
                assert [item["tool_use_id"] for item in answer if item["type"] == "tool_result"] == [block["id"]]
            if block["type"] == "tool_result":
                asked = messages[position - 1]["content"]
                assert block["tool_use_id"] in [item["id"] for item in asked if item["type"] == "tool_use"]
    # the messages are the stored message objects, meta included, as the model sees them on resume
    stored = {entry["id"]: entry for entry in entries(transcript_of(sample_home, session_id))}
    assert messages == [stored[entry_id]["message"] for entry_id in expected["context_ids"]]
    tool_results = [message for message in messages if message["content"][0]["type"] == "tool_result"]
    assert all(set(message["meta"]) == {"source", "messageId"} and message["meta"]["source"] == "tool"
               for message in tool_results)


@pytest.mark.parametrize("session_id", [ORIGINAL, FORK, NAMED, CLONE])
def test_tree(sample_home: Path, sample_cwd: Path, pristine: object, session_id: str) -> None:
    expected = EXPECTED[session_id]
    tree = run_json(["sessions", "tree", session_id, "--json"], sample_cwd, sample_home)
    stored = entries(transcript_of(sample_home, session_id))
    assert tree["leaf"] == expected["leaf"]
    rows = tree["entries"]
    assert [row["type"] for row in rows] == expected["tree_types"]
    assert [(row["id"], row["parent_id"], row["timestamp"]) for row in rows] == \
        [(entry["id"], entry["parentId"], entry["timestamp"]) for entry in stored]
    assert all(row["label"] is None for row in rows)
    # every sample is one straight chain ending at the leaf: all of it is the active path
    assert all(row["on_active_path"] for row in rows)
    assert rows[-1]["id"] == expected["leaf"]
    assert rows[0]["parent_id"] is None


def test_fork_header_and_session_id_keys(sample_home: Path, sample_cwd: Path, pristine: object) -> None:
    lines = [json.loads(line) for line in transcript_of(sample_home, FORK).read_text().splitlines()]
    assert lines[0]["id"] == ORIGINAL and lines[0]["sessionId"] == FORK
    shown = run_json(["sessions", "show", "9e07fc17", "--json"], sample_cwd, sample_home)
    assert shown["id"] == FORK and shown["header_id"] == ORIGINAL
    # the parent resolves to its own file, not to the fork whose header carries its id
    assert run_json(["sessions", "show", ORIGINAL, "--json"], sample_cwd, sample_home)["path"] == \
        str(transcript_of(sample_home, ORIGINAL))


def test_listing_all_projects(sample_home: Path, sample_cwd: Path, pristine: object) -> None:
    visible = run_json(["sessions", "list", "--all-projects", "--json"], sample_cwd, sample_home)
    # unnamed print sessions need --all; both print sessions here carry a name (`-n`, a /rename in
    # the TUI), so they are listed (issue 31); equal `modified` (the clone keeps its source's
    # timestamps) is broken by `created`, newest first
    assert [item["id"] for item in visible] == [CLONE, ORIGINAL, NAMED, FORK]
    everything = run_json(["sessions", "list", "--all", "--all-projects", "--json"], sample_cwd, sample_home)
    assert [item["id"] for item in everything] == [CLONE, ORIGINAL, NAMED, FORK]
    for item in everything:
        assert LISTING_FIELDS <= set(item)
        expected = EXPECTED[item["id"]]
        for key in ("name", "created", "modified", "message_count", "first_message", "entrypoint", "parent_session_id"):
            assert item[key] == expected[key], (item["id"], key)
        assert item["git_branch"] is None
        assert item["path"] == str(transcript_of(sample_home, item["id"]))
    # this directory's project is empty
    assert run_json(["sessions", "list", "--all", "--json"], sample_cwd, sample_home) == []


def test_listing_of_the_sample_project_directory(sample_home: Path, pristine: object,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.cli import app

    monkeypatch.setenv("COMMANDCODE_HOME", str(sample_home))
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    monkeypatch.setattr(os, "getcwd", lambda: SAMPLE_PROJECT_CWD)  # /home/dev/proj need not exist
    runner = CliRunner()
    default = runner.invoke(app, ["sessions", "list", "--json"])
    assert default.exit_code == 0, default.output
    assert [item["id"] for item in json.loads(default.stdout)] == [CLONE, ORIGINAL, NAMED, FORK]  # all named
    with_headless = runner.invoke(app, ["sessions", "list", "--all", "--json"])
    assert [item["id"] for item in json.loads(with_headless.stdout)] == [CLONE, ORIGINAL, NAMED, FORK]
    table = runner.invoke(app, ["sessions", "list"])
    assert table.exit_code == 0
    assert all(session[:8] in table.stdout for session in (CLONE, ORIGINAL, NAMED, FORK)), table.stdout


def test_references(sample_home: Path, sample_cwd: Path, pristine: object) -> None:
    def resolved(ref: str) -> str:
        return run_json(["sessions", "show", ref, "--json"], sample_cwd, sample_home)["id"]

    assert resolved(NAMED) == NAMED
    assert resolved("8f5d") == NAMED
    assert resolved("  my NAMED session ") == NAMED
    assert resolved("9e07fc17-d9dc") == FORK
    assert resolved(str(transcript_of(sample_home, CLONE))) == CLONE
    # the original and its clone are both named "Interactive Renamed": a name never picks silently
    ambiguous = run_cli(["sessions", "show", "interactive renamed", "--json"], sample_cwd, sample_home)
    assert ambiguous.returncode == 1
    error, hint = ambiguous.stderr.splitlines()
    assert error.startswith("error: ") and ORIGINAL in error and CLONE in error
    assert hint.startswith("hint: ")
    # one character is a name, not the prefix both 8f5d… and 8c45… share (MIN_ID_PREFIX)
    short = run_cli(["sessions", "show", "8", "--json"], sample_cwd, sample_home)
    assert short.returncode == 1 and "no session matches '8'" in short.stderr and "at least 4" in short.stderr


def test_text_views(sample_home: Path, sample_cwd: Path, pristine: object) -> None:
    shown = run_cli(["sessions", "show", "8f5d"], sample_cwd, sample_home)
    assert shown.returncode == 0 and "My Named Session" in shown.stdout
    context = run_cli(["sessions", "context", ORIGINAL], sample_cwd, sample_home)
    assert context.returncode == 0 and len(context.stdout.splitlines()) == 12
    tree = run_cli(["sessions", "tree", ORIGINAL], sample_cwd, sample_home)
    assert tree.returncode == 0 and "ed90d868" in tree.stdout and "Interactive Renamed" in tree.stdout
    assert shown.stderr == context.stderr == tree.stderr == ""


def test_zz_nothing_in_the_copied_tree_changed(sample_home: Path, pristine: dict[str, tuple[bytes | None, int]]) -> None:
    # runs after the read-only tests of this module (file order): no byte, mode or file changed
    assert snapshot(sample_home) == pristine


def test_resuming_a_sample_appends_after_its_bytes(tmp_path: Path) -> None:
    data = copy_samples(tmp_path / "home")
    for folder, _, names in os.walk(tmp_path / "home"):  # the reference copy is read-only
        os.chmod(folder, 0o755)
        for name in names:
            os.chmod(os.path.join(folder, name), 0o644)
    work = (tmp_path / "work").resolve()
    work.mkdir()
    before = snapshot(data)
    fork = transcript_of(data, FORK)
    original_bytes = fork.read_bytes()
    completed = run_cli(["-p", "after the fork", "-r", FORK, "--output-format", "json"], work, data)
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["session_id"] == FORK and result["result"] == "Offline model reply. You said: after the fork"
    grown = fork.read_bytes()
    assert grown.startswith(original_bytes)
    new = [json.loads(line) for line in grown[len(original_bytes):].splitlines()]
    assert [entry["message"]["role"] for entry in new] == ["user", "assistant"]
    assert new[0]["parentId"] == "d8f39eab" and new[1]["parentId"] == new[0]["id"]
    assert all("sessionId" not in entry for entry in new)
    shown = run_json(["sessions", "show", FORK, "--json"], work, data)
    assert shown["message_count"] == 16 and shown["leaf"] == new[1]["id"] and shown["id"] == FORK
    assert shown["entrypoint"] is None  # resuming never re-labels a session
    # nothing else of the samples was touched (our own locks/ and objects/ folders aside)
    after = snapshot(data)
    changed = {path for path in set(before) | set(after)
               if before.get(path, (b"", 0))[0] != after.get(path, (b"", 0))[0]
               and not path.startswith(("locks/", "objects/"))}
    meta = f"projects/{SAMPLE_SLUG}/{FORK}.meta.json"
    assert changed == {f"projects/{SAMPLE_SLUG}/{FORK}.jsonl", f"projects/{SAMPLE_SLUG}/{FORK}.checkpoints.jsonl", meta}
    # the meta only gained the turn's trace id (`traceIds`, newest last); every key it had is as it was
    old_meta, new_meta = json.loads(before[meta][0] or b"{}"), json.loads(after[meta][0] or b"{}")
    assert {key: value for key, value in new_meta.items() if key != "traceIds"} == old_meta
    assert len(new_meta["traceIds"]) == len(old_meta.get("traceIds", [])) + 1
    # (-p never writes history.jsonl, as the real CLI's -p)
