"""Headless `-p` permission rules through the real CLI: bash and outside paths need an allow
rule, `--permission-mode bypassPermissions`, `--yolo` or `--dangerously-skip-permissions`; a
refusal is a tool error the model sees and the turn goes on; bad flag combinations exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import assert_error_lines, only_transcript, run_cli, run_json, transcripts

BASH = 'call bash {"command": "echo ran > proof.txt"}'


def test_bash_is_refused_headless_and_the_turn_goes_on(home: Path, workdir: Path) -> None:
    result = run_json(["-p", BASH + '\ncall write_file {"file_path": "inside.txt", "content": "x"}',
                       "--output-format", "json"], workdir, home)
    assert result["is_error"] is False and result["tool_calls"] == 2
    assert "- bash: Error: permission needed: bash: echo ran > proof.txt was not run" in result["result"]
    assert not (workdir / "proof.txt").exists() and (workdir / "inside.txt").read_text() == "x"
    assert "--permission-mode bypassPermissions" in only_transcript(home, workdir).read_text()


@pytest.mark.parametrize("flags", [["--yolo"], ["--dangerously-skip-permissions"],
                                   ["--permission-mode", "bypassPermissions"]])
def test_each_bypass_flag_runs_bash(home: Path, workdir: Path, flags: list[str]) -> None:
    completed = run_cli(["-p", BASH, *flags], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert (workdir / "proof.txt").read_text() == "ran\n"


def test_an_allow_rule_in_the_project_settings_runs_bash(home: Path, workdir: Path) -> None:
    (workdir / ".commandcode").mkdir()
    (workdir / ".commandcode" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}))
    assert run_cli(["-p", BASH], workdir, home).returncode == 0
    assert (workdir / "proof.txt").read_text() == "ran\n"
    second = run_json(["-p", 'call bash {"command": "echo a && touch b"}', "--output-format", "json"], workdir, home)
    assert '"Bash(touch b)"' in second["result"] and not (workdir / "b").exists()  # one rule per part


def test_plan_mode_and_bad_flag_combinations(home: Path, workdir: Path) -> None:
    planned = run_json(["-p", 'call write_file {"file_path": "a.txt", "content": "x"}', "--permission-mode", "plan",
                        "--output-format", "json"], workdir, home)
    assert "plan mode" in planned["result"] and not (workdir / "a.txt").exists()
    assert_error_lines(run_cli(["-p", "hi", "--yolo", "--permission-mode", "plan"], workdir, home),
                       error_contains="--yolo means --permission-mode bypassPermissions", exit_code=2)
    assert_error_lines(run_cli(["-p", "hi", "--permission-mode", "sudo"], workdir, home),
                       error_contains="unknown permission mode 'sudo'", exit_code=2)
    assert len(transcripts(home)) == 1  # only the plan-mode run wrote a session


def test_a_malformed_settings_file_is_one_line_and_nothing_is_lost(home: Path, workdir: Path) -> None:
    (workdir / ".commandcode").mkdir()
    bad = workdir / ".commandcode" / "settings.json"
    bad.write_text('{"permissions": {"allow": [}}')
    completed = run_cli(["-p", "hi"], workdir, home)
    assert_error_lines(completed, error_contains="settings.json:1:", exit_code=1)
    assert bad.read_text() == '{"permissions": {"allow": [}}'
