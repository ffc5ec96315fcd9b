"""The types a loop or an `if` may not change.  Triton's front end compiles a loop only if every
variable it carries from trip to trip keeps its type and shape, and an `if` on a runtime
condition only if every variable a side reassigns keeps the type it had; it refuses the kernel
otherwise ("Loop-carried variable acc has initial type int32 but is re-assigned to fp32").
minitriton runs the loop instead of compiling it, so it checks the values as they go (control.py
calls these at each trip and after each side): a kernel that runs here also compiles there.

A number assigned in a kernel is a tensor in Triton (int32, uint32, int64 or fp32 by its value,
dtypes.literal_dtype); minitriton keeps it as a Python number with its exact value until it
meets a tensor, so two Python numbers of one kind never count as a change.  What Triton does not
type this way (constexprs, tuples, aggregates, block pointers, descriptors) is passed over.
"""
from __future__ import annotations

from .block_ptr import block_pointer
from .dtypes import literal_dtype
from .tensor import tensor


def front_end_type(v):
    """(dtype, shape, Python type or None) of a value as Triton types it, or None if it does not."""
    if type(v) in (bool, int, float):
        try:
            return literal_dtype(v), (), type(v)
        except ValueError:
            return None
    if isinstance(v, tensor) and not isinstance(v, block_pointer):
        return v.dtype, tuple(v.shape), None
    return None


def types(vals) -> tuple:
    return tuple(front_end_type(v) for v in vals)


def text(t) -> str:
    """A type as it reads in a message: `fp32`, `int32[1, 4]`."""
    return str(t[0]) + (f"[{', '.join(str(n) for n in t[1])}]" if t[1] else "")


def check(names, firsts, vals, message):
    """Raise AssertionError(message(name, was, now)) for the first variable whose type changed."""
    for name, first, v in zip(names, firsts, vals):
        now = front_end_type(v)
        if first is None or now is None or now[:2] == first[:2] or (first[2] is not None and first[2] is now[2]):
            continue
        raise AssertionError(message(name, text(first), text(now)))
