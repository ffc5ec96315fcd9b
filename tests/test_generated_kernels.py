"""Randomly generated kernels, run two ways that must agree (differential testing): the lockstep
executor against one program at a time, and index arithmetic kept affine against the same values
loaded from memory.  Each generator found a real bug when first run (a scalar carried out of nested
divergent loops, a wrapping cast of an index value); the seeds are fixed, so a failure reproduces."""
import importlib.util
import random

import numpy as np
import pytest

import minitriton as mt

INT_TYPES = ["tl.int8", "tl.uint8", "tl.int16", "tl.uint16", "tl.int32", "tl.uint32", "tl.int64"]


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kern


def _control_flow(r, depth, indent, in_loop):
    pad = "    " * indent
    out = []
    for _ in range(r.randint(1, 3)):
        k = r.random()
        if k < 0.2 and depth < 2:
            out.append(f"{pad}for i{depth} in range(pid % {r.randint(2, 5)}):")
            if r.random() < 0.4:
                out.append(f"{pad}    if (i{depth} + pid) % {r.randint(2, 3)} == 0:")
                out.append(f"{pad}        {r.choice(['continue', 'break'])}")
            out.append(f"{pad}    acc += x * 0.25 + i{depth}")
            out += _control_flow(r, depth + 1, indent + 1, True)
        elif k < 0.35 and depth < 2:
            out.append(f"{pad}if pid % {r.randint(2, 4)} == {r.randint(0, 1)}:")
            out += _control_flow(r, depth + 1, indent + 1, in_loop)
            if r.random() < 0.5:
                out.append(f"{pad}else:")
                out += _control_flow(r, depth + 1, indent + 1, in_loop)
        elif k < 0.45 and depth < 2:
            out.append(f"{pad}while s < {r.randint(2, 6)}:")
            out.append(f"{pad}    s += 1")
            out.append(f"{pad}    acc = acc * 0.75 + s")
        elif k < 0.55 and not in_loop:
            out.append(f"{pad}if pid == {r.randint(0, 9)}:")
            out.append(f"{pad}    tl.store(Y + offs, acc - 7.0)")
            out.append(f"{pad}    return")
        elif k < 0.7:
            out.append(f"{pad}t = t + pid * {r.randint(1, 3)} - s")
            out.append(f"{pad}acc += t")
        elif k < 0.8:
            out.append(f"{pad}d = tl.dot(tl.reshape(acc, (4, 4)), tl.reshape(x, (4, 4)), d)")
        elif k < 0.9:
            out.append(f"{pad}acc = tl.where(x > {r.uniform(-1, 1):.2f}, acc * 0.5, acc + x)")
        else:
            out.append(f"{pad}acc = acc * 0.5 + tl.load(X + offs + {r.randint(1, 3)})")
    return out


def control_flow_kernel(seed):
    body = _control_flow(random.Random(seed), 0, 1, False)
    return ("import minitriton as mt\nimport minitriton.language as tl\n\n@mt.jit\n"
            "def kern(X, Y, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
            "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(X + offs)\n    acc = x * 0.0\n"
            "    s = pid % 3\n    t = pid * 0\n    d = tl.zeros((4, 4), tl.float32)\n" + "\n".join(body) +
            "\n    tl.store(Y + offs, acc + t + tl.reshape(d, (16,)))\n")


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 52, 191, 299])   # 52, 191, 299: the carried scalar
def test_divergent_control_flow_in_lockstep_matches_one_program_at_a_time(seed, tmp_path):
    kern = _load(tmp_path, f"flow{seed}", control_flow_kernel(seed))
    rng = np.random.default_rng(seed)
    for programs in (8, 24):                    # 24: loops narrow to the programs still in them
        x = rng.standard_normal(programs * 16 + 8).astype(np.float32)
        lockstep, alone = (np.full(programs * 16, np.nan, np.float32) for _ in range(2))
        kern[(programs,)](x, lockstep, BLOCK=16)
        with mt.one_program_at_a_time():
            kern[(programs,)](x, alone, BLOCK=16)
        # (dots of fp32 blocks round their operands to tf32 and may sum in another order: not bits)
        np.testing.assert_allclose(lockstep, alone, rtol=1e-4, atol=1e-3)


def _int_expr(r, depth):
    if depth > 3 or r.random() < 0.15:
        return "V"
    op = r.choice(["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "cast", "where", "min", "neg", "const"])
    a = _int_expr(r, depth + 1)
    if op == "cast":
        return f"({a}).to({r.choice(INT_TYPES)})"
    if op == "neg":
        return f"(-({a}))"
    if op == "where":
        return f"tl.where(({a}) > {r.randint(-5, 5)}, {a}, {_int_expr(r, depth + 1)})"
    if op == "min":
        return f"tl.minimum({a}, {_int_expr(r, depth + 1)})"
    if op == "const":
        return f"({a} {r.choice(['+', '-', '*'])} {r.randint(-9, 100)})"
    if op in ("<<", ">>"):
        return f"({a} {op} {r.randint(0, 7)})"
    if op in ("//", "%"):
        return f"({a} {op} {r.choice([3, 7, 13])})"
    return f"({a} {op} {_int_expr(r, depth + 1)})"


def index_kernel(seed):
    r = random.Random(seed)
    lines = []
    for i in range(4):
        e = _int_expr(r, 0)
        for side, name in (("a", "OA"), ("m", "OM")):
            lines.append(f"    e = ({e.replace('V', 'v' + side)}).to(tl.int64)")
            lines.append(f"    tl.store({name} + ({i} * P + pid) * N + tl.arange(0, N), e + tl.zeros([N], tl.int64))")
    return ("import minitriton as mt\nimport minitriton.language as tl\n\n@mt.jit\n"
            "def kern(A, OA, OM, P, S, N: tl.constexpr, SCALAR: tl.constexpr):\n    pid = tl.program_id(0)\n"
            "    if SCALAR:\n        va = pid * S - 40\n        vm = tl.load(A + pid * N)\n"
            "    else:\n        va = pid * S - 40 + tl.arange(0, N) * 3\n"
            "        vm = tl.load(A + pid * N + tl.arange(0, N))\n"
            + "\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", [1, 5, 8, 94, 153, 155, 171])   # 94-171: the wrapping cast
def test_index_arithmetic_kept_affine_matches_the_same_values_from_memory(seed, tmp_path):
    kern = _load(tmp_path, f"index{seed}", index_kernel(seed))
    for programs, step, lanes, scalar in ((6, 17, 4, True), (6, 17, 4, False), (3, 70000, 2, True)):
        values = np.arange(programs)[:, None] * step - 40 + (0 if scalar else np.arange(lanes)[None, :] * 3)
        a = np.broadcast_to(values, (programs, lanes)).astype(np.int32).copy()
        affine, memory = (np.zeros(4 * programs * lanes, np.int64) for _ in range(2))
        try:
            with np.errstate(all="ignore"):
                kern[(programs,)](a, affine, memory, programs, step, N=lanes, SCALAR=scalar)
        except ValueError as e:          # a Python number out of a narrow type's range: refused, as Triton does
            assert "out of range for type" in str(e)
            continue
        np.testing.assert_array_equal(affine, memory)
