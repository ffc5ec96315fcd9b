"""Merging the values of programs that took different paths: after an `if` whose programs
disagreed, when programs leave a loop at different trips, when a narrowed loop's values are
spread back (control.py decides when; this module says how a value of each kind is merged)."""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import narrowing
from .block_ptr import block_pointer
from .dot import select_chains
from .elementwise import where
from .tensor import tensor


class _Undefined:
    """The value of a variable not yet assigned on this path."""

    def __repr__(self):
        return "<undefined>"


UNDEF = _Undefined()



def select(mask: np.ndarray, a, b, name="value"):
    """`a` for programs in mask, `b` for the others."""
    if a is b or a is UNDEF:
        return b if a is UNDEF else a
    if b is UNDEF:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(select(mask, x, y, name) for x, y in zip(a, b))
    if isinstance(a, block_pointer) and isinstance(b, block_pointer) and a.block_shape == b.block_shape:
        pick = lambda xs, ys: [select(mask, x, y, name) for x, y in zip(xs, ys)]  # noqa: E731
        return block_pointer(select(mask, a.base, b.base, name), pick(a.shape, b.shape), pick(a.strides, b.strides),
                             pick(a.offsets, b.offsets), a.block_shape, a.order)
    pa, pb = narrowing.parts(a), narrowing.parts(b)
    if pa is not None and pb is not None and pa[0] == pb[0]:   # an aggregate, a tensor descriptor: part by part
        return pa[2]({k: select(mask, v, pb[1][k], f"{name}.{k}") for k, v in pa[1].items()})
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):     # such a value's shape or strides
        return [select(mask, x, y, name) for x, y in zip(a, b)]
    if isinstance(a, tensor) and isinstance(b, tensor) and a.lazy is not None and b.lazy is not None:
        r = select_chains(mask.reshape(-1), a, b)
        if r is not None:
            return r
    if isinstance(a, tensor) or isinstance(b, tensor):
        cond = tensor(mask.reshape(-1), D.int1, ())
        return where(cond, a, b, every_program=True)
    if isinstance(a, (bool, int, float, np.generic)) and isinstance(b, (bool, int, float, np.generic)):
        if type(a) is type(b) and a == b:
            return a
        return where(tensor(mask.reshape(-1), D.int1, ()), a, b, every_program=True)
    if a == b:
        return a
    raise TypeError(f"variable '{name}' holds {a!r} in some programs and {b!r} in others; only tensors and "
                    f"numbers can differ between programs after divergent control flow")


def merge(mask, names, a_vals, b_vals):
    return tuple(select(mask, a, b, n) for n, a, b in zip(names, a_vals, b_vals))


class ExitRows:
    """The values programs held when they left a loop, gathered row by row.

    Programs leave a divergent loop a few at a time (causal attention's query blocks, one per
    trip).  Merging each departure into the values kept so far with `select` costs a pass over
    every program's block, once per trip; copying just the departing programs' rows into an
    array the loop owns costs their rows.  A value that is not a plain block of the same type
    as the ones kept before it (a number, a tuple, a block pointer, a dtype that changed) is
    merged with `select` as before."""

    def __init__(self, names, rows):
        self.names, self.rows = names, rows
        self.vals = None        # per name: a tensor, or a value merged with select
        self.owned = None       # per name: its array was allocated here (written in place)

    def add(self, gone, vals):
        if self.vals is None:
            self.vals, self.owned = list(vals), [False] * len(vals)
            return
        idx = None
        for j, (name, new) in enumerate(zip(self.names, vals)):
            old = self.vals[j]
            if old is new:
                continue
            if idx is None:
                idx = np.flatnonzero(gone)
            kept = select_chains(gone, new, old) if _chains(old, new) else None
            if kept is None:
                kept = self._into(j, old, new, idx)
            self.vals[j] = kept if kept is not None else select(gone, new, old, name)

    def _into(self, j, old, new, idx):
        """old with rows idx taken from new, written into an array owned here; None when the
        two are not plain blocks that agree in type and shape."""
        if type(old) is not tensor or type(new) is not tensor or old.dtype is not new.dtype \
                or old.shape != new.shape or old.buf is not new.buf:
            return None
        rows = self.rows
        if _affine_only(old) and _affine_only(new):     # index and pointer blocks stay affine
            if old.aff[1] != new.aff[1]:
                return None
            c = old.aff[0] if self.owned[j] else np.broadcast_to(old.aff[0], (rows,)).copy()
            c[idx] = np.broadcast_to(new.aff[0], (rows,))[idx]
            self.owned[j] = True
            return old if c is old.aff[0] else tensor(None, old.dtype, old.shape, aff=(c, old.aff[1]), buf=old.buf)
        if _affine_only(old) or _affine_only(new):
            return None
        a, b = old.v, new.v
        if a.dtype != b.dtype or a.shape[0] not in (1, rows) or b.shape[0] not in (1, rows):
            return None
        if not self.owned[j]:
            a = np.array(np.broadcast_to(a, (rows,) + a.shape[1:]))
            self.owned[j] = True
        a[idx] = b[idx] if b.shape[0] == rows else b[0]
        # a new tensor unless `old` holds nothing derived from its values: an integer scalar
        # keeps its affine form beside them (tensor.__init__), which the write made stale
        return old if a is old.v and old.aff is None else tensor(a, old.dtype, old.shape, buf=old.buf)

    def over(self, left, vals):
        """The loop's values after it: these for the programs that left, `vals` for the rest."""
        self.add(~left, vals)
        return tuple(self.vals)


def _chains(a, b) -> bool:
    """Both deferred dot chains: a loop's accumulator before and after some trips stays one
    ragged chain, unevaluated, so each program still gets one product over its whole K."""
    return type(a) is tensor and type(b) is tensor and a.lazy is not None and b.lazy is not None


def _affine_only(x: tensor) -> bool:
    return x._v is None and x.lazy is None and x.pv is None and x.win is None and x.aff is not None
