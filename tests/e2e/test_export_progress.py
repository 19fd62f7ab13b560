"""A big export on a terminal draws a progress bar (on stderr, gone when it ends); piped, it
prints only its one result line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from helpers.cli import cli_env, run_ok

pytestmark = pytest.mark.terminal


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    subprocess.run([sys.executable, "-m", "commandcode.bench.generate", "--out", str(folder), "--size", "30MB",
                    "--seed", "3"], check=True, stdout=subprocess.DEVNULL)
    return next(folder.glob("*.jsonl"))


def test_a_terminal_gets_a_progress_bar(big_session: Path, home: Path, tmp_path: Path) -> None:
    env = {**cli_env(home), "COLUMNS": "100", "LINES": "30", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(sys.executable, ["-m", "commandcode", "export", str(big_session), "--full", "-o",
                                           str(tmp_path / "big.md")], env=env, cwd=str(tmp_path), timeout=600,
                          dimensions=(30, 100), encoding="utf-8")
    child.expect("exporting")
    child.expect(r"\d+%")
    child.expect("exported md to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "big.md").read_text(encoding="utf-8").endswith("_Exported from Command Code_\n")


def test_piped_output_has_no_bar(big_session: Path, home: Path, tmp_path: Path) -> None:
    completed = run_ok(["export", str(big_session), "--full", "-o", str(tmp_path / "big.md")], tmp_path, home)
    assert "exporting" not in completed.stderr and "%" not in completed.stderr
    assert completed.stdout.startswith("exported md to ") and os.path.getsize(tmp_path / "big.md") > 1_000_000
