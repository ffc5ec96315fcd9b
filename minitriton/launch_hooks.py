"""Triton's runtime hooks (`triton.knobs.runtime`), called where Triton calls them, for the
profilers and frameworks that count compilations or annotate launches.

minitriton compiles nothing, but a launch still has Triton's notion of a compilation: the first
launch of a kernel with a new *specialisation* (the arguments' types, the integers Triton
specialises on (equal to 1, divisible by 16), the constexprs' values and the launch options) is
when Triton would compile and load it.  Then `jit_cache_hook` is asked first (a True answer
skips the compilation, and the launch, as in Triton), the kernel-load hooks run, and
`jit_post_compile_hook` is told.  Every launch then calls `launch_enter_hook` before it runs and
`launch_exit_hook` after, with a LazyDict whose `get()` holds the kernel's name and what the
kernel's `launch_metadata(grid, metadata, args)` function (`@jit(launch_metadata=...)`) adds.
"""
from __future__ import annotations

import hashlib
import types
from collections import namedtuple

import numpy as np

from . import knobs

JitFunctionInfo = namedtuple("JitFunctionInfo", ["module", "name", "jit_function"])

# the launch options Triton's compilation reads, and their defaults
COMPILE_OPTIONS = {"num_warps": 4, "num_ctas": 1, "num_stages": 3, "enable_fp_fusion": True,
                   "launch_cooperative_grid": False, "extern_libs": None}


class LazyDict:
    """Launch metadata whose extra entries are computed when `get()` asks for the dict
    (Triton's: a hook that reads the metadata pays for it, one that does not, does not)."""

    def __init__(self, data: dict):
        self.data, self.extras = dict(data), []

    def add(self, func, args):
        self.extras.append((func, args))

    def get(self) -> dict:
        for func, args in self.extras:
            self.data.update(func(*args))
        self.extras.clear()
        return self.data


def _type_of(value, unspecialized: bool) -> str:
    """An argument's part of the key, as Triton's signature and specialisation write it."""
    if isinstance(value, np.ndarray):
        aligned = value.__array_interface__["data"][0] % 16 == 0
        return f"*{value.dtype.str}" + ("D" if aligned and not unspecialized else "")
    if isinstance(value, (bool, np.bool_)):
        return "u1"
    if isinstance(value, (int, np.integer)):
        kind = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64" if -2 ** 63 <= value < 2 ** 63 else "u64"
        if unspecialized:
            return kind
        return "1" if value == 1 else kind + ("D" if value % 16 == 0 else "")
    if isinstance(value, (float, np.floating)):
        return "fp32"
    if value is None:
        return "none"
    return type(value).__name__


def specialization(fn, bound: dict, options: dict) -> tuple:
    """(the signature's key, the constexprs' values, the compile options): what Triton compiles
    a kernel once for."""
    types_ = tuple(_type_of(bound[name], name in fn.unspecialized)
                   for name in fn.signature.parameters if name not in fn.constexprs)
    constants = tuple((name, repr(bound[name])) for name in fn.constexprs if name in bound)
    compile_options = {k: options.get(k, d) for k, d in COMPILE_OPTIONS.items()}
    if isinstance(compile_options["extern_libs"], dict):
        compile_options["extern_libs"] = tuple(compile_options["extern_libs"].items())
    return types_, constants, compile_options


def _call(hook, fn, key, compile_options, warmup, already):
    params = [n for n in fn.signature.parameters if n not in fn.constexprs]
    rep = (f"{fn.__name__}[" + ", ".join(f"{k}={v}" for k, v in compile_options.items() if k != "extern_libs")
           + "](" + ", ".join(f"{p}: {t}" for p, t in zip(params, key[0])) + ")")
    info = {"key": key, "signature": dict(zip(params, key[0])), "device": 0, "constants": dict(key[1]),
            **compile_options, "configs": [{}], "is_warmup": warmup}
    return hook(key=key, repr=rep, fn=JitFunctionInfo(fn.__module__, fn.__name__, fn), compile=info,
                is_manual_warmup=warmup, already_compiled=already)


def compiled(fn, bound: dict, options: dict, warmup: bool) -> bool:
    """Note a launch's compilation if its specialisation is new, calling the hooks.  False when
    `jit_cache_hook` answered True: Triton then neither compiles nor launches."""
    rt = knobs.runtime
    if not (rt.jit_cache_hook or rt.jit_post_compile_hook or rt.kernel_load_start_hook.calls
            or rt.kernel_load_end_hook.calls):
        return True           # nobody listens: no key to build
    types_, constants, compile_options = specialization(fn, bound, options)
    key = (types_, constants, tuple(sorted((k, repr(v)) for k, v in compile_options.items())))
    seen = fn.__dict__.setdefault("specializations", set())
    if key in seen:
        return True
    if rt.jit_cache_hook and _call(rt.jit_cache_hook, fn, key, compile_options, warmup, False):
        return False
    seen.add(key)
    digest = hashlib.sha256(repr((fn.__module__, fn.__name__, key)).encode()).hexdigest()
    group = {"name": fn.__name__, **compile_options}
    rt.kernel_load_start_hook(None, None, fn.__name__, group, digest)
    rt.kernel_load_end_hook(None, None, fn.__name__, group, digest)
    if rt.jit_post_compile_hook:
        _call(rt.jit_post_compile_hook, fn, key, compile_options, warmup, True)
    return True


def enter(fn, grid: tuple, bound: dict, options: dict):
    """Call the launch-enter hooks; the metadata for the exit hooks (None if nobody listens)."""
    rt = knobs.runtime
    if not (rt.launch_enter_hook.calls or rt.launch_exit_hook.calls):
        return None
    metadata = LazyDict({"name": fn.__name__, "function": None, "stream": 0})
    describe = fn.options.get("launch_metadata")
    if describe is not None:
        compiled_metadata = types.SimpleNamespace(name=fn.__name__, **{k: options.get(k, d)
                                                                      for k, d in COMPILE_OPTIONS.items()})
        metadata.add(describe, (grid, compiled_metadata, dict(bound)))
    rt.launch_enter_hook(metadata)
    return metadata


def leave(metadata):
    if metadata is not None:
        knobs.runtime.launch_exit_hook(metadata)
