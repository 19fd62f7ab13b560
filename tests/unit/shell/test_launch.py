"""`shell/launch.py`: which argv starts the shell, and the flags it takes."""

from __future__ import annotations

import pytest

from commandcode.errors import UsageError
from commandcode.shell.launch import parse_launch


def test_no_subcommand_and_no_p_is_a_shell_launch() -> None:
    launch = parse_launch([])
    assert launch is not None and launch.mode is None and launch.resume is None  # None: the settings' defaultMode
    launch = parse_launch(["-n", "x", "--no-session", "--model=offline", "--effort", "high", "--permission-mode", "plan"])
    assert launch is not None
    assert (launch.name, launch.no_session, launch.model, launch.effort, launch.mode) == ("x", True, "offline", "high", "plan")
    assert parse_launch(["--yolo"]).mode == "bypassPermissions"  # type: ignore[union-attr]
    assert parse_launch(["--dangerously-skip-permissions"]).yolo  # type: ignore[union-attr]


@pytest.mark.parametrize(("argv", "resume"), [(["-r"], ""), (["-r", "abc"], "abc"), (["--resume=abc"], "abc"),
                                              (["--sessions"], ""), (["--sessions", "n"], "n"), (["-r", "-c"], "")])
def test_resume_takes_an_optional_reference(argv: list[str], resume: str) -> None:
    launch = parse_launch(argv)
    assert launch is not None and launch.resume == resume


@pytest.mark.parametrize("argv", [["-p", "x"], ["sessions", "list"], ["--help"], ["--version"], ["-c", "sessions"],
                                  ["--unknown"], ["--yolo=1"], ["-n", "x", "-p", "y"]])
def test_everything_else_is_typers(argv: list[str]) -> None:
    assert parse_launch(argv) is None


def test_a_missing_value_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--model needs a value"):
        parse_launch(["--model"])


@pytest.mark.parametrize(("argv", "message"), [
    (["-r", "a", "-c"], "cannot be used together"), (["--session", "p", "-c"], "cannot be used together"),
    (["--fork-session"], "needs a session to fork"), (["--permission-mode", "x"], "unknown permission mode"),
    (["-c", "--fork-session", "--no-session"], "cannot be used together"), (["--effort", ""], "--effort is empty"),
])
def test_check_refuses_combinations(argv: list[str], message: str) -> None:
    launch = parse_launch(argv)
    assert launch is not None
    with pytest.raises(UsageError, match=message):
        launch.check()
