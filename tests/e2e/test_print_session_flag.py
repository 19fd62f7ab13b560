"""`-p` with `--session PATH|PREFIX` and `--fork-session` (issue 25; refused as unknown options on
55fdfa8): a unique prefix resumes, an ambiguous one lists the candidates, a transcript outside the
project is appended where it is, `--fork-session` runs in a fork and leaves the source as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from commandcode.config.paths import project_dir
from helpers.cli import run_cli
from helpers.session_files import write_session

ONE, TWO = "abcd1111-0000-4000-8000-000000000001", "abcd2222-0000-4000-8000-000000000002"


def _run(args: list[str], workdir: Path, home: Path) -> dict[str, object]:
    done = run_cli(["-p", "hello", "--output-format", "json", *args], workdir, home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_print_takes_session_and_fork_session(home: Path, workdir: Path, tmp_path: Path) -> None:
    one = write_session(workdir, ONE, ["first"])
    write_session(workdir, TWO, ["second"])
    assert _run(["--session", "abcd1"], workdir, home)["session_id"] == ONE
    assert one.read_text().count("hello") == 2  # the prompt and the offline reply quoting it

    ambiguous = run_cli(["-p", "hello", "--session", "abcd"], workdir, home)
    assert ambiguous.returncode != 0 and ONE in ambiguous.stderr and TWO in ambiguous.stderr
    assert "Traceback" not in ambiguous.stderr

    outside = tmp_path / "elsewhere" / "kept.jsonl"
    outside.parent.mkdir()
    shutil.copyfile(project_dir(workdir) / f"{TWO}.jsonl", outside)
    before = sorted(path.name for path in project_dir(workdir).iterdir())
    _run(["--session", str(outside)], workdir, home)
    assert outside.read_text().count("hello") == 2  # appended where it is
    assert sorted(path.name for path in project_dir(workdir).iterdir()) == before

    source = one.read_bytes()
    forked = _run(["--session", "abcd1", "--fork-session"], workdir, home)["session_id"]
    assert forked not in (ONE, TWO) and one.read_bytes() == source
    assert (project_dir(workdir) / f"{forked}.jsonl").read_text().count("hello") == 4  # the source's turn and its own

    both = run_cli(["-p", "hello", "-c", "--session", "abcd1"], workdir, home)
    assert both.returncode == 2 and "cannot be used together" in both.stderr
    alone = run_cli(["-p", "hello", "--fork-session"], workdir, home)
    assert alone.returncode == 2 and "--fork-session needs a session to fork" in alone.stderr
    shown = run_cli(["--help"], workdir, home)
    assert "--session" in shown.stdout and "--fork-session" in shown.stdout
