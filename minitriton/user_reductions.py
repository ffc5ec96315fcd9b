"""Reductions and scans with a user's combine function: `tl.reduce`, `tl.associative_scan`,
`tl.cumprod`.

The combine function is the kernel author's own `@jit` function of two (or 2n, for tuples of
blocks) operands, and it is called on whole blocks, never element by element: a reduction
halves the axis each step (lanes i and i + n/2 meet, as a GPU's butterfly shuffles pair
them), a scan doubles its reach each step (Hillis and Steele).  Both keep the left operand
the earlier element, so a combine function that is associative but not commutative (an
argmax that keeps the first index on ties, a matrix product) gives Triton's answer.
"""
from __future__ import annotations

import numpy as np

from .dtypes import constexpr_value
from . import dtypes as D
from .errors import BlockCondition, CompilationError
from .elementwise import map_elementwise
from .tensor import compile_time_int, tensor, to_tensor, constexpr
from .shapes import broadcast_to, reshape


def part(x: tensor, axis: int, start: int, stop: int) -> tensor:
    """Elements start..stop-1 of block x along `axis`."""
    v = x.v[(slice(None),) * (axis + 1) + (slice(start, stop),)]
    shape = list(x.shape)
    shape[axis] = stop - start
    return tensor(v, x.dtype, tuple(shape))


def concat(xs, axis: int) -> tensor:
    """Blocks joined along `axis` (they agree in dtype and in every other dimension)."""
    rows = max(x.rows for x in xs)
    vs = [np.broadcast_to(x.v, (rows,) + x.v.shape[1:]) for x in xs]
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return tensor(np.concatenate(vs, axis=axis + 1), xs[0].dtype, tuple(shape))


def _operands(input, axis, what):
    single = not isinstance(input, (tuple, list))
    xs = [to_tensor(x) for x in ([input] if single else input)]
    if not xs:
        raise ValueError(f"tl.{what} needs at least one block")
    shape = xs[0].shape
    if any(x.shape != shape for x in xs):
        raise ValueError(f"tl.{what}: every input must have the same shape, got {[list(x.shape) for x in xs]}")
    if not shape:
        raise ValueError(f"tl.{what} needs blocks, not scalars")
    axis = constexpr_value(axis)
    if axis is not None:
        axis = compile_time_int(axis, f"tl.{what}'s axis")
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"tl.{what}: axis {axis} is out of range for blocks of shape {list(shape)}")
        axis %= len(shape)
    return single, xs, axis


def _check_lambda(combine_fn, what):
    """A lambda as the combine function may capture constexprs only, as in Triton: a block or a
    runtime scalar of the kernel is refused (Triton compiles the lambda on its own)."""
    if getattr(combine_fn, "__name__", None) != "<lambda>":
        return
    for name, cell in zip(combine_fn.__code__.co_freevars, combine_fn.__closure__ or ()):
        try:
            captured = cell.cell_contents
        except ValueError:
            continue
        if isinstance(captured, tensor):
            raise CompilationError(f"lambda can only capture constexpr values: the combine function of tl.{what} "
                                   f"captures '{name}', a block or runtime value of the kernel; pass it in as an "
                                   f"operand or make it a tl.constexpr")


def _call(combine_fn, left, right, n, what):
    try:
        out = combine_fn(*left, *right)
    except BlockCondition:
        # it branches on its operands (`if a <= b: return a`): Triton runs a combine function on
        # scalars, so here it runs once per element, each element's branch its own
        out = map_elementwise(combine_fn, *left, *right)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(out) != n:
        raise TypeError(f"tl.{what}: the combine function returned {len(out)} values for {n} inputs")
    shape = left[0].shape
    result = []
    for o, l in zip(out, left):
        o = to_tensor(o, l)
        if o.shape != shape:
            o = broadcast_to(o, shape)
        if o.dtype is not l.dtype:
            o = o.to(l.dtype)
        result.append(o)
    return result


def reduce(input, axis, combine_fn, keep_dims=False):
    _check_lambda(combine_fn, "reduce")
    single, xs, axis = _operands(input, axis, "reduce")
    full_shape, every_axis = xs[0].shape, axis is None
    if every_axis:
        xs = [reshape(x, (x.numel,)) for x in xs]
        axis = 0
    n = xs[0].shape[axis]
    while n > 1:
        half = n // 2
        out = _call(combine_fn, [part(x, axis, 0, half) for x in xs],
                    [part(x, axis, half, 2 * half) for x in xs], len(xs), "reduce")
        if n % 2:  # an odd length carries its last element to the next step
            out = [concat([o, part(x, axis, 2 * half, n)], axis) for o, x in zip(out, xs)]
        xs, n = out, n - half
    if constexpr_value(keep_dims):
        shape = tuple(1 if every_axis or d == axis else s for d, s in enumerate(full_shape))
    elif every_axis:
        shape = ()
    else:
        shape = tuple(s for d, s in enumerate(xs[0].shape) if d != axis)
    out = [tensor(x.v.reshape((x.rows,) + shape), x.dtype, shape) for x in xs]
    return out[0] if single else tuple(out)


def associative_scan(input, axis, combine_fn, reverse=False):
    _check_lambda(combine_fn, "associative_scan")
    single, xs, axis = _operands(input, axis, "associative_scan")
    if axis is None:
        raise ValueError("tl.associative_scan needs an axis")
    if constexpr_value(reverse):   # scanned from the end: the block reversed along the axis, then back
        xs = [tensor(np.flip(x.v, axis + 1), x.dtype, x.shape) for x in xs]
    n, step = xs[0].shape[axis], 1
    while step < n:  # element i takes combine(element i - step, element i)
        later = _call(combine_fn, [part(x, axis, 0, n - step) for x in xs],
                      [part(x, axis, step, n) for x in xs], len(xs), "associative_scan")
        xs = [concat([part(x, axis, 0, step), y], axis) for x, y in zip(xs, later)]
        step *= 2
    if constexpr_value(reverse):
        xs = [tensor(np.flip(x.v, axis + 1), x.dtype, x.shape) for x in xs]
    return xs[0] if single else tuple(xs)


def _multiply(a, b):
    return a * b


def cumprod(input, axis=0, reverse=False):
    x = to_tensor(input)
    if x.dtype is D.bfloat16:  # as Triton: bf16 scans run in fp32
        x = x.to(D.float32)
    return associative_scan(x, axis, _multiply, reverse)
