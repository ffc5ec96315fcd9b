"""Compiler hints and static checks, which the CPU executor checks or accepts: multiple_of,
max_contiguous, max_constancy, assume, debug_barrier, static_assert, static_print."""
from __future__ import annotations

from .errors import StaticAssertionError
from .tensor import round_to


def multiple_of(input, values):
    return input


def max_contiguous(input, values):
    return input


def max_constancy(input, values):
    return input


def assume(cond):
    return None


def debug_barrier():
    return None


def static_assert(cond, msg=""):
    if not cond:
        raise StaticAssertionError(f"static_assert failed: {msg}")


def static_print(*values, **kw):
    print(*values)
