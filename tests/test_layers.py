"""The language core reads bottom-up: each module imports only modules below it in LAYERS, at
module level or inside a function alike (a deferred import that dodges a circle is still a
dependency), so a newcomer can read element types, block values, operations on them, memory,
dot products, the `tl` namespace, control flow, the AST passes and the launch, in that order.
Where a lower layer needs behaviour of a higher one it reads tensor.FROM_ABOVE, which the higher
layers fill as they load.  setup.cfg states the same order for import-linter (bin/test runs it)."""
import ast
import pathlib

LAYERS = ["dtypes", "fast_loops", "context", "counting", "configs",     # plain data: types, launch state, configs
          "tensor",                                                 # block values
          "arithmetic", "casts", "shapes", "elementwise",           # operations: arithmetic, casts, shapes, math,
          "reductions", "user_reductions", "rearrange", "libdevice",        # reductions and scans, rearranging, libdevice,
          "hints", "debug", "ranges",                               # hints and checks, printing, tl.range
          "storage", "addresses", "block_ptr", "memory",            # memory: arguments, pointers, loads/stores
          "dot", "atomics", "random",                               # dot products, atomics, random numbers
          "language",                                               # the `tl` namespace (a package)
          "narrowing", "control", "hoisting", "fusion", "lowering", "jit",  # lockstep control flow, AST passes, launch
          "hypogpu", "testing", "compat", "replay"]                 # the simulated GPU and what uses it

ROOT = pathlib.Path(__file__).resolve().parent.parent / "minitriton"


def _imports(path):
    """Every module of the package this file imports, wherever the import is written."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif node.module:     # from the language package: `from ..ops import ...`
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("minitriton."))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("minitriton"):
            parts = node.module.split(".")
            out.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
    return out


def _files(name):
    path = ROOT / f"{name}.py"
    return [path] if path.exists() else sorted((ROOT / name).rglob("*.py"))


def test_every_core_module_has_a_layer():
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__"}
    modules |= {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert modules == set(LAYERS), f"add {sorted(modules - set(LAYERS))} to LAYERS (or remove stale names)"


def test_every_import_points_down():
    for name in LAYERS:
        for path in _files(name):
            for dep in _imports(path) - {name}:
                if dep in LAYERS:
                    assert LAYERS.index(dep) < LAYERS.index(name), \
                        f"{path.relative_to(ROOT)} imports {dep}, which sits above {name}"


def test_no_import_circle_anywhere():
    """No module of the three packages reaches itself through imports, wherever they are written
    (grimp, the import graph import-linter builds).  The one upward edge allowed is Triton's
    `minitriton.autotune` alias, loaded on first use; it is left out, as setup.cfg ignores it."""
    import grimp
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
    import sys
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"
