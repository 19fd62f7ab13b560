"""`/share gist [html|md|jsonl]`: the session as a secret GitHub gist, through the `gh` CLI.

The document is rendered as an export would be (secrets redacted and paths sanitized; a jsonl
gist is redacted too, since it leaves the machine) and given to `gh gist create` on stdin;
`gh` prints the gist's URL. Without `gh`, or with `gh` not logged in, one line says which.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import CommandcodeError
from ..sessions.files import SessionFiles


def _document(files: SessionFiles, fmt: str) -> str:
    from ..export.document import export_session, render_text
    from ..sessions.reader import open_session

    if fmt != "jsonl":
        return render_text(open_session(files.transcript, tail=False), fmt)[0]
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "session.jsonl"
        export_session(files.transcript, target, "jsonl", redact_jsonl=True)
        return target.read_text(encoding="utf-8", errors="surrogateescape")


def create_gist(files: SessionFiles, fmt: str) -> str:
    """Posts the session as a secret gist; returns its URL.

    Raises:
        CommandcodeError: no `gh`, `gh` not logged in, nothing to share, or `gh` failed.
    """
    gh = shutil.which("gh")
    if gh is None:
        raise CommandcodeError("/share gist needs the GitHub CLI (gh), which is not installed",
                               hint="install it from https://cli.github.com and run `gh auth login`")
    status = subprocess.run([gh, "auth", "status"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                            timeout=60, check=False)
    if status.returncode != 0:
        raise CommandcodeError("gh is not logged in to GitHub", hint="run `gh auth login`, then /share gist again")
    if not files.transcript.is_file():
        raise CommandcodeError("the session has nothing to share yet", hint="share it after its first turn")
    name = f"command-code-session-{files.session_id[:8]}.{fmt}"
    created = subprocess.run([gh, "gist", "create", "--filename", name, "--desc",
                              f"Command Code session {files.session_id}", "-"],
                             input=_document(files, fmt).encode("utf-8", "surrogateescape"), capture_output=True,
                             timeout=300, check=False, env={**os.environ, "GH_PROMPT_DISABLED": "1"})
    output = created.stdout.decode(errors="replace").strip().splitlines()
    if created.returncode != 0 or not output or not output[-1].startswith("http"):
        problem = (created.stderr.decode(errors="replace").strip().splitlines() or ["no URL printed"])[-1]
        raise CommandcodeError(f"gh gist create failed: {problem}")
    return output[-1]
