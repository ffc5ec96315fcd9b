"""Moving a launch's values to a subset of its programs and back.

When few programs are still running a divergent loop (the grouped GEMM's tiles, the last trip
of a persistent kernel), control.Loop narrows the launch to them: every value the loop uses
is cut down to their rows (`take`), the loop runs on those rows only, and what it assigned is
spread back (`spread`), the other programs keeping their own values.  A GPU pays nothing for
programs that are not running; narrowing lets the lockstep executor pay little.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from .block_ptr import block_pointer
from .descriptors import tensor_descriptor
from . import aggregates
from .tensor import tensor, constexpr

_SHARED = (constexpr, D.dtype, D.pointer_type)
_PLAIN = {int, float, bool, str, type(None), constexpr}


def parts(x):
    """A value made of per-program parts (an aggregate, a tensor descriptor): (what two such
    values must share to be merged, its parts by name, a function building the same kind of value
    from new parts), or None.  Merging (merging.select) and moving between row sets (take,
    widen) go through it, part by part."""
    if aggregates.is_aggregate(x):
        return type(x), {f: getattr(x, f) for f in aggregates.fields(x)}, lambda p: aggregates.rebuild(x, p)
    if isinstance(x, tensor_descriptor):
        return ((tuple(x.block_shape), x.padding), {"base": x.base, "shape": x.shape, "strides": x.strides},
                lambda p: tensor_descriptor(p["base"], p["shape"], p["strides"], x.block_shape, x.padding))
    return None


def movable(x) -> bool:
    """Whether `take` and `widen` know how to move this value between row sets: blocks, block
    pointers, containers of them, and values that are the same for every program (numbers,
    types, functions); not lists or dicts (the loop could change them in place, and its
    changes would stay with the narrowed copy), nor the executor's own objects (a range)."""
    kind = type(x)
    if kind is tensor or kind in _PLAIN:     # the usual values first: a loop's reads are mostly these
        return True
    if isinstance(x, tuple):
        return all(movable(v) for v in x)
    if isinstance(x, (list, dict, set)):
        return False
    split = parts(x)
    if split is not None:
        return all(movable(v) for v in split[1].values())
    if isinstance(x, (tensor, block_pointer, _SHARED)):
        return True
    module = type(x).__module__ or ""
    return not module.startswith("minitriton") or type(x).__name__ in ("JITFunction", "_Undefined")


def take(x, idx: np.ndarray, rows: int):
    """x's values for programs idx (increasing, of `rows`); values shared by all programs stay
    shared.  A run of consecutive programs (a lock's round, the programs left in a loop that
    began as a run) is taken as a view: the values are never modified in place, and copying
    them was most of what a round of a locked region cost."""
    return _take(x, idx, _rows_of(idx), rows)


def _rows_of(idx: np.ndarray):
    """A basic slice selecting idx when it is a run of consecutive rows, else idx itself."""
    n = idx.shape[0]
    if n and int(idx[-1]) - int(idx[0]) == n - 1:
        return slice(int(idx[0]), int(idx[0]) + n)
    return idx


def _take(x, idx, sel, rows):
    if type(x) is tensor:       # the usual value first: none of the questions below apply to it
        return _take_block(x, idx, sel, rows)
    if isinstance(x, tuple):
        return tuple(_take(v, idx, sel, rows) for v in x)
    if isinstance(x, list):  # a block pointer's fields
        return [_take(v, idx, sel, rows) for v in x]
    if isinstance(x, block_pointer):   # the base too: `Q + program's offset` differs between programs
        return block_pointer(_take(x.base, idx, sel, rows), _take(x.shape, idx, sel, rows),
                             _take(x.strides, idx, sel, rows), _take(x.offsets, idx, sel, rows), x.block_shape, x.order)
    split = parts(x)
    if split is not None:
        return split[2]({k: _take(v, idx, sel, rows) for k, v in split[1].items()})
    if not isinstance(x, tensor):
        return x
    return _take_block(x, idx, sel, rows)


def _take_block(x, idx, sel, rows):
    if x.rows != rows or rows == 1:
        return x
    if x._v is None and x.lazy is None and x.aff is not None:
        return tensor(None, x.dtype, x.shape, aff=(x.aff[0][sel], x.aff[1]), buf=x.buf)
    if x._v is None and x.lazy is None and x.pv is None and x.win is not None:
        src, base, steps = x.win
        out = tensor(None, x.dtype, x.shape)
        out.win = (src.subset(idx) if hasattr(src, "subset") else src, base[sel], steps)
        return out
    aff = (x.aff[0][sel], x.aff[1]) if x.aff is not None and x.aff[0].shape[0] == rows else None
    v = x.v[sel]
    return tensor(v if type(sel) is slice else np.ascontiguousarray(v), x.dtype, x.shape, aff=aff, buf=x.buf)


def widen(x, idx: np.ndarray, rows: int):
    """A value of programs idx as a value of all `rows` programs (the others' rows arbitrary)."""
    if isinstance(x, tuple):
        return tuple(widen(v, idx, rows) for v in x)
    if isinstance(x, list):
        return [widen(v, idx, rows) for v in x]
    if isinstance(x, block_pointer):
        return block_pointer(widen(x.base, idx, rows), widen(x.shape, idx, rows), widen(x.strides, idx, rows),
                             widen(x.offsets, idx, rows), x.block_shape, x.order)
    split = parts(x)
    if split is not None:
        return split[2]({k: widen(v, idx, rows) for k, v in split[1].items()})
    if not isinstance(x, tensor) or x.rows == 1:
        return x
    if x._v is None and x.lazy is None and x.aff is not None:
        c = np.zeros(rows, np.int64)
        c[idx] = x.aff[0]
        return tensor(None, x.dtype, x.shape, aff=(c, x.aff[1]), buf=x.buf)
    v = x.v
    full = np.zeros((rows,) + v.shape[1:], v.dtype)
    full[idx] = v
    return tensor(full, x.dtype, x.shape, buf=x.buf)
