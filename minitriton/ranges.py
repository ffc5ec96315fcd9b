"""Loops: `tl.range` / `tl.static_range` (and `range` inside kernels), with bounds that may differ
between programs."""
from __future__ import annotations

import builtins

import numpy as np

from . import context
from . import dtypes as D
from .tensor import tensor
from .arithmetic import constexpr_value


class Range:
    """`tl.range`/`tl.static_range` (and Python's `range` inside kernels): Triton's keyword
    arguments are accepted.  Bounds may differ between programs: a lowered `for` then gives
    each program its own trip count (control.Loop)."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, **_):
        start, end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.args = (constexpr_value(start), constexpr_value(end), 1 if step is None else constexpr_value(step))
        if any(isinstance(a, tensor) and (a.shape or not a.dtype.is_int()) for a in self.args) or \
                any(not isinstance(a, (tensor, int, np.integer)) for a in self.args):
            raise TypeError(f"range bounds must be integer scalars, got {self.args}")

    @property
    def _r(self):
        return builtins.range(*(int(a) for a in self.args))

    def per_program(self, st):
        """(start, step, trips) arrays when the bounds differ between the active programs, else None."""
        vals = [a.v.reshape(-1).astype(np.int64) if isinstance(a, tensor) else np.array([int(a)], np.int64)
                for a in self.args]
        if all(v.size == 1 for v in vals):
            return None
        start, end, step = (np.broadcast_to(v, (st.rows,)) for v in vals)
        act = st.active
        sel = slice(None) if act is None else act
        if all((v[sel] == v[sel][:1]).all() for v in (start, end, step) if v[sel].size):
            return None
        if (step[sel] == 0).any():
            raise ValueError("range step must not be zero")
        trips = np.maximum(0, np.where(step > 0, (end - start + step - 1) // np.where(step > 0, step, 1),
                                       (start - end - step - 1) // np.where(step < 0, -step, 1)))
        if act is not None:
            trips = np.where(act, trips, 0)
        dt = D.int32
        for a in self.args:
            if isinstance(a, tensor):
                dt = D.promote(dt, a.dtype)
        return _RangeValues(start, step, dt), None, trips

    def __iter__(self):
        r = self._r
        st = context.LOCAL.__dict__.get("state")
        if st is not None and st.counts is not None:
            st.counts.trips += len(r)
        return iter(r)

    def __len__(self):
        return len(self._r)


class _RangeValues:
    """Trip t's loop variable for every program: start + step * t."""

    def __init__(self, start, step, dtype):
        self.start, self.step, self.dtype = start, step, dtype

    def __call__(self, t):
        return tensor(None, self.dtype, (), aff=(self.start + self.step * t, ()))


class StaticRange(Range):
    """`tl.static_range`: unrolled at compile time, so its bounds must be compile-time values
    (constexprs, Python numbers, integer arguments equal to 1); a runtime scalar is refused with
    Triton's assertion, which checks the first argument as the start even when it is the end."""

    def __init__(self, arg1, arg2=None, step=None, **kw):
        for value, what in ((arg1, "start"), (arg2, "end"), (step, "step")):
            if isinstance(value, tensor):
                raise AssertionError(f"{value} used as tl.static_range {what} value is not a constexpr")
        super().__init__(arg1, arg2, step, **kw)


range = Range
static_range = StaticRange


class condition:
    """`while tl.condition(i < n, disable_licm=True):` — newer Triton's way to pass loop options
    to a `while`: the loop tests `.condition`.  The option only steers the GPU compiler's code
    motion, so here the loop is the same loop without it."""

    def __init__(self, condition, disable_licm=False):
        self.condition, self.disable_licm = condition, bool(disable_licm)

    def __bool__(self):
        raise TypeError("tl.condition(...) is a while loop's condition; test its .condition elsewhere")
