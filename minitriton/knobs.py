"""Triton's `triton.knobs`: its settings objects, so that code written for Triton, and Triton's
own tests, which set them, run here.  A knob reads its environment variable until code sets it;
`del` (or `reset()`) forgets what code set; `scope()` puts a group back as it was when the block
ends.  Only knobs that mean something here exist: whether tuning results are printed or kept on
disk, the listener told of each tuning, that kernels run in an interpreter, debug mode, and the
runtime's hooks (compilation, kernel load, launch enter and exit).
"""
from __future__ import annotations

import contextlib
import copy
import os


class env_bool:
    """A knob read from an environment variable ("1", "true", "yes", "on": true) until set."""

    def __init__(self, key: str, default: bool = False):
        self.key, self.default = key, default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, group, owner=None):
        if group is None:
            return self
        if self.name in group.set_values:
            return group.set_values[self.name]
        said = os.environ.get(self.key)
        return self.default if said is None else said.strip().lower() in ("1", "true", "yes", "on")

    def __set__(self, group, value):
        group.set_values[self.name] = value

    def __delete__(self, group):
        group.set_values.pop(self.name, None)


class plain:
    """A knob no environment variable sets (a function, a constant)."""

    def __init__(self, default=None):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, group, owner=None):
        return self if group is None else group.set_values.get(self.name, self.default)

    def __set__(self, group, value):
        group.set_values[self.name] = value

    def __delete__(self, group):
        group.set_values.pop(self.name, None)


class HookChain:
    """Functions called in turn (Triton's launch and kernel-load hooks): `add` and `remove`
    them, call the chain to call each (the exit chain in reverse, undoing as a stack does)."""

    def __init__(self, reversed: bool = False):
        self.calls: list = []
        self.reversed = reversed

    def add(self, func):
        if not callable(func):
            raise TypeError(f"a hook must be callable, got {func!r}")
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in (self.calls[::-1] if self.reversed else list(self.calls)):
            call(*args, **kwargs)


class base_knobs:
    def __init__(self):
        self.set_values: dict = {}

    @property
    def knob_descriptors(self) -> dict:
        return {k: v for c in type(self).__mro__ for k, v in vars(c).items() if isinstance(v, (env_bool, plain))}

    def copy(self):
        out = copy.copy(self)
        out.set_values = dict(self.set_values)
        return out

    def reset(self):
        self.set_values.clear()
        return self

    @contextlib.contextmanager
    def scope(self):
        saved = dict(self.set_values)
        try:
            yield self
        finally:
            self.set_values = saved


class autotuning_knobs(base_knobs):
    cache = env_bool("TRITON_CACHE_AUTOTUNING")     # keep results on disk even with cache_results=False
    print = env_bool("TRITON_PRINT_AUTOTUNING")     # say each tuning's result on stdout
    # listener(fn=, key=, best_config=, configs_timings=, duration=, cache_hit=), told of every
    # key tuned among several configs, or found in the disk cache
    listener = plain(None)


class runtime_knobs(base_knobs):
    interpret = plain(True)                         # kernels always run in minitriton's interpreter
    debug = env_bool("TRITON_DEBUG")                # launches in debug mode: integer overflow is checked
    # called as Triton calls them (minitriton/launch_hooks.py): a kernel's first launch with a new
    # specialisation is its compilation, and loads it; every launch enters and exits
    jit_cache_hook = plain(None)                    # before a compilation; returning True skips it
    jit_post_compile_hook = plain(None)             # after one

    def __init__(self):
        super().__init__()
        self.launch_enter_hook, self.launch_exit_hook = HookChain(), HookChain(reversed=True)
        self.kernel_load_start_hook, self.kernel_load_end_hook = HookChain(), HookChain(reversed=True)


autotuning = autotuning_knobs()
runtime = runtime_knobs()


def refresh_knobs():
    """Triton's: read the environment variables again.  Knobs here read theirs whenever asked,
    so there is nothing to refresh."""
