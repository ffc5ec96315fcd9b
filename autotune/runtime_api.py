"""`triton.runtime.Autotuner` as Triton's code builds it: the class behind `@autotune`, with
Triton's positional order (`fn, arg_names, configs, key, reset_to_zero, restore_value, ...`),
for code that constructs the tuner directly instead of through the decorator."""
from __future__ import annotations

from .autotuner import Autotuner
from .space import Config


class RuntimeAutotuner(Autotuner):
    """Triton's constructor over ours: no configs means one empty config, as in Triton; a launch
    without a grid (`tuner.run(...)`) passes none on to the kernel."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        super().__init__(fn, list(configs) or [Config({})], list(key), prune_configs_by, reset_to_zero,
                         restore_value, pre_hook, post_hook, cache_results=cache_results, do_bench=do_bench,
                         arg_names=arg_names)

    def run(self, *args, grid=None, **kwargs):
        return super().run(*args, grid=grid, **kwargs)
