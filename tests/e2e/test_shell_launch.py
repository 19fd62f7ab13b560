"""Launching the shell with bad input: not a terminal, flag combinations that make no sense,
references that name nothing. One `error:` line and a `hint:` line each, the right exit code, and
no session touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import assert_error_lines, only_transcript, read_meta_file, run_cli, run_ok, snapshot, transcripts
from helpers.terminal import ShellSession


def test_not_a_terminal_says_to_use_p(home: Path, workdir: Path) -> None:
    for args in ([], ["-n", "x"], ["-c"]):
        completed = run_cli(args, workdir, home)
        line = assert_error_lines(completed, error_contains="the interactive shell needs a terminal", exit_code=2)
        assert "-p" in completed.stderr.splitlines()[1], line
    assert not home.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["-r", "abc", "-c"], "-r/--resume and -c/--continue cannot be used together"),
    (["--session", "x", "-r", "y"], "-r/--resume and --session cannot be used together"),
    (["--sessions", "x", "--continue"], "-r/--resume and -c/--continue cannot be used together"),
    (["--fork-session"], "--fork-session needs a session to fork"),
    (["-c", "--fork-session", "--no-session"], "--fork-session and --no-session cannot be used together"),
    (["--permission-mode", "sometimes"], "unknown permission mode 'sometimes'"),
    (["--yolo", "--permission-mode", "plan"], "--yolo and --permission-mode plan cannot be used together"),
    (["-n"], "-n needs a value"),
    (["--name", "  "], "--name is empty"),
])
def test_bad_flag_combinations_are_one_line_and_exit_2(home: Path, workdir: Path, args: list[str], message: str) -> None:
    assert_error_lines(run_cli(args, workdir, home), error_contains=message, exit_code=2)


def test_an_unknown_flag_is_typers_usage_error(home: Path, workdir: Path) -> None:
    assert_error_lines(run_cli(["--no-such-flag"], workdir, home), error_contains="No such option", exit_code=2)


def test_help_and_version_are_not_the_shell(home: Path, workdir: Path) -> None:
    assert "Usage" in run_ok(["--help"], workdir, home).stdout
    assert run_ok(["--version"], workdir, home).stdout.startswith("commandcode ")


@pytest.mark.terminal
@pytest.mark.parametrize(("args", "message", "code"), [
    (["-r", "no-such-session"], "no session matches 'no-such-session'", 1),
    (["-c"], "no session to continue in this directory", 1),
    (["--model", "nope"], "unknown model 'nope'", 2),
])
def test_a_reference_or_model_that_names_nothing_refuses_in_a_terminal(home: Path, workdir: Path, args: list[str],
                                                                       message: str, code: int) -> None:
    shell = ShellSession(workdir, home, args)
    shell.wait_screen(message)
    shell.wait_screen("hint: ")  # the next line: it may come in a later read
    assert shell.wait_exit() == code


@pytest.mark.terminal
def test_a_taken_launch_name_refuses_the_launch(home: Path, workdir: Path) -> None:
    run_ok(["-p", "first", "-n", "Taken"], workdir, home)
    before = snapshot(home)
    shell = ShellSession(workdir, home, ["-n", " taken "])
    shell.wait_screen("error: the name 'taken' is taken by session")
    assert shell.wait_exit() == 1
    assert {key: value for key, value in snapshot(home).items() if "locks" not in key} == \
        {key: value for key, value in before.items() if "locks" not in key}


@pytest.mark.terminal
def test_fork_session_starts_in_a_fork_and_leaves_the_source_untouched(home: Path, workdir: Path) -> None:
    run_ok(["-p", "source"], workdir, home)
    transcript = only_transcript(home, workdir)
    source = transcript.read_bytes()
    shell = ShellSession(workdir, home, ["-c", "--fork-session"])
    shell.wait_prompt()
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert transcript.read_bytes() == source
    forks = [path for path in transcripts(home, workdir) if path != transcript]
    assert len(forks) == 1, forks
    assert read_meta_file(forks[0])["parentSessionId"] == transcript.stem
    assert [line for line in forks[0].read_bytes().splitlines()[1:]] == source.splitlines()[1:]  # the body, byte for byte
