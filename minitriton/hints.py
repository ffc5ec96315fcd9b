"""Compiler hints and static checks, which the CPU executor checks or accepts: multiple_of,
max_contiguous, max_constancy, assume, debug_barrier, static_assert, static_print, async_task."""
from __future__ import annotations

from .dtypes import constexpr_value
from .errors import StaticAssertionError
from .tensor import round_to, tensor


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


LOAD_CACHE_MODIFIERS = ("", ".ca", ".cg", ".cv")          # Triton's, for NVIDIA's ld / st
STORE_CACHE_MODIFIERS = ("", ".wb", ".cg", ".cs", ".wt")
EVICTION_POLICIES = ("", "evict_last", "evict_first")


def check_hints(cache_modifier, eviction_policy, modifiers):
    """Cache and eviction hints change nothing here, but a misspelt one is refused as Triton
    refuses it (ValueError), so that a kernel that runs here compiles there."""
    cache_modifier, eviction_policy = constexpr_value(cache_modifier), constexpr_value(eviction_policy)
    if cache_modifier and cache_modifier not in modifiers:
        raise ValueError(f"Cache modifier {cache_modifier} not supported")
    if eviction_policy and eviction_policy not in EVICTION_POLICIES:
        raise ValueError(f"Eviction policy {eviction_policy} not supported")


def static_assert(cond, msg=""):
    if isinstance(constexpr_value(cond), tensor):
        raise NotImplementedError("Assertion condition could not be determined at compile-time. Make sure that it "
                                  "depends only on `constexpr` values")
    if not cond:
        raise StaticAssertionError(f"static_assert failed: {msg}")


def static_print(*values, **kw):
    print(*values)


class async_task:
    """`with tl.async_task([0]):` (also `async_task("default", ...)` and the keyword form): a
    region newer Triton gives to its own warp group, run concurrently with the others
    (warp specialisation).  Here the regions run one after another in program order, which is
    one of the orders the GPU may run them in: a kernel whose regions hand data over through
    memory and barriers (as warp-specialised kernels must) computes the same values."""

    def __init__(self, *args, **kwargs):
        unknown = set(kwargs) - {"num_warps", "num_regs", "registers", "replicate", "warp_group_start_id"}
        if unknown:
            raise TypeError(f"tl.async_task: unknown keyword arguments {sorted(unknown)}")
        if len(args) > 1:
            raise TypeError(f"tl.async_task takes one argument (task ids or \"default\"), got {len(args)}")
        self.task_ids = None
        self.is_default = bool(args) and constexpr_value(args[0]) == "default"
        if args and not self.is_default:
            ids = [constexpr_value(t) for t in constexpr_value(args[0])]
            if not ids or any(isinstance(t, bool) or not isinstance(t, int) or t < 0 for t in ids):
                raise ValueError(f"tl.async_task: task ids must be non-negative integers, got {ids}")
            self.task_ids = sorted(set(ids))
        self.options = {k: constexpr_value(v) for k, v in kwargs.items()}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

