"""The import contract: every arrow between pdeval's layers points down.

Read from the source (module-level imports and imports inside functions alike), so that a
lazy import cannot hide an upward arrow. The layers, from the bottom:

==========  =================================================================================
layer       packages and modules
==========  =================================================================================
0           ``pdeval.errors``
1           ``pdeval.common`` (option checks, progress, threads, Arrow chunks)
2           ``pdeval.frames`` (canonical columns; foreign frames converted at the boundary)
3           ``pdeval.engine`` (ids, ranking, judgment index, segments, engine options)
4           ``pdeval.measures`` | ``pdeval.sources`` (independent of each other)
5           ``pdeval.evaluation`` | ``pdeval.datasets``
6           ``pdeval.judgments``
7           ``pdeval.analysis``
8           ``pdeval.integrations`` | ``pdeval.dask``
9           ``pdeval.report``
10          ``pdeval.api`` (entry points that dispatch to an adapter: dask, output formats) |
            ``pdeval.public`` (the table of the public API)
11          ``pdeval.accessor`` (``df.ir``: the functions with the frame bound)
12          ``pdeval.cli``
13          ``pdeval`` (the package itself) and ``pdeval.__main__``
==========  =================================================================================

Within one layer, siblings separated by ``|`` may not import each other. Besides: no import
cycle at all (within a layer too), and no module imports another module's private
(``_``-prefixed) name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pdeval"

#: bottom to top; each entry a tuple of independent siblings
LAYERS: list[tuple[str, ...]] = [
    ("pdeval.errors",),
    ("pdeval.common",),
    ("pdeval.frames",),
    ("pdeval.engine",),
    ("pdeval.measures", "pdeval.sources"),
    ("pdeval.evaluation", "pdeval.datasets"),
    ("pdeval.judgments",),
    ("pdeval.analysis",),
    ("pdeval.integrations", "pdeval.dask"),
    ("pdeval.report",),
    ("pdeval.api", "pdeval.public"),
    ("pdeval.accessor",),
    ("pdeval.cli",),
    ("pdeval", "pdeval.__main__"),
]


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict) -> list[tuple[str, str, int]]:
    """(imported module, imported name or '', line) of every pdeval import in the module."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, "", node.lineno) for alias in node.names if alias.name.split(".")[0] == "pdeval"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "pdeval":
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.append((full, "", node.lineno) if full in known else (target, alias.name, node.lineno))
    return found


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, sibling) of a module: the longest package prefix listed in LAYERS."""
    best = None
    for index, siblings in enumerate(LAYERS):
        for sibling in siblings:
            if module == sibling or module.startswith(sibling + "."):
                if best is None or len(sibling) > len(best[1]):
                    best = (index, sibling)
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS in {__file__}")
    return best


def graph(root: Path = PACKAGE) -> tuple[dict, dict]:
    known = modules(root)
    return known, {name: imports(name, path, known) for name, path in known.items()}


def violations(root: Path = PACKAGE) -> list[str]:
    """Every upward or sideways import, as 'module:line imports target (why)'."""
    known, edges = graph(root)
    found = []
    for name, targets in edges.items():
        here, sibling = layer_of(name)
        for target, _, line in targets:
            there, other = layer_of(target)
            if there > here:
                found.append(f"{name}:{line} imports {target}, a higher layer ({other} above {sibling})")
            elif there == here and other != sibling:
                found.append(f"{name}:{line} imports {target}, an independent sibling of {sibling}")
    return found


def cycles(root: Path = PACKAGE) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    known, edges = graph(root)
    succ = {name: sorted({t for t, _, _ in targets if t in known and t != name}) for name, targets in edges.items()}
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in succ:
        if v not in index:
            visit(v)
    return result


def private_imports(root: Path = PACKAGE) -> list[str]:
    _, edges = graph(root)
    return [
        f"{name}:{line} imports {imported} from {target}"
        for name, targets in edges.items()
        for target, imported, line in targets
        if imported.startswith("_") and not imported.startswith("__")
    ]


def test_every_import_points_down():
    assert violations() == []


def test_no_import_cycle():
    assert cycles() == []


def test_no_module_imports_another_modules_private_name():
    assert private_imports() == []


def test_the_contract_catches_an_upward_import(tmp_path):
    """The checks above can fail: a copy of the package with one upward import added (the
    engine calling the CLI) violates the contract, and one with a cycle has a cycle."""
    import shutil

    copy = tmp_path / "pdeval"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.gz"))
    ranking = copy / "engine" / "ranking.py"
    ranking.write_text(ranking.read_text(encoding="utf-8") + "\n\ndef _upward():\n    from pdeval.cli import main\n",
                       encoding="utf-8")
    found = violations(copy)
    assert any(v.startswith("pdeval.engine.ranking:") and "pdeval.cli" in v for v in found), found
    assert any("pdeval.engine.ranking" in c for c in cycles(copy))


@pytest.mark.parametrize("name", sorted(modules()))
def test_every_module_belongs_to_a_layer(name):
    layer_of(name)
