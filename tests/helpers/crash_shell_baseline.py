"""The shell lane's baseline checks for the crash harness (`helpers.crash_harness`).

Every `-p` process of the shell lane loads the session's `<sid>.shell-baseline.json` at its turn
and writes it back from the tracker's background pass and at exit, so kills land in those
writes too. After every point:

- the sidecar is absent or whole: valid JSON of version 1 for the lane's project (an atomic
  replace never leaves a torn file, and a temp left by a kill is not the sidecar);
- every object it calls stored (`1`) is in the store and verifies: the baseline never names an
  object that was not durably written before the sidecar that names it.
"""

from __future__ import annotations

import json
from typing import Any

SUFFIX = ".shell-baseline.json"


def check(workspace: Any, violations: list[str], label: str) -> None:
    from commandcode import _native

    objects = workspace.data / "objects"
    for sidecar in sorted((workspace.data / "projects").glob(f"*/*{SUFFIX}")):
        try:
            document = json.loads(sidecar.read_bytes())
        except ValueError as error:
            violations.append(f"{label}: {sidecar.name} is not whole JSON: {error}")
            continue
        if document.get("version") != 1 or document.get("cwd") != str(workspace.project):
            violations.append(f"{label}: {sidecar.name} has version {document.get('version')!r}, cwd {document.get('cwd')!r}")
            continue
        store = _native.ObjectStore(str(objects)) if objects.is_dir() else None
        for name, row in document["files"].items():
            if not row[5]:
                continue
            if store is None or not store.contains(row[4]):
                violations.append(f"{label}: {sidecar.name} names {name}'s object {row[4][:12]}, missing from the store")
                continue
            try:
                store.verify(row[4])
            except Exception as error:  # a torn or wrong object
                violations.append(f"{label}: {sidecar.name} names {name}'s object {row[4][:12]}, which fails: {error}")
