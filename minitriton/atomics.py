"""Atomic read-modify-write operations.

An atomic acts once per active program and lane, even when its pointer and value are the
same in every program (a counter, a lock): programs take turns in program order (x fastest,
then y, then z: the order `one_program_at_a_time` runs them in), lanes in row-major order
within a program, and each gets the old value it saw.  Integer atomics are exact at every
width; fp16 atomics round each result to fp16.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import fast_loops
from . import context
from .memory import (check_not_const, check_pointer, count_access, access_mask, load, materialized, program_addresses,
                     store, values_for)
from .tensor import tensor, broadcast_rows

_SEMANTICS = (None, "acquire", "release", "acq_rel", "relaxed")
_SCOPES = (None, "gpu", "cta", "sys")


def _check_order(what, sem, scope, sems=_SEMANTICS[1:]):
    """`sems`: the memory orders this atomic takes (a load has no release, a store no acquire)."""
    if sem is not None and sem not in sems:
        raise ValueError(f"tl.{what}: sem must be one of {sems}, got {sem!r}")
    if scope not in _SCOPES:
        raise ValueError(f"tl.{what}: scope must be one of {_SCOPES[1:]}, got {scope!r}")


def _lanes(pointer, m, arrays, what):
    """Storage offsets, per-lane operands and the active-lane selector, all flat, one row per
    program of the launch group (so a uniform atomic still acts once per program)."""
    st = context.current()
    off, m = materialized(pointer, m, what, max([st.rows] + [a.shape[0] for a in arrays]))
    full = off.shape
    flat = [broadcast_rows(a, full).reshape(-1) for a in arrays]
    sel = None if m is None else m.reshape(-1)      # materialized broadcast it to `full`
    return full, off.reshape(-1), flat, sel


def _note_write(dst, off, old):
    """Count the atomic as a write if it changed memory (a failed compare-and-swap does not):
    control.Loop uses the count to tell a spinning loop from one that makes progress."""
    if off.size and (dst[off] != old).any():
        context.current().writes += 1


_INT_RANGES: dict = {}      # integer dtype -> (lowest, highest): asked by every lock's atomics


def _int_operand(x, buf):
    """x when it is a Python int the (integer) buffer's type holds, else None."""
    if type(x) is not int:
        return None
    dt = buf.dtype
    bounds = _INT_RANGES.get(dt)
    if bounds is None:
        if not dt.is_int() or dt.is_bool():
            return None
        bounds = _INT_RANGES[dt] = D.int_range(dt)
    return x if bounds[0] <= x <= bounds[1] else None


def _scalar_fast(pointer, operands, mask=None):
    """(storage, offsets, operands as arrays) for an atomic on one address per program (a lock,
    a counter) with Python int operands and no mask (memory.program_addresses), else None."""
    if mask is not None:
        return None
    ints = [_int_operand(x, pointer.buf) for x in operands]
    if None in ints:
        return None
    off = program_addresses(pointer)
    if off is None:
        return None
    dst = pointer.buf.storage.writable()
    arrays = []
    for x in ints:              # (np.full costs three times an empty array filled)
        a = np.empty(off.shape[0], dst.dtype)
        a.fill(x)
        arrays.append(a)
    return dst, off, arrays


def _atomic(op, pointer, val, mask, sem, scope):
    what = f"atomic_{op}"
    pointer = check_pointer(pointer, what)
    check_not_const(pointer)
    _check_order(what, sem, scope)
    buf = pointer.buf
    buf.check_writable()
    fast = _scalar_fast(pointer, (val,), mask)
    if fast is not None:
        dst, off, (vals,) = fast
        seen = fast_loops.atomic_apply(dst, off, vals, op, False)
        _note_write(dst, off, seen)
        return tensor(seen, buf.dtype, ())
    vals = values_for(pointer, val, what)
    if op in ("and", "or", "xor") and not buf.dtype.is_int():
        raise TypeError(f"tl.{what} needs an integer argument, got {buf.dtype} ('{buf.name}')")
    m = access_mask(mask, pointer.shape, what)
    count_access(pointer, m, "atomics")  # a traced launch runs atomics too (on a copy it drops): they may be tickets
    full, off, (vals,), sel = _lanes(pointer, m, [vals], what)
    dst = buf.storage.writable()
    old = np.zeros(off.size, dst.dtype)
    if sel is not None:
        off, vals = off[sel], vals[sel]
    seen = fast_loops.atomic_apply(dst, off, vals, op, buf.dtype is D.float16) if off.size else old[:0]
    if sel is None:
        old[:] = seen
    else:
        old[sel] = seen
    _note_write(dst, off, seen)
    return tensor(old.reshape(full), buf.dtype, pointer.shape)


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Compare-and-swap, lane by lane in program order; returns the old values."""
    pointer = check_pointer(pointer, "atomic_cas")
    check_not_const(pointer)
    _check_order("atomic_cas", sem, scope)
    buf = pointer.buf
    buf.check_writable()
    fast = _scalar_fast(pointer, (cmp, val))
    if fast is not None:
        dst, off, (cmps, vals) = fast
        seen = fast_loops.atomic_cas(dst, off, cmps, vals)
        _note_write(dst, off, seen)
        return tensor(seen, buf.dtype, ())
    cmps, vals = values_for(pointer, cmp, "atomic_cas"), values_for(pointer, val, "atomic_cas")
    m = access_mask(None, pointer.shape, "atomic_cas")
    count_access(pointer, m, "atomics")
    full, off, (cmps, vals), sel = _lanes(pointer, m, [cmps, vals], "atomic_cas")
    dst = buf.storage.writable()
    old = np.zeros(off.size, dst.dtype)
    if sel is not None:
        off, cmps, vals = off[sel], cmps[sel], vals[sel]
    seen = fast_loops.atomic_cas(dst, off, cmps, vals) if off.size else old[:0]
    if sel is None:
        old[:] = seen
    else:
        old[sel] = seen
    _note_write(dst, off, seen)
    return tensor(old.reshape(full), buf.dtype, pointer.shape)


def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("add", pointer, val, mask, sem, scope)


def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("max", pointer, val, mask, sem, scope)


def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("min", pointer, val, mask, sem, scope)


def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("xchg", pointer, val, mask, sem, scope)


def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("and", pointer, val, mask, sem, scope)


def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("or", pointer, val, mask, sem, scope)


def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("xor", pointer, val, mask, sem, scope)


def atomic_load(pointer, mask=None, sem=None, scope=None):
    """Triton 3.9's atomic load ("acquire", the default, or "relaxed").  Programs take turns
    here, so it reads what the programs before it stored, as every load does; a masked-off lane's
    value is unspecified (0 here).  Loop-invariant code motion leaves it in its loop (hoisting.py
    moves only calls it knows to be pure), so a spin on it sees other programs' stores."""
    _check_order("atomic_load", sem, scope, ("acquire", "relaxed"))
    return load(check_pointer(pointer, "atomic_load"), mask=mask, volatile=True)


def atomic_store(pointer, val, mask=None, sem=None, scope=None):
    """Triton 3.9's atomic store ("release", the default, or "relaxed")."""
    _check_order("atomic_store", sem, scope, ("release", "relaxed"))
    pointer = check_pointer(pointer, "atomic_store")
    check_not_const(pointer)
    return store(pointer, val, mask=mask)


def atomic_poll(pointer, expected_value, sem=None, scope=None, timeout_ns=None):
    """Triton 3.9's poll: True once the scalar integer at `pointer` equals `expected_value`, False
    when `timeout_ns` runs out first.  Here the programs before this one have stored what they
    will store before it polls, so a value that is not there yet comes only from a program that
    runs later: with a timeout the poll times out (False); without one it would wait for that
    program, which lockstep cannot run in between, and the poll says so by name."""
    _check_order("atomic_poll", sem, scope, ("acquire", "relaxed"))
    pointer = check_pointer(pointer, "atomic_poll")
    if pointer.shape or not pointer.buf.dtype.is_int() or pointer.buf.dtype.bits not in (16, 32, 64):
        raise ValueError(f"tl.atomic_poll: the pointer must be to a scalar 16-, 32- or 64-bit integer, got "
                         f"{pointer.buf.dtype} of shape {list(pointer.shape)}")
    seen = load(pointer, volatile=True) == expected_value
    if timeout_ns is None and not bool(np.all(seen.v)):
        raise NotImplementedError("tl.atomic_poll without a timeout, on a value another program has not stored "
                                  "yet: minitriton runs programs in turn and cannot wait for a later one "
                                  "(pass timeout_ns, or spin on tl.atomic_load in a while loop)")
    return seen
