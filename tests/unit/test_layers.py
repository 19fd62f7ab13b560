"""The layer rule of `python/commandcode` (docs/architecture.md), read from the source with `ast`.

Front ends (`cli`, `bench`, `shell`, `ui`, `share`, `present`) → services (`agent`, `catalog`,
`checkpoints`, `export`, `interop`, `workspace`, `launcher`, `sharing`) → core (`sessions`,
`storage`, `config`, `errors`, `values`, `_native`). Every import counts: top level, inside functions and
under `TYPE_CHECKING`. Nothing imports upward; inside core, `config` and `storage` never import
`sessions`; only the modules in `NATIVE_IMPORTERS` import `_native`; front ends never write a
session or touch the backup store except through a service (`FRONT_END_FORBIDDEN`); and only
`config/env.py` names a `COMMANDCODE_*` variable (`config/testing_hooks.py` the test hooks). The
front ends that present (`cli`, `shell`, `ui`) share `present` instead of importing each other
(`FRONT_END_ENTRY_POINTS` are the only edges between them), and no two packages import each
other, directly or round a longer cycle.
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
    "commandcode.values": CORE,
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
    "commandcode.launcher": SERVICES,
    "commandcode.sharing": SERVICES,
    "commandcode.cli": FRONT_ENDS,
    "commandcode.bench": FRONT_ENDS,
    "commandcode.shell": FRONT_ENDS,
    "commandcode.ui": FRONT_ENDS,
    "commandcode.share": FRONT_ENDS,
    "commandcode.present": FRONT_ENDS,
    "commandcode.__main__": FRONT_ENDS,
    "commandcode": FACADE,  # the root `__init__`: re-exports the library API lazily
}
# Below `sessions` inside core: the folders and bytes every session module builds on.
CORE_FOUNDATION = ("commandcode.config", "commandcode.storage", "commandcode.errors", "commandcode.values")

# The only modules that import the Rust core: JSON text, the session scan, the backup store
# (the store facade lives with the checkpoints that use it, as the issue lays out), and the
# package root for `__version__`.
NATIVE_IMPORTERS = {
    "commandcode",
    "commandcode.storage.jsonfmt",
    "commandcode.sessions.reader",
    "commandcode.sessions.fork_ends",  # what a fork needs of its source, read from the ends without a scan
    "commandcode.checkpoints.store",
    "commandcode.export.redact",  # secret redaction: the rule table matched by the Rust `regex` crate
    "commandcode.export.sanitize",  # path sanitizing of what leaves (Python's `re`: 33 MB/s)
    "commandcode.catalog.freshness",  # the warm listing's stat of every file, against the folder's snapshot
    "commandcode.catalog.native_summary",  # listing rows and names of many transcripts in one parallel pass
    "commandcode.catalog.text_index",  # the search's text extraction, native scan and read-back by offset
}
# Front ends reach these only through services (`agent.runtime`, `checkpoints.*`).
FRONT_END_FORBIDDEN = ("commandcode.sessions.writer", "commandcode.checkpoints.store")
# The front ends that present: none imports another, but through the entry points below.
PRESENTING = ("commandcode.cli", "commandcode.shell", "commandcode.ui")
# (importing front end, imported module) -> why. The command line dispatches into the shell
# through one module, `shell.launch` (`parse_launch`, `run_shell`): a bare `commandcode` must
# start the shell without typer, so the dispatch cannot go through a service that knows typer's
# argv. `ui` is the library of full-screen views both the command line and the shell open (the
# picker, the rewind menu, the tree); it imports neither of them.
FRONT_END_ENTRY_POINTS = {
    ("commandcode.cli", "commandcode.shell.launch"): "a bare `commandcode` starts the shell",
    **{(caller, screen): "a full-screen view"
       for caller in ("commandcode.cli", "commandcode.shell")
       for screen in ("commandcode.ui.app", "commandcode.ui.picker_service", "commandcode.ui.rewind_menu",
                      "commandcode.ui.screens.tree", "commandcode.ui.screens.picker",
                      "commandcode.ui.screens.picker_data")},
}
# (module, imported module) -> why an upward import is allowed for now: share's client is the
# services package `sharing/` on branch share-pg; the import moves there at that merge.
# Names of the package root a module inside it may import.
ROOT_NAMES = {"__version__"}
ENV_HOME = "commandcode.config.env"
# The variables a warm session open reads, named in the config package's `__init__` so that the
# open imports no other module of config (env.py re-exports them).
CONFIG_ROOT, WARM_OPEN_VARIABLES = "commandcode.config", {"COMMANDCODE_HOME", "COMMANDCODE_INDEX"}
TEST_HOOKS_HOME = "commandcode.config.testing_hooks"


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
              for name, line, target in _all_imports()
              if _layer(target) > _layer(name)]
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


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_front_ends_that_present_import_each_other_only_through_entry_points() -> None:
    """cli, shell and ui never import each other but through `FRONT_END_ENTRY_POINTS`; `present`,
    what they share, imports none of them."""
    found = []
    for name, line, target in _all_imports():
        source, imported = _package(name), _package(target)
        if source == imported or imported not in PRESENTING:
            continue
        if source in PRESENTING and (source, target) in FRONT_END_ENTRY_POINTS:
            continue
        if source in (*PRESENTING, "commandcode.present"):
            found.append(f"{name}:{line} imports {target}")
    assert found == []


def _package_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, _, target in _all_imports():
        if name != "commandcode" and target != "commandcode" and _package(name) != _package(target):
            edges.setdefault(_package(name), set()).add(_package(target))
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each package that is on one (depth-first, packages in name order)."""
    found: list[list[str]] = []
    on_one: set[str] = set()
    for start in sorted(edges):
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for following in sorted(edges.get(node, ())):
                if following == start and start not in on_one:
                    found.append([*path, start])
                    on_one.update(path)
                elif following not in seen:
                    seen.add(following)
                    stack.append((following, [*path, following]))
    return found


def test_no_import_cycle_between_packages() -> None:
    """No package imports another that imports it back, directly (cli <-> shell, config <->
    storage were) or round a longer cycle."""
    assert _cycles(_package_edges()) == []


def test_the_cycle_finder_sees_long_and_short_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "d": {"a"}}) == []


def test_the_cross_service_imports_are_the_known_ones() -> None:
    """Services may use each other; these are the ones that do (docs/architecture.md lists them)."""
    services = ("commandcode.agent", "commandcode.catalog", "commandcode.checkpoints", "commandcode.export",
                "commandcode.interop", "commandcode.workspace", "commandcode.launcher",
                "commandcode.sharing")

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
                     # a launch checks its permission mode and resumes what the picker chose
                     ("commandcode.launcher", "commandcode.agent"),
                     ("commandcode.launcher", "commandcode.interop"),  # whose sessions a picker starts with
                     ("commandcode.launcher", "commandcode.catalog"),  # ... and the listing row it returns
                     ("commandcode.launcher", "commandcode.workspace"),  # a launch's worktree and daily sweep
                     # a share publishes the rows the export renders (redacted, paths sanitized)
                     ("commandcode.sharing", "commandcode.export"),
                     ("commandcode.launcher", "commandcode.sharing")}  # a launch re-arms a shared session's page


def test_only_config_env_names_a_commandcode_variable() -> None:
    """... and `config/testing_hooks.py` the test hooks (`COMMANDCODE_TEST_*`), which env.py leaves to it,
    and `config/__init__.py` the two a warm open reads (`WARM_OPEN_VARIABLES`), which env.py re-exports."""
    found = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("COMMANDCODE_") \
                    and node.value.replace("_", "").isalnum() and node.value.isupper():
                owner = TEST_HOOKS_HOME if node.value.startswith("COMMANDCODE_TEST_") else ENV_HOME
                if name != owner and not (name == CONFIG_ROOT and node.value in WARM_OPEN_VARIABLES):
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
