"""Where commandcode keeps data: the real CLI's `~/.commandcode` tree, plus our own folders.

The data dir is `$COMMANDCODE_HOME` when set (a relative value is made absolute once, on first
use, against the starting directory), else `$HOME/.commandcode` (then `USERPROFILE`,
then the OS home), so commandcode works on a real user's existing sessions. Beside the real
CLI's folders we add `objects/` (the shared blake3+zstd backup store), `locks/` (writer locks),
`index/` (index sidecars), `archives/` (archived sessions), `sweep/` (an interrupted sweep's
record) and `catalog.sqlite3` (the session catalog); the real CLI ignores them all.
"""

import os

# What a session open needs (the data root, the index folder, the transcript suffix) lives in
# the package's `__init__`, so that an open imports no module of config; re-exported here.
from . import TRANSCRIPT_SUFFIX as TRANSCRIPT_SUFFIX
from . import data_root as data_root
from . import index_root as index_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _path(text: str) -> "Path":
    # `pathlib` (with `re`, `fnmatch` and `urllib.parse`) costs more to import than a warm open of
    # a 1 GB session takes, so the open path works on strings and builds `Path`s only on demand.
    from pathlib import Path

    return Path(text)


_NOT_TRANSCRIPT_MARKERS = (".checkpoints.", ".prompts.", ".v2.bak")


def as_path(text: str) -> "Path":
    """`Path(text)`, importing `pathlib` only when a caller needs a `Path`."""
    return _path(text)


def data_dir() -> "Path":
    """The root of all session data."""
    return _path(data_root())


def projects_dir() -> "Path":
    """`<data dir>/projects`: one folder per project slug."""
    return data_dir() / "projects"


def project_dir(cwd: "str | os.PathLike[str]") -> "Path":
    """The session folder of a working directory as a `Path` (`sessions_folder`; the library's
    public name)."""
    return _path(sessions_folder(cwd))


def sessions_folder(cwd: "str | os.PathLike[str]") -> str:
    """The folder under `<data dir>/projects` holding the sessions of the working directory
    `cwd` (the real CLI's slug of the absolute cwd). Not the repository root: that is
    `config.settings_files.repository_root`, the git root whose settings apply."""
    from .slug import project_slug  # its regexes are not needed to open a session by path

    return os.path.join(data_root(), "projects", project_folder_name(project_slug(os.fspath(cwd))))


def node_text(text: str) -> str:
    """`text` (a path or argv string from the OS) as Node.js reads it: bytes that are not UTF-8
    become U+FFFD (Python keeps them as lone surrogates). The real CLI records its cwd this way,
    and reading a transcript turns a stored lone surrogate into U+FFFD too."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that did not come from undecodable bytes
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


NAME_MAX = 255
"""The longest file name (bytes) the file systems we run on accept."""
LONG_SLUG_KEEP = 200
LONG_SLUG_HASH_HEX = 8


def project_folder_name(slug: str) -> str:
    """The project folder for a slug: the slug itself (the real CLI's folder) while it fits in a
    file name; a longer slug, whose folder the real CLI cannot create (its `-p` fails with "File
    name too long"), becomes its first 200 bytes, `-` and 8 hex digits of the sha256 of the whole
    slug (Claude Code's rule, with a stated hash), so two long cwds sharing a 200-byte start still
    get their own folders. Slugs are `[a-z0-9-]` (or `root`), so bytes are characters."""
    if len(slug.encode("utf-8", "surrogatepass")) <= NAME_MAX:
        return slug
    import hashlib

    digest = hashlib.sha256(slug.encode("utf-8", "surrogatepass")).hexdigest()[:LONG_SLUG_HASH_HEX]
    return f"{slug[:LONG_SLUG_KEEP]}-{digest}"


def objects_dir() -> "Path":
    """`<data dir>/objects`: content-addressed backup objects shared by every session."""
    return data_dir() / "objects"


def locks_dir() -> "Path":
    """`<data dir>/locks`: one lock file per transcript open for writing."""
    return data_dir() / "locks"


ARCHIVE_SUFFIX = ".ccarchive"
ARCHIVE_REFS_SUFFIX = ".ccarchive.refs"


def archives_dir() -> "Path":
    """`<data dir>/archives`: swept sessions kept as one zstd archive each (`workspace/archive.py`)."""
    return data_dir() / "archives"


CATALOG_NAME = "catalog.sqlite3"


def catalog_file() -> str:
    """`<data dir>/catalog.sqlite3`: the session catalog (a cache; safe to delete), as a string."""
    return os.path.join(data_root(), CATALOG_NAME)


def is_transcript_name(name: str) -> bool:
    """The real CLI's rule: ends in `.jsonl` and is no checkpoints/prompts/backup sidecar."""
    return name.endswith(TRANSCRIPT_SUFFIX) and not any(marker in name for marker in _NOT_TRANSCRIPT_MARKERS)


def file_history_dir(session_id: str) -> "Path":
    """The real CLI's per-session raw sha256 backup folder: `<data dir>/file-history/<id>`."""
    return data_dir() / "file-history" / session_id
