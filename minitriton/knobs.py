"""Triton's `triton.knobs`: its settings objects, so that code written for Triton, and Triton's
own tests, which set them, run here.  A knob reads its environment variable until code sets it;
`del` (or `reset()`) forgets what code set; `scope()` puts a group back as it was when the block
ends.  Only knobs that mean something here exist: whether tuning results are printed or kept on
disk, the listener told of each tuning, that kernels run in an interpreter, and debug mode.
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


autotuning = autotuning_knobs()
runtime = runtime_knobs()


def refresh_knobs():
    """Triton's: read the environment variables again.  Knobs here read theirs whenever asked,
    so there is nothing to refresh."""
