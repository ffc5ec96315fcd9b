"""The language core reads bottom-up: each module imports (at module level) only modules below
it in LAYERS, so a newcomer can read block values, then operations on them, then memory, then
the launch.  Imports inside functions may reach up (operators on tensors are defined in ops)."""
import ast
import pathlib

LAYERS = ["dtypes", "_numba", "context", "counting", "compat",      # plain data, no blocks
          "tensor",                                                 # block values
          "ops", "combine", "rearrange", "random", "dot", "libdevice",  # operations on them
          "buffers", "block_ptr", "addresses", "memory", "atomics",      # memory
          "rows",                                                   # moving values between programs
          "control", "hoisting", "fusion", "lowering", "jit", "testing",  # control flow and the launch
          "configs",                                                # what a launch is tuned by: Config, Space
          "replay"]                                                 # devices answering from records

ROOT = pathlib.Path(__file__).resolve().parent.parent / "minitriton"


def _module_level_imports(path):
    tree = ast.parse(path.read_text())
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
    return out


def test_every_core_module_has_a_layer():
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__"}
    assert modules == set(LAYERS), f"add {sorted(modules - set(LAYERS))} to LAYERS (or remove stale names)"


def test_module_level_imports_point_down():
    for name in LAYERS:
        for dep in _module_level_imports(ROOT / f"{name}.py"):
            if dep in LAYERS:
                assert LAYERS.index(dep) < LAYERS.index(name), f"{name} imports {dep}, which sits above it"
