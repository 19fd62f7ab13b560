"""Path sanitizing, as the real CLI does for what it shares (ref §5):
an absolute path inside the project becomes `./rel` (the project itself `.`), one in the user's
home `~/rel`, one in another user's home `<user-home>/rel`, and any other `<system-path>/<basename>`.

A path in a text is a `/` that starts a word (after the start, whitespace, a quote, a bracket,
`=`, `:`, `,`, `;` or `|`) and the path characters after it, so URLs (`https://host/a`),
fractions (`1/2`), relative paths (`src/a.py`) and `// comments` are left alone. The matching is
the Rust core's (`rust/src/paths.rs`): Python's `re` did 33 MB/s, a fifth of an export's speed.
"""

from __future__ import annotations

import os

from .. import _native


class PathSanitizer:
    """Rewrites absolute paths relative to a project folder and a home folder."""

    def __init__(self, project: str | None, home: str | None) -> None:
        self.project = _folder(project)
        self.home = _folder(home)

    def path(self, path: str) -> str:
        """One absolute path, sanitized."""
        return _native.sanitize_path(path, self.project, self.home)

    def relative(self, path: str) -> str:
        """A tool argument: the path inside the project without `./` (the real CLI's badge text),
        else as `path` sanitizes it."""
        sanitized = self.path(path) if path.startswith("/") else path
        return sanitized[2:] if sanitized.startswith("./") else sanitized

    def text(self, text: str) -> str:
        """Every absolute path in `text`, sanitized."""
        return _native.sanitize_paths(text, self.project, self.home) if "/" in text else text


def _folder(path: str | None) -> str | None:
    if not path or not path.startswith("/"):
        return None
    cleaned = os.path.normpath(path)
    return None if cleaned == "/" else cleaned
