"""Printing and asserting from inside a kernel: tl.device_print (and `print`), tl.device_assert
(and `assert`), formatted as Triton formats them."""
from __future__ import annotations

import builtins

import numpy as np

from . import context
from .tensor import tensor, to_tensor
from .arithmetic import constexpr_value


def _format(v, hex_):
    v = np.asarray(v)
    if hex_ and v.dtype.kind in "iub":
        width = v.dtype.itemsize * 2
        bits = v.astype(v.dtype.str.replace("i", "u").replace("b1", "u1"), copy=False)
        return np.array2string(bits, formatter={"int": lambda x: f"0x{int(x):0{width}x}"}, max_line_width=10 ** 6)
    return np.array2string(v, max_line_width=10 ** 6, threshold=10 ** 6) if v.ndim else str(v)


def device_print(prefix, *args, hex=False):
    """Print, for each active program, its pid, the prefix and the values (in hex for integers
    with hex=True)."""
    prefix = constexpr_value(prefix)
    if not isinstance(prefix, str):
        raise TypeError(f"tl.device_print: the prefix must be a string, got {prefix!r}")
    ctx = context.current()
    active = ctx.active
    for p in builtins.range(ctx.rows):
        if active is not None and not active[p]:
            continue
        vals = [_format(a.v[builtins.min(p, a.rows - 1)], hex) if isinstance(a, tensor) else str(constexpr_value(a)) for a in args]
        print(f"pid {ctx.pid_tuple(p)} {prefix}", *vals)


def kernel_print(*args, **kwargs):
    """Python's print inside a kernel: device_print, as in Triton (values printed per program)."""
    if any(isinstance(a, tensor) for a in args):
        prefix, rest = (args[0], args[1:]) if args and isinstance(constexpr_value(args[0]), str) else ("", args)
        return device_print(prefix, *rest)
    return print(*args, **kwargs)


def device_assert(cond, msg="", mask=None):
    cond = to_tensor(cond)
    bad = ~cond.v.astype(bool)
    if mask is not None:
        bad &= to_tensor(mask).v.astype(bool)
    if bad.any():
        row = int(np.argwhere(bad.reshape(bad.shape[0], -1).any(1))[0, 0])
        raise AssertionError(f"device_assert failed in program {context.current().pid_tuple(row)}: {msg}")
