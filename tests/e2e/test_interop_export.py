"""`commandcode export --source claude|pi|all` on sessions the real programs wrote: html, md and
jsonl, the three selections, the same conversation as `import` makes of it, bad input with a
warning and never a traceback, and nothing written into `~/.claude` or `~/.pi`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from commandcode.interop.pi import open_pi
from helpers.cli import run_cli, snapshot

pytestmark = [pytest.mark.npm]


def _messages(ref: str, cwd: Path, data: Path, **env: str) -> list[dict[str, Any]]:
    completed = run_cli(["sessions", "context", ref, "--json"], cwd, data, **env)
    assert completed.returncode == 0, completed.stderr
    return list(json.loads(completed.stdout)["messages"])


def _shown(markdown: str) -> int:
    """The message count in an md export's header."""
    return int(markdown.split("- **Messages:** ", 1)[1].split("\n", 1)[0])


def _exported_is_the_import(source: str, ref: str, cwd: Path, data: Path, out: Path, **env: str) -> Path:
    """Exports `ref` as jsonl and imports it: both are the same Command Code session."""
    done = run_cli(["export", ref, "--source", source, "-o", str(out / "session.jsonl")], cwd, data, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"exported jsonl to {out / 'session.jsonl'}")
    imported = json.loads(run_cli(["import", source, ref, "--json"], cwd, data, **env).stdout)
    exported = _messages(str(out / "session.jsonl"), cwd, data)
    assert exported and exported == _messages(imported["id"], cwd, data)
    return out / "session.jsonl"


def test_claude_sessions_export_to_every_format(claude_home: dict[str, Any], home: Path, tmp_path: Path) -> None:
    claude_dir = claude_home["home"] / ".claude"
    before = snapshot(claude_dir)
    env = {"HOME": str(claude_home["home"])}
    proj, first, fork = claude_home["proj"], claude_home["first"], claude_home["fork"]
    out = tmp_path / "out"
    out.mkdir()
    page = run_cli(["export", first.stem[:8], "--source", "claude", "-o", str(out / "first.html")], proj, home, **env)
    assert page.returncode == 0, page.stderr
    html = (out / "first.html").read_text()
    assert "hello there" in html and "two files at once" in html and first.stem in html
    assert str(claude_home["home"]) not in html  # paths sanitized as in our own exports
    markdown = run_cli(["export", first.stem, "--source", "claude", "--format", "md", "-o", str(out)], proj, home, **env)
    assert markdown.returncode == 0, markdown.stderr
    text = (out / f"command-code-session-{first.stem[:8]}.md").read_text()
    assert "hello there" in text and "edit it" in text
    # every branch of the fork, and the whole active path through its compaction
    tree = run_cli(["export", fork.stem, "--source", "claude", "--branch", "all", "-o", str(out / "tree.html")],
                   proj, home, **env)
    assert tree.returncode == 0, tree.stderr
    full = run_cli(["export", fork.stem, "--source", "all", "--full", "-f", "md", "-o", str(out / "full.md")],
                   proj, home, **env)
    assert full.returncode == 0, full.stderr
    context = run_cli(["export", fork.stem, "--source", "claude", "-f", "md", "-o", str(out / "context.md")],
                      proj, home, **env)
    assert context.returncode == 0, context.stderr
    whole, summarized = (out / "full.md").read_text(), (out / "context.md").read_text()
    assert "a forked turn" in whole and "after the compaction" in summarized
    assert _shown(whole) > _shown(summarized)  # its /compact summarized older turns away
    _exported_is_the_import("claude", first.stem, proj, home, out, **env)
    assert snapshot(claude_dir) == before


def test_exporting_onto_the_source_or_from_a_bad_reference_is_refused(claude_home: dict[str, Any], home: Path,
                                                                      tmp_path: Path) -> None:
    copy = tmp_path / "home" / ".claude"
    shutil.copytree(claude_home["home"] / ".claude", copy)
    transcript = copy / "projects" / claude_home["first"].parent.name / claude_home["first"].name
    original = transcript.read_bytes()
    env = {"HOME": str(tmp_path / "home")}
    proj = claude_home["proj"]
    onto = run_cli(["export", str(transcript), "--source", "claude", "-f", "jsonl", "-o", str(transcript)],
                   proj, home, **env)
    assert onto.returncode == 1 and "is the session's own transcript" in onto.stderr
    assert transcript.read_bytes() == original
    for args, code, message in ((["nope", "--source", "claude"], 1, "error: no claude session matches 'nope'"),
                                (["x", "--source", "gemini"], 2, "error: unknown source 'gemini'"),
                                (["x", "--source", "claude", "--branch", "some"], 2, "error: unknown --branch")):
        refused = run_cli(["export", *args], proj, home, **env)
        assert refused.returncode == code and refused.stderr.startswith(message), (args, refused.stderr)
        assert "Traceback" not in refused.stderr
    empty = transcript.with_name("11111111-2222-4333-8444-555555555555.jsonl")
    empty.write_text('{"type":"summary","summary":"nothing","leafUuid":"abc"}\n')
    nothing = run_cli(["export", str(empty), "--source", "claude", "-o", str(tmp_path / "empty.html")], proj, home, **env)
    assert nothing.returncode == 1 and nothing.stderr.startswith("error: ") and "holds no message" in nothing.stderr
    assert not (tmp_path / "empty.html").exists()
    # a torn last line: exported with a warning, the source left as it was
    with transcript.open("ab") as handle:
        handle.write(b'{"type":"user","uuid":"torn')
    torn = transcript.read_bytes()
    done = run_cli(["export", str(transcript), "--source", "claude", "-o", str(tmp_path / "torn.html")], proj, home, **env)
    assert done.returncode == 0, done.stderr
    assert "skipped 1 unreadable line(s)" in done.stderr and "hello there" in (tmp_path / "torn.html").read_text()
    assert transcript.read_bytes() == torn
    assert list(tmp_path.glob("commandcode-export-*")) == []


def test_pi_sessions_export_to_every_format(pi_files: dict[str, Any], home: Path, tmp_path: Path) -> None:
    env = {"PI_CODING_AGENT_DIR": str(pi_files["agent"])}
    before = snapshot(pi_files["agent"])
    cwd = pi_files["cwd"]
    source = open_pi(Path(pi_files["main"]["path"]))
    out = tmp_path / "out"
    out.mkdir()
    for fmt in ("html", "md"):
        done = run_cli(["export", "pi session one", "--source", "pi", "-f", fmt, "-o", str(out / f"main.{fmt}")],
                       cwd, home, **env)
        assert done.returncode == 0, done.stderr
        assert "Pi Session One" in (out / f"main.{fmt}").read_text()
    branched = run_cli(["export", open_pi(Path(pi_files["branched"]["path"])).id, "--source", "pi", "--branch", "all",
                        "-o", str(out / "branched.html")], cwd, home, **env)
    assert branched.returncode == 0 and "re-attached" in branched.stderr  # the repair is said, as in `show`
    exported = _exported_is_the_import("pi", source.id, cwd, home, out, **env)
    assert json.loads(run_cli(["sessions", "show", str(exported), "--json"], cwd, home).stdout)["name"] \
        == "Pi Session One"
    assert snapshot(pi_files["agent"]) == before


def test_source_all_exports_our_own_session_too(claude_home: dict[str, Any], home: Path, tmp_path: Path) -> None:
    env = {"HOME": str(claude_home["home"])}
    proj = claude_home["proj"]
    made = run_cli(["-p", "our own turn", "-n", "Ours Among Theirs"], proj, home, **env)
    assert made.returncode == 0, made.stderr
    done = run_cli(["export", "Ours Among Theirs", "--source", "all", "-f", "jsonl", "-o", str(tmp_path / "ours.jsonl")],
                   proj, home, **env)
    assert done.returncode == 0, done.stderr
    [transcript] = [path for path in (home / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    assert (tmp_path / "ours.jsonl").read_bytes() == transcript.read_bytes()  # ours: a byte copy, not a conversion
