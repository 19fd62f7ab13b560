"""A rewind of an imported Claude Code session restores what Claude Code's own `--rewind-files`
restores (issue 26 §3): the real `claude` binary (npm, offline against the stub model) edits
files in a subfolder over three prompts, then, for each prompt, the project is put back to its
final state and rewound once by `commandcode rewind --mode code` of the import and once by
`claude --resume ID --rewind-files PROMPT`: the two trees must be the same (before issue 26,
ours wrote `src/src/app.py` and left `src/app.py` as it was)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.claude_real import ClaudeRun, edit, write
from helpers.cli import run_cli
from helpers.npm_programs import Programs, run_offline

pytestmark = [pytest.mark.npm, pytest.mark.slow]


def _tree(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() if path.is_file() else "<folder>"
            for path in sorted(root.rglob("*"))}


def _put_back(root: Path, tree: dict[str, str]) -> None:
    shutil.rmtree(root)
    root.mkdir()
    for relative, text in tree.items():
        path = root / relative
        if text == "<folder>":
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def test_rewinds_of_an_import_match_claude_codes_own(npm_programs: Programs, tmp_path: Path, home: Path) -> None:
    claude_home, proj = tmp_path / "claude-home", tmp_path / "edits"
    claude_home.mkdir()
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "app.py").write_text("v0\n")
    (proj / "top.txt").write_text("t0\n")
    claude = ClaudeRun(npm_programs, claude_home, tmp_path / "requests.jsonl")
    app = str(proj / "src" / "app.py")
    claude(proj, "-p", f"first {edit(app, 'v0', 'v1')}")
    claude(proj, "-c", "-p", f"second {edit(app, 'v1', 'v2')} {write(str(proj / 'src' / 'new.py'), 'new')}")
    claude(proj, "-c", "-p", f"third {edit(app, 'v2', 'v3')} {edit(str(proj / 'top.txt'), 't0', 't1')}")
    [transcript] = (claude_home / ".claude" / "projects").glob("*/*.jsonl")
    final = _tree(proj)
    env = {"HOME": str(claude_home)}
    done = run_cli(["import", "claude", str(transcript), "--json"], proj, home, **env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["warnings"] == [] and result["checkpoints"] == 3
    records = json.loads(run_cli(["checkpoints", "list", result["id"], "--json"], proj, home).stdout)["checkpoints"]
    prompts = {str(record["prompt"]).split(" ")[0]: record for record in records}
    assert set(prompts) == {"first", "second", "third"}
    ids = [json.loads(line) for line in transcript.read_text().splitlines()]
    user_ids = {str(entry["message"]["content"]).split(" ")[0]: entry["uuid"] for entry in ids
                if entry.get("type") == "user" and isinstance((entry.get("message") or {}).get("content"), str)}
    seen: dict[str, dict[str, str]] = {}
    for prompt in ("third", "second", "first"):
        _put_back(proj, final)  # as the turns left it (a hand edit to our store after an earlier rewind: --force)
        ours = run_cli(["rewind", result["id"], "--to", str(prompts[prompt]["number"]), "--mode", "code", "--yes", "--force"],
                       proj, home)
        assert ours.returncode == 0, ours.stderr
        by_us = _tree(proj)
        _put_back(proj, final)
        theirs = run_offline([str(npm_programs.claude), "--resume", transcript.stem, "--rewind-files",
                              user_ids[prompt]], cwd=proj, log=tmp_path / "rewind.jsonl", timeout=120,
                             env={"HOME": str(claude_home), "ANTHROPIC_BASE_URL": "{STUB}",
                                  "ANTHROPIC_API_KEY": "sk-ant-stub", "IS_SANDBOX": "1", "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1",
                                  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                                  "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}).check()
        assert "rewound" in theirs.completed.stdout.lower(), theirs.completed.stdout
        assert by_us == _tree(proj), prompt
        seen[prompt] = by_us
    assert seen["first"]["src/app.py"] == "v0\n" and "src/new.py" not in seen["first"]
    assert seen["second"]["src/app.py"] == "v1\n" and "src/new.py" not in seen["second"]
    assert seen["third"]["src/app.py"] == "v2\n" and seen["third"]["src/new.py"] == "new"
    assert seen["third"]["top.txt"] == "t0\n"
    assert not (proj / "src" / "src").exists()
