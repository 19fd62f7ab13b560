"""The 200-backup cap drops old checkpoints with a notice, never silently (issue 11, class 6):
once per turn on stderr in text mode, in the JSON result's `notices` with `--output-format json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from commandcode.checkpoints.retention import MAX_BACKUPS_PER_SESSION

FILES = 60  # four turns of 60 backups pass the cap of 200 in the fourth


def run(work: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COMMANDCODE_HOME": str(data), "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def turn(work: Path, data: Path, number: int, *extra: str) -> subprocess.CompletedProcess[str]:
    calls = "\n".join(f'call write_file {{"file_path":"f{n:02d}.txt","content":"turn {number} {n}"}}' for n in range(FILES))
    flags = ["-c"] if number > 1 else []
    done = run(work, data, *flags, "-p", calls, *extra)
    assert done.returncode == 0, done.stderr
    return done


def cap_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if f"at most {MAX_BACKUPS_PER_SESSION} backups" in line]


def test_the_backup_cap_says_which_checkpoints_it_dropped(tmp_path: Path) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    for n in range(FILES):
        (work / f"f{n:02d}.txt").write_text(f"original {n}")
    for number in (1, 2, 3):
        assert cap_lines(turn(work, data, number).stderr) == [], f"turn {number} is under the cap"
    lines = cap_lines(turn(work, data, 4).stderr)
    assert len(lines) == 1, "once per turn, not once per backup"
    assert lines[0].startswith("warning: ") and "dropped the oldest checkpoint (1)" in lines[0], lines
    assert "can no longer be rewound" in lines[0]

    done = turn(work, data, 5, "--output-format", "json")
    result = json.loads(done.stdout)
    (notice,) = result["notices"]
    assert "dropped the oldest checkpoint (2)" in notice, notice
    assert result["is_error"] is False

    (checkpoints,) = data.glob("projects/*/*.checkpoints.jsonl")
    numbers = [json.loads(line)["turnNumber"] if "turnNumber" in line else None
               for line in checkpoints.read_text().splitlines() if line.strip()]
    assert len(numbers) == 3, numbers


def test_a_turn_under_the_cap_has_no_notices_key(tmp_path: Path) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    (work / "f00.txt").write_text("x")
    done = run(work, data, "-p", 'call write_file {"file_path":"f00.txt","content":"y"}', "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert "notices" not in json.loads(done.stdout)
