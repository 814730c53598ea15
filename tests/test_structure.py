"""The package's shape stays walkable: imports run down the layers, no import circle, no module over 450
lines, no function over 80.

Imports are read from the source (every `import`, at module level or inside a function), so a lazy import
cannot hide a circle. Those under `if TYPE_CHECKING:` never run, so across packages they are left out; but
between the modules of one package they count too: two modules that need each other's names, even only
for types, are one job split in two.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

PACKAGE = ROOT / "gacc_hf"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80

#: The layers of the package, bottom first (docs/README.md, "The package, by stage"): a module imports only
#: from its own layer or one below (and its enclosing packages, which exist before it). Each entry names a
#: module or package under `gacc_hf` ("" is the package itself); a module takes the layer of its longest
#: entry, and one that no entry names is an error, so a new module is placed on purpose.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the contract and the tools every stage shares
    (
        "protocol",
        "tokenizer",
        "bpe",
        "budget",
        "keys",
        "limits",
        "online",
        "errors",
        "redaction",
        "templates",
        "progress",
        "localhost",
        "safe_yaml",
        "exiting",
        "strict_json",
        "collector",
    ),
    ("text",),  # building block: hygiene, sentences, the matcher
    ("data",),  # stage 1
    ("cost", "scoring"),  # the counts and measures the stages take as they go
    ("methods",),  # building block: the compressors, readers and judges
    ("run",),  # stages 2-5
    ("results",),  # stage 7
    ("run.benchmark", "run.distributed", "run.dry_run", "run.rescore"),  # the conductors: they call every stage
    ("hub", "metric", "training", "inspect_eval"),  # stage 8, the `gacc` metric, the Trainer callback, the Inspect task
    ("cli",),
    ("", "__main__"),  # the front doors: the public API and `python -m gacc_hf`
)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST, typing: bool = False) -> list[ast.AST]:
    """Every node outside `if TYPE_CHECKING:` blocks (all of them with `typing`)."""
    nodes, stack = [], [tree]
    while stack:
        node = stack.pop()
        if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def imported_modules(path: Path, known: set[str], root: Path = PACKAGE, typing: bool = False) -> set[str]:
    """The package modules a module imports when it runs (a package import also names its submodule);
    with `typing`, those it imports for type checking as well."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8")), typing):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return {m for m in found if m in known and m != name}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    paths = sorted(root.rglob("*.py"))
    known = {module_name(p, root) for p in paths}
    return {module_name(p, root): imported_modules(p, known, root) for p in paths}


def package_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Imports between modules of the same package, type-checking imports included."""
    paths = sorted(root.rglob("*.py"))
    known = {module_name(p, root) for p in paths}
    graph = {module_name(p, root): imported_modules(p, known, root, typing=True) for p in paths}
    return {m: {d for d in deps if d.rpartition(".")[0] == m.rpartition(".")[0]} for m, deps in graph.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules in order, the first repeated at the end), or None.

    A package's own `__init__` importing its submodules (the public API's lazy re-exports) is not a
    circle: a submodule that imports its parent package only needs the package object, which exists first.
    """
    edges = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for dep in sorted(edges.get(module, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    """The index in `layers` of a module's longest entry (None when no entry names it)."""
    name = module.partition(".")[2]
    found = [
        (len(entry), i)
        for i, entries in enumerate(layers)
        for entry in entries
        if name == entry or (entry and name.startswith(entry + "."))
    ]
    return max(found)[1] if found else None


def upward_imports(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Imports from a layer to a higher one, as `importer -> imported`, and modules in no layer."""
    found = [f"{m}: in no layer" for m in sorted(graph) if layer_of(m, layers) is None]
    for module, deps in sorted(graph.items()):
        here = layer_of(module, layers)
        found += [
            f"{module} -> {dep}"
            for dep in sorted(deps)
            if not module.startswith(dep + ".")
            and here is not None
            and (there := layer_of(dep, layers)) is not None
            and there > here
        ]
    return found


def long_parts(root: Path = PACKAGE) -> list[str]:
    """Modules over MAX_MODULE_LINES lines and functions over MAX_FUNCTION_LINES, as `where: n lines`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if (n := len(text.splitlines())) > MAX_MODULE_LINES:
            found.append(f"{path.relative_to(root.parent)}: {n} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                if (n := node.end_lineno - start + 1) > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}: {n} lines")
    return found


def test_imports_run_down_the_layers() -> None:
    assert upward_imports(import_graph()) == []


def test_no_import_circle() -> None:
    assert find_cycle(import_graph()) is None


def test_no_circle_between_modules_of_one_package() -> None:
    assert find_cycle(package_graph()) is None


def test_no_long_module_or_function() -> None:
    assert long_parts() == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "pkg"


def test_a_lazy_import_circle_is_found(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\n",
            "pkg/b.py": "def f():\n    from pkg import a\n",
            "pkg/c.py": "from . import a\n",
        },
    )
    assert find_cycle(import_graph(pkg)) in (["pkg.a", "pkg.b", "pkg.a"], ["pkg.b", "pkg.a", "pkg.b"])


def test_type_checking_imports_and_parent_packages_are_no_circle(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "def api():\n    from pkg.sub.a import f\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "from typing import TYPE_CHECKING\nfrom pkg import errors\nif TYPE_CHECKING:\n"
            "    from pkg.sub.b import g\n",
            "pkg/sub/b.py": "from .a import f\n",
            "pkg/errors.py": "",
        },
    )
    graph = import_graph(pkg)
    assert graph["pkg.sub.b"] == {"pkg.sub.a"} and graph["pkg.sub.a"] == {"pkg.errors"}
    assert find_cycle(graph) is None


def test_a_type_only_circle_inside_a_package_is_found(tmp_path: Path) -> None:
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.{0} import X\n"
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "from pkg.sub.b import f\n",
            "pkg/sub/b.py": typed.format("a"),
            "pkg/other.py": typed.format("c"),
            "pkg/sub/c.py": "from pkg.other import g\n",
        },
    )
    assert find_cycle(import_graph(pkg)) is None  # nothing runs in a circle
    # other <-> sub.c is a type-only circle across packages (it comes first in order): not reported
    assert find_cycle(package_graph(pkg)) in (
        ["pkg.sub.a", "pkg.sub.b", "pkg.sub.a"],
        ["pkg.sub.b", "pkg.sub.a", "pkg.sub.b"],
    )


def test_an_upward_import_is_found(tmp_path: Path) -> None:
    layers = (("base",), ("low",), ("low.top", "high"), ("",))
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.high import h\n",  # the top layer reaches down: allowed
            "pkg/base.py": "def b():\n    from pkg.low.part import f\n",  # a lazy import counts
            "pkg/low/__init__.py": "",
            "pkg/low/part.py": "import pkg\nfrom pkg import base\nfrom typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.high import h\n",  # its own package, and for types only: allowed
            "pkg/low/top.py": "from pkg.high import h\nfrom pkg.low import part\n",  # same layer, and below
            "pkg/high.py": "from pkg.low.top import t\n",
            "pkg/stray.py": "",
        },
    )
    assert [layer_of(m, layers) for m in ("pkg", "pkg.base", "pkg.low.part", "pkg.low.top", "pkg.stray")] == [
        3,
        0,
        1,
        2,
        None,
    ]
    assert upward_imports(import_graph(pkg), layers) == ["pkg.stray: in no layer", "pkg.base -> pkg.low.part"]


@pytest.mark.parametrize(("lines", "expected"), [(80, []), (81, ["pkg/m.py:1 f: 81 lines"])])
def test_a_long_function_is_found(tmp_path: Path, lines: int, expected: list[str]) -> None:
    pkg = _write(tmp_path, {"pkg/m.py": "def f():\n" + "    x = 1\n" * (lines - 1)})
    assert long_parts(pkg) == expected


def test_a_long_module_is_found(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {"pkg/m.py": "x = 1\n" * 451, "pkg/n.py": "x = 1\n" * 450})
    assert long_parts(pkg) == ["pkg/m.py: 451 lines"]
