"""A `-p` run says what happened to the session on its way: an automatic compaction before the
turn is one `warning:` line on stderr, in every output format (stdout stays the reply or JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_ok


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_an_automatic_compaction_is_one_warning_line(home: Path, workdir: Path, output_format: str) -> None:
    first = json.loads(run_ok(["-p", "start", "--output-format", "json"], workdir, home).stdout)
    for number in range(4):  # long prompts: about 1,000 tokens each
        run_ok(["-p", f"turn {number} " + "words " * 700, "-r", first["session_id"]], workdir, home)
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text(json.dumps({"contextWindow": 5000}))
    completed = run_cli(["-p", "go on", "-r", first["session_id"], "--output-format", output_format], workdir, home)
    assert completed.returncode == 0, completed.stderr
    notices = [line for line in completed.stderr.splitlines() if "context was over 90%" in line]
    assert len(notices) == 1 and notices[0].startswith("warning: "), completed.stderr
    if output_format == "json":
        assert json.loads(completed.stdout)["is_error"] is False
    if output_format == "stream-json":
        assert all(json.loads(line) for line in completed.stdout.splitlines() if line.strip())
