"""`problems` is a declared, typed attribute of the one error hierarchy (`commandcode.errors`):
every class takes it as a constructor argument and has it (empty unless given), and the native
extension builds its refused-restore errors through that same constructor, not by patching an
attribute onto an instance afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode import _native, errors

CLASSES = [getattr(errors, name) for name in errors.__all__]


def test_the_attribute_is_declared_on_the_base_class() -> None:
    assert errors.CommandcodeError.__annotations__["problems"] == "list[tuple[str, str, str]]"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_class_has_problems_empty_unless_given(cls: type[errors.CommandcodeError]) -> None:
    first, second = cls("one"), cls("two")
    assert first.problems == [] and second.problems == []
    first.problems.append(("a", "b", "c"))
    assert second.problems == [] and cls("three").problems == []  # not one list shared by the class
    rows = [("/p/a.txt", "object_missing", "a.txt: backup missing")]
    given = cls("four", problems=rows, hint="do this")
    assert given.problems == rows and given.problems is not rows
    assert (str(given), given.hint) == ("four", "do this")


def _store_and_folder(tmp_path: Path) -> tuple[_native.ObjectStore, Path]:
    folder = tmp_path / "project"
    folder.mkdir()
    return _native.ObjectStore(tmp_path / "store"), folder


@pytest.mark.parametrize("case", ["integrity", "changed_outside", "mixed"])
def test_native_refusals_carry_typed_problems(tmp_path: Path, case: str) -> None:
    store, folder = _store_and_folder(tmp_path)
    missing = _native.RestoreItem(folder / "missing.txt", digest=_native.content_id(b"never stored"))
    (folder / "edited.txt").write_bytes(b"edited by hand")
    edited = _native.RestoreItem(folder / "edited.txt", digest=store.put_bytes(b"older")[0],
                                 expected=_native.content_id(b"what the tool wrote"))
    items, expected_class = {
        "integrity": ([missing], errors.BackupIntegrityError),
        "changed_outside": ([edited], errors.ChangedOutsideError),
        "mixed": ([missing, edited], errors.RestoreError),
    }[case]
    with pytest.raises(errors.CommandcodeError) as raised:
        _native.prepare_restore(store, items, tmp_path / "journal", confine_to=folder).commit(store)
    error = raised.value
    assert type(error) is expected_class
    assert isinstance(error.problems, list) and len(error.problems) == len(items)
    for row in error.problems:
        assert isinstance(row, tuple) and len(row) == 3 and all(isinstance(part, str) for part in row)
    assert sorted(Path(path).name for path, _, _ in error.problems) == sorted(item.target.name for item in items)
    assert (folder / "edited.txt").read_bytes() == b"edited by hand" and not (folder / "missing.txt").exists()
