"""Tuning with a `do_bench` of the caller's own, as Triton's autotuner does it.

Code written for Triton passes `@autotune(..., do_bench=f)` to decide how a config is timed:
`f(kernel_call, quantiles)` calls `kernel_call` (one launch of the config) as often as it likes
and returns its times, the first being the one compared.  Such code expects its function to be
the judge, so when one is given it is: every config left after pruning is timed by it (a single
config is taken without timing, as in Triton), the fastest wins.  `triton.testing.do_bench`
here times a launch on HypoGPU by tracing it; a function that calls `kernel_call` itself runs
the kernel on the CPU, so the hooks Triton wraps around every benchmarked launch are kept:
`reset_to_zero` arrays are zeroed before it, `restore_value` arrays put back after it
(arguments that are None skipped), and a user's `pre_hook` / `post_hook` replace those two.
A config that cannot run (a failed `tl.static_assert`, too many resources) times as infinite.
"""
from __future__ import annotations

import math

import numpy as np

from minitriton.compiler.errors import CompilationError
from minitriton.hypogpu import OutOfResources

QUANTILES = (0.5, 0.2, 0.8)


class Hooks:
    """What runs around every benchmarked launch (Triton's default hooks, or the user's)."""

    def __init__(self, reset_to_zero, restore_value, pre_hook=None, post_hook=None):
        self.reset_to_zero, self.restore_value = list(reset_to_zero), list(restore_value)
        self.user_pre, self.user_post = pre_hook, post_hook
        self.copies = {}

    def pre(self, args: dict, reset_only=False):
        """Before a benchmarked launch; once more with `reset_only` before the real one."""
        if self.user_pre is not None:
            self.user_pre(args, reset_only=True) if reset_only else self.user_pre(args)
            return
        for name in self.reset_to_zero:
            if args.get(name) is not None:
                args[name][...] = 0
        if not reset_only:
            self.copies = {name: np.array(args[name], copy=True) for name in self.restore_value
                           if args.get(name) is not None}

    def post(self, args: dict, exception=None):
        if self.user_post is not None:
            self.user_post(args, exception=exception)
            return
        for name, saved in self.copies.items():
            args[name][...] = saved
        self.copies = {}


def time_config(do_bench, launch, config, args: dict, hooks: Hooks) -> float:
    """The first number `do_bench` returns for launches of `config` (inf if it cannot run)."""
    full = {**args, **config.all_kwargs()}

    def kernel_call():
        if config.pre_hook is not None:
            config.pre_hook(full)
        hooks.pre(full)
        try:
            launch(config)
        except Exception as e:
            hooks.post(full, exception=e)
            raise
        hooks.post(full, exception=None)

    try:
        times = do_bench(kernel_call, quantiles=QUANTILES)
    except (CompilationError, OutOfResources):
        return math.inf
    first = times[0] if isinstance(times, (list, tuple)) else times
    if isinstance(first, bool) or not isinstance(first, (int, float, np.integer, np.floating)):
        raise TypeError(f"autotune: do_bench must return a time or a list of times (the first compared), "
                        f"got {times!r}")
    return float(first) if math.isfinite(first) else math.inf     # a NaN time never wins


def fastest(do_bench, launch, configs, args: dict, hooks: Hooks):
    """(the fastest config, {config: time}) by `do_bench`; a lone config is not timed."""
    if len(configs) == 1:
        return configs[0], {}
    timings = {c: time_config(do_bench, launch, c, args, hooks) for c in configs}
    return min(timings, key=timings.get), timings
