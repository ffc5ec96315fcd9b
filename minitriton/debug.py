"""Printing and asserting from inside a kernel: tl.device_print (and `print`), tl.device_assert
(and `assert`), formatted as Triton formats them."""
from __future__ import annotations

import builtins

import numpy as np

from . import context
from .tensor import tensor, to_tensor
from .arithmetic import constexpr_value
from .errors import DeviceAssertionError


def _element(v, hex_) -> str:
    """One value as Triton's device printf writes it: %d for integers, %f for floats, and with
    hex=True the bits (of `v` in its storage type), zero-padded to the type's width."""
    if hex_:
        bits = np.asarray(v).reshape(1).view(f"u{v.dtype.itemsize}")[0]
        return f"0x{int(bits):0{2 * v.dtype.itemsize}x}"
    if v.dtype.kind == "f" or v.dtype.kind == "V" or v.dtype.char in "eE":
        return f"{float(v):f}"
    return str(int(v))


def _prefix(prefix: str, has_values: bool) -> str:
    """Triton's rule: with values, the prefix ends in ': ' and a non-empty one starts with ' '."""
    if not has_values:
        return " " + prefix if prefix else ""
    if not prefix.endswith(" "):
        prefix += " "
    if not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    return prefix


def _values(a, row):
    """Program `row`'s values of `a` in their storage type (a pointer: its byte offset)."""
    if isinstance(a, tensor):
        v = np.asarray(a.v[builtins.min(row, a.rows - 1)])
        if a.buf is not None:
            return v.astype(np.int64) * a.dtype.element_ty.np.itemsize
        return a.dtype.encode(v)
    return np.asarray(constexpr_value(a))


def device_print(prefix, *args, hex=False):
    """Print, for each active program, one line per element of each value, as Triton's compiled
    device_print does: `pid (x, y, z) idx (i, j) prefix: value`, `(operand k)` before the value
    when several are printed, integers in hex (the bits, zero-padded) with hex=True."""
    prefix = constexpr_value(prefix)
    hex_ = bool(constexpr_value(hex))
    if not isinstance(prefix, str):
        raise TypeError(f"tl.device_print: the prefix must be a string, got {prefix!r}")
    for a in args:
        v = constexpr_value(a)
        if not isinstance(v, (tensor, bool, int, float, np.generic)):
            raise TypeError(f"tl.device_print: cannot print {v!r}: only blocks and numbers are printed from a "
                            f"kernel (as in Triton)")
    ctx = context.current()
    active = ctx.active
    head_prefix = _prefix(prefix, bool(args))
    for p in builtins.range(ctx.rows):
        if active is not None and not active[p]:
            continue
        head = "pid ({}, {}, {})".format(*ctx.pid_tuple(p))
        if not args:
            print(head + head_prefix)
            continue
        for k, a in enumerate(args):
            v = _values(a, p)
            as_hex = hex_ or (isinstance(a, tensor) and a.buf is not None)   # pointers print as %p does
            operand = f"(operand {k}) " if len(args) > 1 else ""
            widths = [len(str(n - 1)) for n in v.shape]
            for idx in np.ndindex(*v.shape):
                where = ", ".join(f"{i:{w}}" for i, w in zip(idx, widths))
                print(f"{head} idx ({where}){head_prefix}{operand}{_element(v[idx], as_hex)}")


def kernel_print(*args, **kwargs):
    """Python's print inside a kernel: device_print, as in Triton (printed per program; a first
    argument that is a string is the prefix)."""
    prefix, rest = (args[0], args[1:]) if args and isinstance(constexpr_value(args[0]), str) else ("", args)
    return device_print(prefix, *rest)


def device_assert(cond, msg="", mask=None):
    """Checked only in debug mode (`debug=True` at launch or in `@jit`, or TRITON_DEBUG=1), as
    Triton emits it only then; and only for the programs running here: one that does not take the
    branch holding the assert never executes it (as on a GPU)."""
    if not context.LOCAL.__dict__.get("debug"):
        return
    cond = to_tensor(cond)
    bad = ~cond.v.astype(bool)
    if mask is not None:
        bad = bad & to_tensor(mask).v.astype(bool)
    active = context.current().active
    if active is not None:
        bad = bad & active.reshape((-1,) + (1,) * (bad.ndim - 1))
    if bad.any():
        row = int(np.argwhere(bad.reshape(bad.shape[0], -1).any(1))[0, 0])
        raise DeviceAssertionError(f"device_assert failed in program {context.current().pid_tuple(row)}: {msg} "
                                   f"(device-side assert triggered)")


def expect_zero(x, mask):
    """Triton 3.9's mark of values expected to have underflowed to zero: `x` as it is; in debug
    mode a device assert that it is zero where `mask` holds (the floating-point sanitizer's
    rewrite to `where(mask, 0, x)` is not modelled: minitriton has no FPSAN mode)."""
    x = to_tensor(x)
    device_assert(x == 0, "tl.expect_zero: a value expected to be zero is not", mask=mask)
    return x
