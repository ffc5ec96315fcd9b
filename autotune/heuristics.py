"""Triton's `@heuristics`: meta-parameters computed from a launch's other arguments, not tuned.

It wraps a jitted kernel (and may sit under `@autotune`): every launch evaluates the rules and
passes their values on as meta-parameters."""
from __future__ import annotations

import inspect

from minitriton.interface import KernelInterface

from .kernel_source import source_of


class Heuristics(KernelInterface):
    """`@heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})`: meta-parameters
    computed from the other arguments at every launch."""

    def __init__(self, fn, values: dict):
        self.fn, self.values = fn, dict(values)
        self.arg_names = list(fn.arg_names)
        self.__name__ = getattr(fn, "__name__", "kernel")

    @property
    def src(self):
        return source_of(self.fn)

    @property
    def base_fn(self):
        """The Python function under the decorators (Triton's name for it)."""
        return base_function(self.fn)

    def run(self, *args, grid, **kwargs):
        for name, rule in self.values.items():
            kwargs[name] = rule({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, grid=grid, **kwargs)


def base_function(fn):
    """The plain Python function a kernel's decorators wrap (each holds the next as `.fn`)."""
    seen = 0
    while not inspect.isfunction(fn) and hasattr(fn, "fn") and seen < 32:
        fn, seen = fn.fn, seen + 1
    return fn


def heuristics(values: dict):
    if not isinstance(values, dict) or not all(callable(v) for v in values.values()):
        raise TypeError("heuristics() takes a dict of meta-parameter name -> function of the arguments")
    return lambda fn: Heuristics(fn, values)
