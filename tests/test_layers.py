"""minitriton and autotune each read bottom-up: a module imports only modules in layers below its
own, at module level or inside a function alike (a deferred import that dodges a circle is still a
dependency), so a newcomer can read element types, block values, operations on them, memory,
dot products, the `tl` namespace, control flow, the AST passes and the launch, in that order; and
the config space, records, the task, the search strategies, the driver and the decorator.
Where a lower layer needs behaviour of a higher one it reads tensor.FROM_ABOVE, which the higher
layers fill as they load.  The layers are setup.cfg's import-linter contracts (bin/test runs
lint-imports too); this test reads them from there, so the order is written once."""
import ast
import configparser
import pathlib
import sys

import grimp
import pytest

PROJECT = pathlib.Path(__file__).resolve().parent.parent


def _layers(container):
    """[[module, ...], ...] bottom first, from the contract whose container is `container`; the
    modules of one entry (written `a | b` in setup.cfg) may not import each other."""
    cfg = configparser.ConfigParser()
    cfg.read(PROJECT / "setup.cfg")
    for section in cfg.sections():
        if cfg[section].get("containers", "").strip() == container:
            rows = [line.strip() for line in cfg[section]["layers"].splitlines() if line.strip()]
            return [[name.strip() for name in row.split("|")] for row in reversed(rows)]
    raise AssertionError(f"setup.cfg declares no layers contract for {container}")


def _imports(path, package):
    """Every top-level module of `package` that this file imports, wherever the import is written."""
    tree = ast.parse(path.read_text())
    inner = path.parent != PROJECT / package          # a file of a sub-package: `..x` is the package's x
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            if node.level == 1 and inner:
                continue                               # a sibling inside the same sub-package
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith(package + "."))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == package:
            parts = node.module.split(".")
            out.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
    return out


def _files(package, name):
    path = PROJECT / package / f"{name}.py"
    return [path] if path.exists() else sorted((PROJECT / package / name).rglob("*.py"))


@pytest.mark.parametrize("package", ["minitriton", "autotune"])
def test_every_module_has_a_layer(package):
    root = PROJECT / package
    modules = {p.stem for p in root.glob("*.py")} - {"__init__"}
    modules |= {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    declared = {name for row in _layers(package) for name in row}
    assert modules == declared, f"setup.cfg's {package} layers: add {sorted(modules - declared)}, " \
                                f"remove {sorted(declared - modules)}"


@pytest.mark.parametrize("package", ["minitriton", "autotune"])
def test_every_import_points_down(package):
    level = {name: i for i, row in enumerate(_layers(package)) for name in row}
    for name in level:
        for path in _files(package, name):
            for dep in _imports(path, package) - {name}:
                if dep in level:
                    assert level[dep] < level[name], \
                        f"{path.relative_to(PROJECT)} imports {dep}, which is not below {name}"


def test_no_import_circle_anywhere():
    """No module of the three packages reaches itself through imports, wherever they are written
    (grimp, the import graph import-linter builds).  The one upward edge allowed is Triton's
    `minitriton.autotune` alias, loaded on first use; it is left out, as setup.cfg ignores it."""
    graph = grimp.build_graph("minitriton", "autotune", "kernels")
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & graph.modules for m in graph.modules}
    edges["minitriton"].discard("autotune")
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):   # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"
