"""What the generator reads in a te computation: element-wise computes inlined into their
consumer, the reductions found, casts seen through, and a float64 evaluation of any expression
(the generated operators' reference)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import te


NUMPY_TYPES = {"float16": np.float16, "float32": np.float32}


class Unsupported(NotImplementedError):
    """The generator has no rule for this expression (it says which)."""


def inline(e):
    """`e` with every read of a compute replaced by that compute's body at the read's indices
    (a compute holding a reduction only where it is read element-wise: its own indices)."""
    if isinstance(e, te.Access) and isinstance(e.tensor, te.Compute):
        t = e.tensor
        plain = all(isinstance(i, te.Var) for i in e.index) and len(set(map(id, e.index))) == len(e.index)
        if not plain and reductions(t.body, []):
            raise Unsupported(f"{e!r}: reading the reduction {t.name} at shifted or repeated indices")
        return inline(_substitute(t.body, dict(zip(map(id, t.axes), e.index))))
    return _rebuild(e, inline)


def _rebuild(e, f):
    """`e` with `f` applied to its children."""
    if isinstance(e, te.Access):
        return te.Access(e.tensor, tuple(f(i) for i in e.index))
    if isinstance(e, te.Binary):
        return te.Binary(e.op, f(e.a), f(e.b))
    if isinstance(e, te.Compare):
        return te.Compare(e.op, f(e.a), f(e.b))
    if isinstance(e, te.All):
        return te.All(f(c) for c in e.conds)
    if isinstance(e, te.IfThenElse):
        return te.IfThenElse(f(e.cond), f(e.then), f(e.otherwise))
    if isinstance(e, te.Call):
        return te.Call(e.fn, f(e.arg), e.dtype)
    if isinstance(e, te.Reduce):
        return te.Reduce(e.kind, f(e.body), e.axes)
    return e


def _substitute(e, env):
    if isinstance(e, te.Var) and id(e) in env:
        return env[id(e)]
    return _rebuild(e, lambda x: _substitute(x, env))


def reductions(e, out):
    if isinstance(e, te.Reduce):
        out.append(e)
    for c in te.children(e):
        reductions(c, out)
    return out


def strip_casts(e):
    while isinstance(e, te.Call) and e.fn == "cast":
        e = e.arg
    return e


def size_value(s, env):
    """A size's value: an int, a te.var bound in `env`, or arithmetic on them."""
    if isinstance(s, int):
        return s
    if isinstance(s, te.Const):
        return s.value
    if isinstance(s, te.Var):
        if s.name not in env:
            raise TypeError(f"the shape needs {s.name}")
        return int(env[s.name])
    if isinstance(s, te.Binary):
        a, b = size_value(s.a, env), size_value(s.b, env)
        if s.op in ("//", "/"):
            return a // b
        return a + b if s.op == "+" else a - b if s.op == "-" else a * b
    raise TypeError(f"{s!r} is not a size")


def element_strides(x):
    return tuple(s // x.itemsize for s in x.strides)


def evaluate(t: te.Tensor, bound: dict) -> np.ndarray:
    """A tensor's values in float64, by numpy over its whole index space (small sizes only)."""
    if isinstance(t, te.Placeholder):
        return np.asarray(bound[t], np.float64)
    sizes = {}
    for p, x in bound.items():
        for s, n in zip(p.shape, x.shape):
            if isinstance(s, te.Var):
                sizes[s.name] = n
    shape = tuple(size_value(s, sizes) for s in t.shape)
    grids = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    env = {id(a): g for a, g in zip(t.axes, grids)}
    return np.broadcast_to(_eval(t.body, env, bound, sizes), shape).astype(np.float64)


_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide}


def _eval(e, env, bound, sizes):
    if isinstance(e, te.Const):
        return e.value
    if isinstance(e, te.Var):
        return env[id(e)] if id(e) in env else size_value(e, sizes)
    if isinstance(e, te.Binary):
        return _BINARY[e.op](_eval(e.a, env, bound, sizes), _eval(e.b, env, bound, sizes))
    if isinstance(e, te.Compare):
        a, b = _eval(e.a, env, bound, sizes), _eval(e.b, env, bound, sizes)
        return np.less(a, b) if e.op == "<" else np.less_equal(a, b)
    if isinstance(e, te.All):
        return np.logical_and.reduce([np.asarray(_eval(c, env, bound, sizes)) for c in e.conds])
    if isinstance(e, te.IfThenElse):
        cond = _eval(e.cond, env, bound, sizes)
        return np.where(cond, _eval(e.then, env, bound, sizes), _eval(e.otherwise, env, bound, sizes))
    if isinstance(e, te.Call):
        x = np.asarray(_eval(e.arg, env, bound, sizes), np.float64)
        if e.fn == "relu":
            return np.maximum(x, 0.0)
        if e.fn == "exp":
            return np.exp(x)
        if e.fn == "gelu":
            return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
        return x.astype(NUMPY_TYPES.get(e.dtype, np.float32)).astype(np.float64)
    if isinstance(e, te.Access):
        values = evaluate(e.tensor, bound) if isinstance(e.tensor, te.Compute) else np.asarray(bound[e.tensor], np.float64)
        # indices outside the tensor are read only where a condition discards them: clipped
        idx = tuple(np.clip(np.asarray(_eval(i, env, bound, sizes)), 0, n - 1) for i, n in zip(e.index, values.shape))
        return values[idx]
    if isinstance(e, te.Reduce):
        extents = [size_value(a.extent, sizes) for a in e.axes]
        parts = None
        for point in itertools.product(*(range(n) for n in extents)):
            for a, r in zip(e.axes, point):
                env[id(a)] = r
            v = np.asarray(_eval(e.body, env, bound, sizes), np.float64)
            parts = v if parts is None else (parts + v if e.kind == "sum" else np.maximum(parts, v))
        for a in e.axes:
            del env[id(a)]
        return parts
    raise Unsupported(f"{e!r}")
