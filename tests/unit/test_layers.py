"""The layer rule of `python/commandcode` (docs/architecture.md), read from the source with `ast`.

Front ends (`cli`, `bench`, `shell`, `ui`, `share`) → services (`agent`, `catalog`, `checkpoints`,
`export`, `interop`, `workspace`, `sharing`) → core (`sessions`,
`storage`, `config`, `errors`, `_native`). Every import counts: top level, inside functions and
under `TYPE_CHECKING`. Nothing imports upward; inside core, `config` and `storage` never import
`sessions`; only the modules in `NATIVE_IMPORTERS` import `_native`; front ends never write a
session or touch the backup store except through a service (`FRONT_END_FORBIDDEN`); and only
`config/env.py` names a `COMMANDCODE_*` variable.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers.locations import REPO

PACKAGE = REPO / "python" / "commandcode"

CORE, SERVICES, FRONT_ENDS, FACADE = 0, 1, 2, 3
LAYER_NAMES = {CORE: "core", SERVICES: "services", FRONT_ENDS: "front ends", FACADE: "the package facade"}
LAYERS = {
    "commandcode.errors": CORE,
    "commandcode._native": CORE,
    "commandcode.config": CORE,
    "commandcode.storage": CORE,
    "commandcode.sessions": CORE,
    "commandcode.agent": SERVICES,
    "commandcode.catalog": SERVICES,
    "commandcode.checkpoints": SERVICES,
    "commandcode.export": SERVICES,
    "commandcode.interop": SERVICES,
    "commandcode.workspace": SERVICES,
    "commandcode.sharing": SERVICES,
    "commandcode.cli": FRONT_ENDS,
    "commandcode.bench": FRONT_ENDS,
    "commandcode.shell": FRONT_ENDS,
    "commandcode.ui": FRONT_ENDS,
    "commandcode.share": FRONT_ENDS,
    "commandcode.__main__": FRONT_ENDS,
    "commandcode": FACADE,  # the root `__init__`: re-exports the library API lazily
}
# Below `sessions` inside core: the folders and bytes every session module builds on.
CORE_FOUNDATION = ("commandcode.config", "commandcode.storage", "commandcode.errors")

# The only modules that import the Rust core: JSON text, the session scan, the backup store
# (the store facade lives with the checkpoints that use it, as the issue lays out), and the
# package root for `__version__`.
NATIVE_IMPORTERS = {
    "commandcode",
    "commandcode.storage.jsonfmt",
    "commandcode.sessions.reader",
    "commandcode.checkpoints.store",
    "commandcode.export.redact",  # secret redaction: the rule table matched by the Rust `regex` crate
    "commandcode.export.sanitize",  # path sanitizing of what leaves (Python's `re`: 33 MB/s)
    "commandcode.catalog.freshness",  # the warm listing's stat of every file, against the folder's snapshot
    "commandcode.catalog.native_summary",  # listing rows and names of many transcripts in one parallel pass
    "commandcode.catalog.text_index",  # the search's text extraction, native scan and read-back by offset
}
# Front ends reach these only through services (`agent.runtime`, `checkpoints.*`).
FRONT_END_FORBIDDEN = ("commandcode.sessions.writer", "commandcode.checkpoints.store")
# Names of the package root a module inside it may import.
ROOT_NAMES = {"__version__"}
ENV_HOME = "commandcode.config.env"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """`(line, imported module)` for every import in a module, wherever it is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names if alias.name.startswith("commandcode"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("commandcode"):
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in modules or submodule == "commandcode._native":
                    found.append((node.lineno, submodule))
                elif target == "commandcode" and alias.name in ROOT_NAMES:
                    continue  # `from .. import __version__`
                else:
                    found.append((node.lineno, target))
    return found


def _layer(module: str) -> int:
    best = max((prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")), key=len)
    return LAYERS[best]


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def _all_imports() -> list[tuple[str, int, str]]:
    modules = _modules()
    return [(name, line, target) for name, path in modules.items() for line, target in _imports(name, path, modules)]


def test_every_module_has_a_layer() -> None:
    for name in _modules():
        assert _layer(name) in LAYER_NAMES, name


def test_nothing_imports_upward() -> None:
    upward = [f"{name}:{line} imports {target} ({LAYER_NAMES[_layer(name)]} → {LAYER_NAMES[_layer(target)]})"
              for name, line, target in _all_imports() if _layer(target) > _layer(name)]
    assert upward == []


def test_config_and_storage_never_import_sessions() -> None:
    found = [f"{name}:{line} imports {target}" for name, line, target in _all_imports()
             if _in(name, CORE_FOUNDATION) and _in(target, ("commandcode.sessions",))]
    assert found == []


def test_only_the_named_modules_import_native() -> None:
    importers = {name for name, _, target in _all_imports() if target == "commandcode._native"}
    assert importers <= NATIVE_IMPORTERS, importers - NATIVE_IMPORTERS
    assert all(_layer(name) == CORE or name in ("commandcode", "commandcode.checkpoints.store", "commandcode.export.redact",
                                                               "commandcode.export.sanitize", "commandcode.catalog.freshness",
                                                               "commandcode.catalog.native_summary",
                                                               "commandcode.catalog.text_index")
               for name in importers)


def test_front_ends_neither_write_sessions_nor_touch_the_store() -> None:
    found = [f"{name}:{line} imports {target}" for name, line, target in _all_imports()
             if _layer(name) == FRONT_ENDS and _in(target, FRONT_END_FORBIDDEN)]
    assert found == []


def test_the_cross_service_imports_are_the_known_ones() -> None:
    """Services may use each other; these are the ones that do (docs/architecture.md lists them)."""
    services = ("commandcode.agent", "commandcode.catalog", "commandcode.checkpoints", "commandcode.export",
                "commandcode.interop", "commandcode.workspace", "commandcode.sharing")

    def service(module: str) -> str | None:
        return next((prefix for prefix in services if _in(module, (prefix,))), None)

    edges = {(service(name), service(target)) for name, _, target in _all_imports()
             if service(name) and service(target) and service(name) != service(target)}
    assert edges == {("commandcode.agent", "commandcode.catalog"), ("commandcode.agent", "commandcode.checkpoints"),
                     ("commandcode.agent", "commandcode.export"),
                     ("commandcode.agent", "commandcode.workspace"),  # the scratchpad and worktree guard of the tools
                     ("commandcode.workspace", "commandcode.catalog"),  # a sweep and the footprint list sessions
                     ("commandcode.workspace", "commandcode.checkpoints"),  # ... and the objects they reference
                     # an import puts Claude Code's file-history backups into the content store
                     ("commandcode.interop", "commandcode.checkpoints"),
                     # search over Claude Code's and pi's sessions reads them through their readers
                     ("commandcode.catalog", "commandcode.interop"),
                     # `export --source claude|pi` renders a converted session with the export service
                     ("commandcode.interop", "commandcode.export"),
                     # a share publishes the rows the export renders (redacted, paths sanitized)
                     ("commandcode.sharing", "commandcode.export")}


def test_only_config_env_names_a_commandcode_variable() -> None:
    found = []
    for name, path in _modules().items():
        if name == ENV_HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("COMMANDCODE_") \
                    and node.value.replace("_", "").isalnum() and node.value.isupper():
                found.append(f"{name}:{node.lineno} {node.value}")
    assert found == []


@pytest.mark.parametrize("source, expected", [
    ("from ..sessions.writer import SessionWriter", "commandcode.sessions.writer"),
    ("from .. import _native", "commandcode._native"),
    ("if TYPE_CHECKING:\n    from ..catalog.listing import x", "commandcode.catalog.listing"),
    ("def f():\n    from ..checkpoints import store", "commandcode.checkpoints.store"),
    ("import commandcode.agent.runtime", "commandcode.agent.runtime"),
])
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, source: str, expected: str) -> None:
    """The checks above are only as good as the import reader: it must see imports inside
    functions and under TYPE_CHECKING, relative and absolute."""
    modules = _modules()
    fake = tmp_path / "probe.py"
    fake.write_text(source + "\n", encoding="utf-8")
    assert [target for _, target in _imports("commandcode.storage.probe", fake, modules)] == [expected]
