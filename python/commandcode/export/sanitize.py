"""Path sanitizing, as the real CLI does for what it shares (format doc §5 of the reference):
an absolute path inside the project becomes `./rel` (the project itself `.`), one in the user's
home `~/rel`, one in another user's home `<user-home>/rel`, and any other `<system-path>/<basename>`.

A path is an absolute path token that starts a word: a `/` after the start of the text,
whitespace, a quote, a bracket, `=`, `,` or `;` — so URLs (`https://host/a`), fractions (`1/2`)
and relative paths (`src/a.py`) are left alone.
"""

from __future__ import annotations

import os
import re

_PATH = re.compile(r"(^|[\s\"'`(\[{<=,;|])(/(?:[A-Za-z0-9._@%+~\-]+/?)+)")
_OTHER_HOMES = re.compile(r"^/(?:home|Users)/[^/]+(/.*)?$")


class PathSanitizer:
    """Rewrites absolute paths relative to a project folder and a home folder."""

    def __init__(self, project: str | None, home: str | None) -> None:
        self.project = _folder(project)
        self.home = _folder(home)

    def path(self, path: str) -> str:
        """One absolute path, sanitized."""
        trailing = "/" if path.endswith("/") and len(path) > 1 else ""
        bare = path.rstrip("/") or "/"
        for folder, prefix in ((self.project, "."), (self.home, "~")):
            if folder is None:
                continue
            if bare == folder:
                return prefix + trailing
            if bare.startswith(folder + "/"):
                return f"{prefix}/{bare[len(folder) + 1:]}{trailing}"
        other = _OTHER_HOMES.match(bare)
        if other is not None:
            return "<user-home>" + (other.group(1) or "") + trailing
        return f"<system-path>/{os.path.basename(bare)}{trailing}"

    def relative(self, path: str) -> str:
        """A tool argument: the path inside the project without `./` (the real CLI's badge text),
        else as `path` sanitizes it."""
        sanitized = self.path(path) if path.startswith("/") else path
        return sanitized[2:] if sanitized.startswith("./") else sanitized

    def text(self, text: str) -> str:
        """Every absolute path in `text`, sanitized."""
        if "/" not in text:
            return text
        return _PATH.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        path = match.group(2)
        stripped = path.rstrip(".")  # a sentence's full stop is not part of the path
        return match.group(1) + (self.path(stripped) + path[len(stripped):] if stripped else path)


def _folder(path: str | None) -> str | None:
    if not path or not path.startswith("/"):
        return None
    cleaned = os.path.normpath(path)
    return None if cleaned == "/" else cleaned
