"""Elementwise float arithmetic on big blocks, deferred and run as one compiled loop.

A normalisation kernel's arithmetic is a string of elementwise steps,

    y = (x - mean) * rstd * w + b

and numpy runs each step as a pass over memory, writing a temporary that the next step reads
back: four passes and three temporaries of the whole block, where one pass would do.  So when
a result is big (MIN_ELEMENTS), arithmetic.binary does not compute an fp32/fp64 `+`, `-` or
`*`: it returns a tensor whose value is an `Expression` over the operands' arrays.  Arithmetic on
that tensor extends the expression; the first use of the values (a store, a reduction, any
operation that reads them) compiles the expression with numba into one ufunc and runs it.

The same bits: every step is the IEEE operation numpy would have done, in the same type and
order, on the arrays it would have read (numba compiles without fast-math, so nothing is
reordered or contracted into fused multiply-adds).  The leaves are held by the expression, so
nothing recycles or overwrites them before it runs (a load's view is of a snapshot: storage.py
copies before the first store into a block that was handed out).

One compilation per expression shape (its operations, which operands are shared, the type), per
process; an expression stops growing at MAX_NODES steps and is computed then.
"""
from __future__ import annotations

import numba
import numpy as np

from .tensor import POOL

MIN_ELEMENTS = 1 << 16   # results smaller than this are computed at once: compiling would cost more
MAX_NODES = 12           # steps in one expression (each leaf and operation counts)
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*"}
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_COMPILED: dict = {}
_enabled = True


def set_enabled(on: bool) -> bool:
    """Switch deferral (tests compare both ways); returns the previous setting."""
    global _enabled
    prev, _enabled = _enabled, bool(on)
    return prev


def enabled() -> bool:
    return _enabled


class Expression:
    """`op` of two operands, each an Expression or an array aligned to (rows, *block dims);
    `full` is the shape of the result's array."""

    __slots__ = ("op", "args", "dtype", "full", "nodes")

    def __init__(self, op, args, dtype, full):
        self.op, self.args, self.dtype, self.full = op, args, dtype, full
        self.nodes = 1 + sum(a.nodes if type(a) is Expression else 1 for a in args)

    @property
    def rows(self) -> int:
        return self.full[0]

    def evaluate(self) -> np.ndarray:
        leaves, lines, result = _plan(self)
        out = POOL.empty(self.full, self.dtype)
        if len(lines) == 1:             # one step: numpy's own loop (it vectorises a little better)
            a, b = (leaves * 2)[:2] if len(leaves) == 1 else leaves
            return _NUMPY[self.op](a, b, out=out)
        fn = _compiled(self.dtype, tuple(lines), result, len(leaves))
        fn(*[x if x.dtype == self.dtype else x.astype(self.dtype) for x in leaves], out=out)
        return out


def combine(op, a, b, dtype, full):
    """The expression `a op b`, or None when it would be too long (the caller computes then)."""
    e = Expression(op, (a, b), np.dtype(dtype), tuple(full))
    return e if e.nodes <= MAX_NODES else None


def _plan(root):
    """The expression as straight-line code: leaves a0.., steps t0.. (an operand or array used
    twice is computed or passed once).  Returns (leaves, lines, name of the result)."""
    names, leaves, lines = {}, [], []
    return leaves, lines, _visit(root, names, leaves, lines)


def _visit(x, names, leaves, lines):
    # (a plain function, not a closure over itself: a closure would be a reference cycle that
    # keeps the leaves' arrays alive until the garbage collector runs)
    name = names.get(id(x))
    if name is not None:
        return name
    if type(x) is Expression:
        left = _visit(x.args[0], names, leaves, lines)
        right = _visit(x.args[1], names, leaves, lines)
        name = f"t{len(lines)}"
        lines.append(f"{name} = {left} {_SYMBOLS[x.op]} {right}")
    else:
        name = f"a{len(leaves)}"
        leaves.append(x)
    names[id(x)] = name
    return name


def _compiled(dtype, lines, result, n_leaves):
    key = (dtype.str, lines, result, n_leaves)
    fn = _COMPILED.get(key)
    if fn is None:
        args = ", ".join(f"a{i}" for i in range(n_leaves))
        body = "".join(f"    {line}\n" for line in lines)
        namespace = {}
        exec(f"def expression({args}):\n{body}    return {result}\n", namespace)
        kind = "float32" if dtype == np.float32 else "float64"
        fn = numba.vectorize([f"{kind}({', '.join([kind] * n_leaves)})"], nopython=True)(namespace["expression"])
        _COMPILED[key] = fn
    return fn
