"""The fields of a JSON document, for the mutation tests that change one field at a time
(`test_journal_mutations.py`, `test_sidecar_mutations.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def fields_of(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """The path of every field of `value` at every depth (object keys and list positions), the
    document itself (`()`) first."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from fields_of(item, (*prefix, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from fields_of(item, (*prefix, position))
