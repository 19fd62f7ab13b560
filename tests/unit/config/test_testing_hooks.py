"""Every test hook is listed in one place (`config/testing_hooks.py`): no `COMMANDCODE_TEST_*` name
in `python/` or `tests/` is missing from its lists, each listed hook is still named by the module
it says acts on it, and the environment hooks read as documented."""

from __future__ import annotations

import re

import pytest

from commandcode.config import testing_hooks
from helpers.locations import REPO, TESTS

PACKAGE = REPO / "python" / "commandcode"
HOOK_NAME = re.compile(r"COMMANDCODE_TEST_[A-Z0-9_]*[A-Z0-9]")


def _names_in(folder: object, *, skip: object = None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*.py")):  # type: ignore[attr-defined]
        if path == skip:
            continue
        for name in HOOK_NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(str(path.relative_to(REPO)))
    return found


def test_every_test_hook_the_product_names_is_listed() -> None:
    found = _names_in(PACKAGE, skip=PACKAGE / "config" / "testing_hooks.py")
    assert found, "the scan finds nothing: it would pass by not seeing"
    unlisted = {name: where for name, where in found.items() if name not in testing_hooks.HOOKS}
    assert unlisted == {}, "add these to HOOKS in config/testing_hooks.py (and say what they do there)"


def test_every_test_hook_the_tests_set_is_listed() -> None:
    found = _names_in(TESTS)
    known = set(testing_hooks.HOOKS) | set(testing_hooks.TESTS_OWN)
    assert {name: where for name, where in found.items() if name not in known} == {}
    read_by_product = _names_in(PACKAGE, skip=PACKAGE / "config" / "testing_hooks.py")
    assert not set(testing_hooks.TESTS_OWN) & set(read_by_product), "a product module reads a tests' own hook"


@pytest.mark.parametrize("hook, module", sorted(testing_hooks.HOOKS.items()))
def test_each_listed_hook_is_documented_and_still_where_it_says(hook: str, module: str) -> None:
    assert f"`{hook}`" in (testing_hooks.__doc__ or ""), f"{hook} is not described in the module's docstring"
    assert hook in (PACKAGE / module).read_text(encoding="utf-8"), f"{module} no longer names {hook}: update HOOKS"


def test_the_environment_hooks_read_whole_numbers_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(testing_hooks.STEP_DELAY_MS, raising=False)
    monkeypatch.delenv(testing_hooks.GUARD_DELAY_MS, raising=False)
    assert testing_hooks.rewind_faults() is None and testing_hooks.guard_delay_ms() is None
    monkeypatch.setenv(testing_hooks.STEP_DELAY_MS, " 25 ")
    monkeypatch.setenv(testing_hooks.GUARD_DELAY_MS, "60000")
    assert testing_hooks.rewind_faults() == {"step_delay_ms": 25} and testing_hooks.guard_delay_ms() == 60000
    for junk in ("", "-5", "1.5", "soon"):
        monkeypatch.setenv(testing_hooks.STEP_DELAY_MS, junk)
        monkeypatch.setenv(testing_hooks.GUARD_DELAY_MS, junk)
        assert testing_hooks.rewind_faults() is None and testing_hooks.guard_delay_ms() is None
