"""The suite's one conftest: it loads the shared fixtures (`tests/helpers/fixtures.py`) as a
plugin, so every test folder gets the same `home`, `workdir`, `project`, `umask_022` and
`cli_in_home` without importing them; and it orders the files for `--dist loadfile`.

The order: files that hold a `slow` test first (the crash lanes, the real-program and mutation
suites: minutes each), then the rest, each group in collection order. With `--dist loadfile` a
file is one unit of work, handed to whichever worker is free; xdist's own order (most tests
first) left the long few-test files for last, where one worker ran them alone while the other
had nothing left. Longest first leaves the short files to even out the end.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["helpers.fixtures", "helpers.workspace"]


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order made below
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: each file's tests keep their order
