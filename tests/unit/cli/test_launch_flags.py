"""The launch flags are declared once (`launcher/flags.py`) and every parser takes them all: the
shell's launch parser, typer's root options and typer's fall back into the shell (which on
55fdfa8 dropped `--effort`, `--permission-mode` and `--yolo`: a `commandcode --output-format text
--yolo` started a shell that asked before every tool call)."""

from __future__ import annotations

from typing import Any

import pytest

from commandcode.cli.typer_app import run_app
from commandcode.launcher.flags import LAUNCH_FLAGS
from commandcode.shell import start
from commandcode.shell.launch import parse_launch


def _fallback_launch(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Any:
    """The launch typer hands the shell for argv (`--output-format` keeps the argv from the
    typer-free parser, as any flag that parser leaves to typer does)."""
    seen: list[Any] = []
    monkeypatch.setattr(start, "run_shell", lambda launch: seen.append(launch) or 0)
    assert parse_launch(["--output-format", "text", *argv]) is None  # so typer takes it
    assert run_app(["--output-format", "text", *argv]) == 0
    assert len(seen) == 1
    return seen[0]


def test_typers_fallback_keeps_effort(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fallback_launch(monkeypatch, ["--effort", "high"]).effort == "high"


def test_typers_fallback_keeps_the_permission_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    launch = _fallback_launch(monkeypatch, ["--permission-mode", "plan"])
    assert (launch.permission_mode, launch.mode) == ("plan", "plan")


@pytest.mark.parametrize("flag", ["--yolo", "--dangerously-skip-permissions"])
def test_typers_fallback_keeps_yolo(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    launch = _fallback_launch(monkeypatch, [flag])
    assert launch.yolo and launch.mode == "bypassPermissions"


def test_typers_fallback_keeps_every_shell_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """One value for every shell flag of the table: the launch typer makes has them all, as the
    shell's own parser does."""
    argv: list[str] = []
    expected: dict[str, object] = {}
    for flag in LAUNCH_FLAGS:
        if not flag.shell or flag.attribute in ("continue_last", "session", "fork_session", "yolo"):
            continue  # one way to choose the session (-r), and --permission-mode given a value instead of --yolo
        if flag.kind == "switch":
            argv.append(flag.names[-1])
            expected[flag.attribute] = True
        else:
            value = "plan" if flag.attribute == "permission_mode" else f"v-{flag.attribute}"
            argv += [flag.names[-1], value]
            expected[flag.attribute] = value
    launch = _fallback_launch(monkeypatch, argv)
    own = parse_launch(argv)
    assert own is not None
    assert {name: getattr(launch, name) for name in expected} == expected
    assert {name: getattr(own, name) for name in expected} == expected


def test_typers_root_options_are_the_table() -> None:
    """Typer's root options are generated from the table: the same names, nothing more."""
    import typer.main

    from commandcode.cli.typer_app import app

    root = typer.main.get_command(app)
    options = {param.name: tuple(param.opts + param.secondary_opts) for param in root.params}
    assert options == {flag.attribute: flag.names for flag in LAUNCH_FLAGS}
