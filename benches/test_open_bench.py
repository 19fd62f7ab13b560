"""pytest-benchmark: in-process open-to-context, commandcode against plain Python loaders.

Run with `python -m pytest benches/test_open_bench.py --benchmark-only` (set
`COMMANDCODE_BENCH_SIZE`, default `20MB`). The same generated session is opened by
commandcode (cold: no index; warm: through its index sidecar), by the stdlib `json` loader and by the `orjson` loader of
`benches/py_full_load.py`, in one run, and every loader must agree on the leaf and the context
length (a bench that returned wrong answers fast would be worthless).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from commandcode import open_session
from commandcode.bench.generate import generate_session, parse_size

BENCHES = Path(__file__).resolve().parent
SIZE = os.environ.get("COMMANDCODE_BENCH_SIZE", "20MB")


def _load_baseline():
    spec = importlib.util.spec_from_file_location("py_full_load", BENCHES / "py_full_load.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["py_full_load"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_session(tmp_path_factory.mktemp("bench"), parse_size(SIZE), seed=7).path


@pytest.fixture(autouse=True)
def no_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "off")
    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "home"))  # sidecars of the warm test go here


def _baseline_open(path: Path, loads) -> tuple[str | None, int]:
    baseline = _load_baseline()
    _header, by_id, leaf, _skipped = baseline.load(str(path), loads)
    messages, _model, _effort = baseline.context(baseline.active_path(by_id, leaf))
    return (leaf or {}).get("id"), len(messages)


def _commandcode_open(path: Path) -> tuple[str | None, int]:
    context = open_session(path).context()
    return context.leaf_id, len(context.messages)


@pytest.mark.benchmark(group="open-to-context")
def test_commandcode_cold(benchmark, session_file: Path) -> None:
    leaf, count = benchmark(_commandcode_open, session_file)
    assert (leaf, count) == _baseline_open(session_file, json.loads)


@pytest.mark.benchmark(group="open-to-context")
def test_commandcode_warm(benchmark, session_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    expected = _commandcode_open(session_file)  # the first open writes the index sidecar
    assert open_session(session_file).index_source == "loaded"
    assert benchmark(_commandcode_open, session_file) == expected == _baseline_open(session_file, json.loads)


@pytest.mark.benchmark(group="open-to-context")
def test_python_json(benchmark, session_file: Path) -> None:
    leaf, count = benchmark(_baseline_open, session_file, json.loads)
    assert leaf is not None and count > 0


@pytest.mark.benchmark(group="open-to-context")
def test_python_orjson(benchmark, session_file: Path) -> None:
    orjson = pytest.importorskip("orjson")
    leaf, count = benchmark(_baseline_open, session_file, orjson.loads)
    assert leaf is not None and count > 0
