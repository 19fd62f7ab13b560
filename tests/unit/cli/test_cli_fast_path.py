"""The CLI's argv fast path: which command lines it takes, that it prints exactly what the typer
path prints (stdout, stderr, exit code) for each of them, that it cannot drift from the typer
declarations, and that it does not import typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.cli.fast_path import FAST_COMMANDS, parse_fast, run_fast
from helpers.cli import cli_env, only_transcript, run_cli, run_ok  # noqa: F401 (fixtures)


@pytest.mark.parametrize(("argv", "expected"), [
    (["sessions", "context", "abc"], ("sessions_show:context_view", {"ref": "abc"})),
    (["sessions", "context", "abc", "--stats"], ("sessions_show:context_view", {"ref": "abc", "stats": True})),
    (["sessions", "context", "--json", "abc", "--stats", "--json"],
     ("sessions_show:context_view", {"ref": "abc", "as_json": True, "stats": True})),
    (["sessions", "show", "my name"], ("sessions_show:show_view", {"ref": "my name"})),
    (["sessions", "show", ""], ("sessions_show:show_view", {"ref": ""})),
    (["sessions", "list"], ("sessions_list:list_view", {})),
    (["sessions", "list", "--all-projects", "--all", "--json"],
     ("sessions_list:list_view", {"all_projects": True, "all_sessions": True, "as_json": True})),
    (["sessions", "list", "--limit", "20", "--json", "--branch", "main"],
     ("sessions_list:list_view", {"limit": 20, "as_json": True, "branch": "main"})),
    (["sessions", "search", "needle", "--deep"], ("sessions_list:search_view", {"query": "needle", "deep": True})),
])
def test_exact_command_lines_take_the_fast_path(argv: list[str], expected: tuple[str, dict[str, object]]) -> None:
    assert parse_fast(argv) == expected


@pytest.mark.parametrize("argv", [
    [], ["--version"], ["-p", "hi"], ["sessions"], ["sessions", "tree", "abc"],
    ["sessions", "context"],                         # missing argument: typer's usage error
    ["sessions", "context", "a", "b"],               # extra argument
    ["sessions", "context", "abc", "--help"], ["sessions", "list", "-h"],
    ["sessions", "context", "abc", "--stat"],        # misspelt option: typer suggests
    ["sessions", "context", "--json=1", "abc"], ["sessions", "context", "--", "-abc"],
    ["sessions", "context", "-abc"], ["sessions", "show", "-"],
    ["sessions", "list", "extra"], ["--model", "offline", "sessions", "list"],
    ["sessions", "list", "--limit"], ["sessions", "list", "--limit", "0"], ["sessions", "list", "--limit", "x"],
    ["sessions", "list", "--limit=3"], ["sessions", "list", "--branch", "--json"],
])
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert parse_fast(argv) is None


def test_the_fast_path_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_FAST_PATH", "off")
    assert run_fast(["sessions", "list"]) is False


def test_each_fast_command_matches_its_typer_declaration() -> None:
    """Same command words, same positional arguments, same boolean flags bound to the same
    parameters, nothing else: an option renamed, added or turned into a value option on the
    typer side fails here rather than making the two paths disagree. The one value option,
    `--source` (other agents' sessions), is left to typer: the fast path declines any argv
    that names it."""
    from importlib import import_module

    import typer.main

    from commandcode.cli import app

    root = typer.main.get_command(app)
    for words, (view_name, positional_names, flags, values) in FAST_COMMANDS.items():
        command = root
        for word in words:
            command = command.commands[word]  # type: ignore[attr-defined]
        arguments = [param for param in command.params if param.param_type_name == "argument"]
        options = [param for param in command.params if param.param_type_name == "option" and param.name != "source"]
        # the footprint covers our own sessions only; a fork or clone copies one of ours
        with_source = words not in {("sessions", "du"), ("sessions", "fork"), ("sessions", "clone")}
        assert [param.opts for param in command.params if param.name == "source"] == ([["--source"]] if with_source else []), words
        assert parse_fast([*words, *(["REF"] * len(positional_names)), "--source", "claude"]) is None, words
        if words[-1] in ("fork", "clone"):
            assert parse_fast([*words, "REF"]) is not None, words  # on the fast path: no typer import
        assert tuple(param.name for param in arguments) == positional_names, words
        assert all(param.required and param.nargs == 1 for param in arguments), words
        flag_options = [param for param in options if param.is_flag]
        value_options = [param for param in options if not param.is_flag]
        declared = {opt: param.name for param in flag_options for opt in param.opts + param.secondary_opts}
        assert declared == flags, words
        assert all(not param.secondary_opts and param.default is False for param in flag_options), words
        declared_values = {opt: (param.name, "int" if param.type.name.startswith("int") else "str")
                           for param in value_options for opt in param.opts + param.secondary_opts}
        assert declared_values == values, words
        assert all(param.default is None and not param.multiple for param in value_options), words
        assert all(getattr(param.type, "min", None) == 1 for param in value_options if param.type.name.startswith("int")), words
        module, function = view_name.split(":")
        view = getattr(import_module(f"commandcode.cli.{module}"), function)
        parameters = view.__wrapped__.__code__.co_varnames[:view.__wrapped__.__code__.co_argcount]
        assert set(positional_names) | set(flags.values()) | {name for name, _ in values.values()} | \
            ({"source"} if with_source else set()) == set(parameters), words


def _both_paths(args: list[str], cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    fast = run_cli(args, cwd, data)
    slow = run_cli(args, cwd, data, COMMANDCODE_FAST_PATH="off")
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr), args
    return fast


def test_fast_and_typer_paths_print_the_same(home: Path, workdir: Path) -> None:  # noqa: F811
    run_ok(["-p", "hello there", "-n", "first"], workdir, home)
    transcript = only_transcript(home, workdir)
    session_id = transcript.stem
    run_ok(["-p", "again", "-n", "second"], workdir, home)
    broken = transcript.with_name("0b0b0b0b-0000-4000-8000-000000000000.jsonl")
    broken.write_bytes(transcript.read_bytes() + b'{"type":"message", torn\n')
    sidecar = transcript.with_name(f"{session_id}.checkpoints.jsonl")
    if not sidecar.exists():
        sidecar.write_bytes(b"")

    outcomes = {}
    for args in (["sessions", "context", session_id, "--stats", "--json"], ["sessions", "context", session_id, "--json"],
                 ["sessions", "context", session_id], ["sessions", "context", str(transcript), "--stats"],
                 ["sessions", "context", "first"], ["sessions", "context", session_id[:6]],
                 ["sessions", "show", str(broken)], ["sessions", "show", str(broken), "--json"],
                 ["sessions", "context", str(broken)],
                 ["sessions", "list"], ["sessions", "list", "--all"], ["sessions", "list", "--all", "--json"],
                 ["sessions", "list", "--all-projects", "--all"],
                 ["sessions", "context", "no-such-session"], ["sessions", "show", ""],
                 ["sessions", "context", str(sidecar)]):
        outcomes[tuple(args)] = _both_paths(args, workdir, home)

    assert outcomes[("sessions", "context", session_id, "--stats", "--json")].stdout.startswith('{"leaf": ')
    assert "first" in outcomes[("sessions", "list", "--all")].stdout
    assert "skipped 1 unreadable line" in outcomes[("sessions", "context", str(broken))].stderr
    missing = outcomes[("sessions", "context", "no-such-session")]
    assert missing.returncode == 1 and missing.stderr.startswith("error: no session matches 'no-such-session'")
    assert "sidecar, not a transcript" in outcomes[("sessions", "context", str(sidecar))].stderr
    assert outcomes[("sessions", "show", "")].stderr.startswith("error: empty session reference")


def test_a_sidecar_path_is_refused_on_the_fast_path(home: Path, workdir: Path) -> None:  # noqa: F811
    run_ok(["-p", "hello"], workdir, home)
    transcript = only_transcript(home, workdir)
    backup = transcript.with_name(f"{transcript.stem}.v2.bak.jsonl")
    backup.write_bytes(transcript.read_bytes())
    completed = _both_paths(["sessions", "context", str(backup), "--stats"], workdir, home)
    assert completed.returncode == 1 and "is a session sidecar, not a transcript" in completed.stderr


def test_the_fast_path_imports_neither_typer_nor_json(home: Path, workdir: Path) -> None:  # noqa: F811
    run_ok(["-p", "hello"], workdir, home)
    transcript = only_transcript(home, workdir)
    probe = ("import sys; from commandcode.cli import run; code = run(sys.argv[1:]); "
             "sys.stdout.flush(); sys.stderr.write(' '.join(sorted(sys.modules))); sys.exit(code)")
    for args in (["sessions", "context", str(transcript), "--stats", "--json"], ["sessions", "context", transcript.stem, "--json"]):
        completed = subprocess.run([sys.executable, "-c", probe, *args], cwd=workdir, env=cli_env(home),
                                   capture_output=True, text=True, check=True)
        loaded = set(completed.stderr.split())
        assert '"leaf"' in completed.stdout
        assert loaded & {"typer", "click", "rich", "pathlib", "typing", "dataclasses", "json", "re", "enum",
                          "commandcode.catalog"} == set(), args
    slow = subprocess.run([sys.executable, "-c", probe, "sessions", "list"], cwd=workdir,
                          env=cli_env(home, COMMANDCODE_FAST_PATH="off"), capture_output=True, text=True, check=True)
    assert "typer" in slow.stderr.split(), "COMMANDCODE_FAST_PATH=off must route through typer (the comparison relies on it)"


def test_a_fork_answers_in_two_plain_lines_without_rich(home: Path, workdir: Path) -> None:  # noqa: F811
    run_ok(["-p", "hello"], workdir, home)
    source = only_transcript(home, workdir).stem
    probe = ("import sys; from commandcode.cli import run; code = run(sys.argv[1:]); "
             "sys.stdout.flush(); sys.stderr.write(' '.join(sorted(sys.modules))); sys.exit(code)")
    completed = subprocess.run([sys.executable, "-c", probe, "sessions", "fork", source], cwd=workdir,
                               env=cli_env(home), capture_output=True, text=True, check=True)
    first, path = completed.stdout.splitlines()
    assert first.startswith(f"forked {source} into ") and Path(path).is_file()
    assert Path(path).stem == first.rsplit(" ", 1)[1]
    assert "rich" not in completed.stderr.split() and "typer" not in completed.stderr.split()


def _imports(stderr: str) -> list[tuple[str, bool]]:
    """(module name, imported at top level) in completion order, from `PYTHONPROFILEIMPORTTIME`."""
    found = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1]
            if name.strip() and not name.strip().startswith("package"):
                found.append((name.strip(), not name[1:].startswith(" ")))
    return found


def test_the_installed_command_imports_nothing_before_commandcode(home: Path, workdir: Path) -> None:  # noqa: F811
    """The `commandcode` script is our own two-line launcher, not pip's console-script one
    (which imports `re` first: about 10 ms, as much as a warm open of a 1 GB session)."""
    launcher = Path(sys.executable).parent / "commandcode"
    assert launcher.is_file(), f"commandcode is not installed beside {sys.executable}"
    run_ok(["-p", "hello"], workdir, home)
    transcript = only_transcript(home, workdir)
    env = cli_env(home, PYTHONPROFILEIMPORTTIME="1")
    startup = {name for name, _ in _imports(subprocess.run([sys.executable, "-c", "pass"], env=env,
                                                           capture_output=True, text=True, check=True).stderr)}
    completed = subprocess.run([str(launcher), "sessions", "context", str(transcript), "--stats", "--json"], cwd=workdir, env=env,
                               capture_output=True, text=True, check=True)
    assert '"leaf"' in completed.stdout
    imported = _imports(completed.stderr)
    ours = next(index for index, (name, _) in enumerate(imported) if name.startswith("commandcode"))
    before_us = {name for name, top_level in imported[:ours] if top_level}
    assert before_us <= startup, before_us - startup
