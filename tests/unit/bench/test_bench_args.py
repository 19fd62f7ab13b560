"""The command line the side-by-side benches share (`benches/bench_args.py`): what it parses, and
that a variant without `NAME=PATH` is one usage line, not a traceback, in each bench that uses it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from helpers.locations import REPO

BENCHES = REPO / "benches"


def _bench_args():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_args_under_test", BENCHES / "bench_args.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_variants_keep_their_order_and_the_counts_their_defaults() -> None:
    parse = _bench_args().parse_side_by_side
    options = parse("doc", variant="tree", variant_help="a python/ folder", count="turns", count_default=20,
                    argv=["--tree", "before=/tmp/old/python", "--tree", "after=python=x"])
    assert options.variants == [("before", "/tmp/old/python"), ("after", "python=x")]
    assert (options.count, options.rounds) == (20, 5)
    options = parse(None, variant="python", variant_help="an interpreter", count="commands", count_default=200,
                    argv=["--python", "a=/bin/python3", "--commands", "7", "--rounds", "2"])
    assert (options.variants, options.count, options.rounds) == ([("a", "/bin/python3")], 7, 2)


@pytest.mark.parametrize("argv, message", [
    (["--python", "before"], "--python takes NAME=PATH, not 'before'"),
    (["--python", "=/bin/python3"], "--python takes NAME=PATH, not '=/bin/python3'"),
    (["--python", "a=/x", "--python", "a=/y"], "--python: the name 'a' is given twice"),
    (["--python", "a=/x", "--rounds", "0"], "--rounds must be at least 1"),
    (["--python", "a=/x", "--commands", "-1"], "--commands must be at least 1"),
])
def test_a_bad_command_line_is_one_usage_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        _bench_args().parse_side_by_side("doc", variant="python", variant_help="an interpreter", count="commands",
                                         count_default=200, argv=argv)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {message}")


@pytest.mark.parametrize("bench, option", [("bench_bash_tool.py", "--python"), ("bench_headless_turns.py", "--tree")])
def test_each_bench_refuses_a_variant_without_a_path(bench: str, option: str) -> None:
    done = subprocess.run([sys.executable, str(BENCHES / bench), option, "before", "--rounds", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].endswith(f"error: {option} takes NAME=PATH, not 'before'")
