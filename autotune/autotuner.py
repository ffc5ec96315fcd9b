"""`@autotune`: Triton's decorator, tuning on HypoGPU, results kept on disk.

    @autotune(configs=[Config({...}, num_warps=4, num_stages=3), ...], key=["M", "N", "K"])
    @mt.jit
    def kernel(...): ...

    kernel[grid](*args)   # first call with a new key: tune, then launch the best config

A new key (values of the `key` arguments, plus the dtypes of array arguments) is tuned the
first time it is seen: each candidate config's launch is timed on HypoGPU through a Measurer
(traced, nothing runs on the CPU), the fastest is stored in memory and on disk, and the real
launch runs on the CPU with it.  Later calls with that key only look it up.  `M` is bucketed
to the next power of two by default: tuning runs at the bucket's value, the launch uses the
real M.
"""
from __future__ import annotations

import os
import time
import warnings


import numpy as np

import minitriton as mt
from minitriton.context import launch_seconds
from minitriton.expressions import threads
from minitriton.hypogpu import HypoGPU, OutOfResources
from minitriton.interface import KernelInterface
from .cache import TuningCache, digest, offered_config
from .cache_location import enabled as cache_enabled, refresh as cache_refresh
from .records import Record, latest_per_config
from .driver import tune
from .heuristics import base_function
from .space import Config, Space, as_config
from .task import Task
from .transfer import describe_source
from . import user_bench
from .tuning_keys import buckets, check_key_values, kernel_key, tuner_key
from .tuners import TUNERS, AutoTVMTuner, Tuner
from .verify import call_record, check_answers


DEFAULT_BUDGET = 128  # measurements, for tuners other than "exhaustive" when no budget= is given


def _settled(found: dict) -> dict:
    """What settling the choice did, as the cache entry keeps it (and `show` prints it)."""
    return {k: (str(v) if isinstance(v, Config) else v) for k, v in found.items() if k != "top"}


def _jitted(fn):
    """The JITFunction under @heuristics wrappers."""
    while not hasattr(fn, "check_arguments") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def print_autotuning() -> bool:
    """Say each tuning's result on stdout: $MINITRITON_PRINT_AUTOTUNING=1, or Triton's own
    `triton.knobs.autotuning.print` ($TRITON_PRINT_AUTOTUNING=1: ported code sets one or the other)."""
    return os.environ.get("MINITRITON_PRINT_AUTOTUNING") == "1" or bool(mt.knobs.autotuning.print)


class AutotunerError(mt.TritonError, ValueError):
    """Triton's error for a tuning that cannot start (pruning left no config)."""

    def __init__(self, message):
        super().__init__(f"Autotuner error: {message}")


class Autotuner(KernelInterface):
    def __init__(self, fn, configs=None, key=(), prune_configs_by=None, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, tuner=None, budget=None, space=None, device=None, seed=0,
                 bucket=None, cache_dir=None, repeats=1, progress=None, cache_results=True, verify=None,
                 verify_top=3, atol=None, rtol=None, transfer=True, parallel=None, devices=1, remeasure="auto",
                 do_bench=None, arg_names=None):
        if not hasattr(fn, "run") or not (hasattr(fn, "arg_names") or arg_names is not None):
            raise TypeError(f"autotune must decorate a @minitriton.jit kernel (or @heuristics), got {fn!r}")
        self.fn = fn
        self.arg_names = list(fn.arg_names if arg_names is None else arg_names)
        self.__name__ = getattr(fn, "__name__", "kernel")
        where = f"autotune({self.__name__})"
        if isinstance(key, str) or not isinstance(key, (list, tuple)) or not all(isinstance(k, str) for k in key):
            raise TypeError(f"{where}: key= must be a list of argument names, e.g. key=[{key!r}], got {key!r}")
        self.keys = list(key)
        unknown = [k for k in self.keys if k not in self.arg_names]
        if unknown:
            raise ValueError(f"autotune({self.__name__}): key names {unknown} are not arguments of the kernel "
                             f"({self.arg_names})")
        self.configs = [as_config(c) for c in configs] if configs else None
        self.space = space
        if self.configs is None and space is None:
            raise ValueError(f"autotune({self.__name__}): give configs=[...] or space=Space(...)")
        if space is not None and not isinstance(space, Space):
            raise TypeError(f"autotune({self.__name__}): space= must be a Space, got {type(space).__name__}")
        self.tuner = tuner or ("exhaustive" if self.configs is not None else "ansor")
        if not (isinstance(self.tuner, Tuner) or (isinstance(self.tuner, type) and issubclass(self.tuner, Tuner))
                or self.tuner in TUNERS):
            raise ValueError(f"{where}: tuner= must be one of {sorted(TUNERS)}, a Tuner subclass or a Tuner object, "
                             f"got {self.tuner!r}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1):
            raise ValueError(f"autotune({self.__name__}): budget= must be a positive int, got {budget!r}")
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"{where}: repeats= must be a positive int (timed repeats per measurement), "
                             f"got {repeats!r}")
        if budget is None and self.tuner != "exhaustive":
            budget = DEFAULT_BUDGET  # a search over a space must stop somewhere
        self.budget = budget
        prune = prune_configs_by or {}
        bad = sorted(set(prune) - {"early_config_prune", "perf_model", "top_k"})
        if bad:
            raise ValueError(f"autotune({self.__name__}): prune_configs_by has unknown entries {bad}")
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model, self.top_k = prune.get("perf_model"), prune.get("top_k", 1.0)
        for name, names in (("reset_to_zero", reset_to_zero), ("restore_value", restore_value)):
            missing = [n for n in (names or []) if n not in self.arg_names]
            if missing:
                raise ValueError(f"autotune({self.__name__}): {name} names {missing}, which are not kernel arguments")
        self.reset_to_zero, self.restore_value = list(reset_to_zero or []), list(restore_value or [])
        self.pre_hook, self.post_hook = pre_hook, post_hook
        if do_bench is not None and not callable(do_bench):
            raise TypeError(f"{where}: do_bench= must be a function (kernel_call, quantiles) -> times, got {do_bench!r}")
        self.do_bench = do_bench        # the caller's own timing, Triton's way (user_bench.py)
        if device is None:
            device = HypoGPU()
        traced = all(hasattr(device, a) for a in ("fingerprint", "trace", "time"))
        recorded = all(hasattr(device, a) for a in ("fingerprint", "measurer", "entry"))
        if not (traced or recorded):
            raise TypeError(f"{where}: device= must be a device such as minitriton.hypogpu.HypoGPU() or "
                            f"minitriton.replay.Replay(path), got {device!r}")
        self.device, self.seed, self.repeats = device, seed, repeats
        if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
            raise ValueError(f"{where}: devices= must be a positive int (simulated GPUs measuring at once), "
                             f"got {devices!r}")
        if not (parallel is None or parallel is False or isinstance(parallel, str)
                or (isinstance(parallel, int) and not isinstance(parallel, bool) and parallel >= 1)):
            raise ValueError(f"{where}: parallel= must be None, a positive int (local processes), 'ray' or a Ray "
                             f"address, got {parallel!r}")
        self.parallel, self.devices = parallel, devices
        if not (remeasure in ("auto", None, False) or (isinstance(remeasure, tuple) and len(remeasure) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in remeasure))):
            raise ValueError(f"{where}: remeasure= must be 'auto', False or (k, r) positive ints, got {remeasure!r}")
        self.remeasure = remeasure or False
        self.buckets = buckets(bucket, self.keys)
        self._key_plan = [(k, self.arg_names.index(k), self.buckets.get(k)) for k in self.keys]
        self.cache_dir, self.progress, self.cache_results = cache_dir, progress, bool(cache_results)
        if verify not in (None, False, True) and not callable(verify):
            raise TypeError(f"{where}: verify= must be True (configs checked against each other) or a reference "
                            f"function of the arguments returning {{name: expected array}}, got {verify!r}")
        if isinstance(verify_top, bool) or not isinstance(verify_top, int) or verify_top < 1:
            raise ValueError(f"{where}: verify_top= must be a positive int, got {verify_top!r}")
        self.verify, self.verify_top, self.atol, self.rtol = verify, verify_top, atol, rtol
        if isinstance(transfer, (str, os.PathLike)):
            transfer = [transfer]              # one cache file
        if not isinstance(transfer, (bool, list, tuple)):
            raise ValueError(f"{where}: transfer= must be True/False (AutoTVM learns from this kernel's earlier keys) or "
                             f"a list of sources measured on other GPUs (cache file paths, Replay devices, records), "
                             f"got {type(transfer).__name__}")
        self.transfer = bool(transfer)
        self.sources = [] if isinstance(transfer, bool) else list(transfer)   # other GPUs (autotune/transfer.py)
        self.dropped = []              # (config, why) dropped by the last check of answers
        tuned = {k for c in (self.configs or []) for k in c.kwargs} | set(getattr(space, "names", ()) or ())
        self.tuned_names = frozenset(tuned - {"num_warps", "num_stages"})
        keyed = sorted(self.tuned_names & set(self.keys))
        if keyed:
            raise ValueError(f"{where}: key= names {keyed}, which the {'configs' if self.configs else 'space'} set: "
                             f"a key is made of the call's own arguments; tuned meta-parameters cannot be in it")
        self.cache: dict = {}          # key -> (Config, its meta-parameters), this process
        self.best_config = None
        self.last_tuning = None        # TuneResult of the most recent tuning in this process
        self._disk = None
        self._dtype_args = None
        self._unproven = {}            # key -> (cache key, records or None): chosen, never launched yet
        self._positional = 0           # how many of the call being tuned's arguments were positional

    # -- launching -------------------------------------------------------------------------
    @property
    def base_fn(self):
        """The Python function under the decorators (Triton's name for it)."""
        return base_function(self.fn)

    def task(self, *args, grid, **kwargs) -> Task:
        """The Task a call with these arguments would tune, bound to the cache entry the call
        reads: `tune_network([(kernel.task(...), weight), ...])` tunes it among others, and the
        call then finds its config in the cache."""
        key = self._key(args, kwargs)
        all_args = dict(zip(self.arg_names, args))
        all_args.update(kwargs)
        self._positional = len(args)
        task, configs, ckey, settings = self._plan(key, all_args, grid)
        task.binding = CacheBinding(self, key, all_args, grid, configs, ckey, settings)
        return task

    def run(self, *args, grid, **kwargs):
        key = self._key(args, kwargs)
        try:
            hit = self.cache.get(key)
        except TypeError:   # an unhashable key value (an array): say which argument
            check_key_values(self.__name__, self.keys, {**dict(zip(self.arg_names, args)), **kwargs})
            raise
        if hit is None:
            all_args = dict(zip(self.arg_names, args))
            all_args.update(kwargs)
            check_key_values(self.__name__, self.keys, all_args)
            check = getattr(_jitted(self.fn), "check_arguments", None)
            if check is not None:   # a call no config can launch fails as the plain kernel's would
                check(all_args)
            self._positional = len(args)
            if self.do_bench is not None and self.configs is not None:
                return self._bench_and_launch(key, args, kwargs, all_args, grid)
            config = self._tune(key, all_args, grid)
            hit = self.cache[key] = (config, config.all_kwargs())
            for name in self.reset_to_zero:
                if all_args.get(name) is None:
                    continue        # an optional array left out of this call
                if not hasattr(all_args.get(name), "__setitem__") or not hasattr(all_args.get(name), "dtype"):
                    raise TypeError(f"autotune({self.__name__}): reset_to_zero names '{name}', which is not an array "
                                    f"in this call (got {type(all_args.get(name)).__name__})")
                all_args[name][...] = 0
        config, meta = hit
        self.best_config = config
        if key in self._unproven:
            return self._first_launch(key, args, kwargs, grid)
        return self._launch(config, meta, args, kwargs, grid)

    def _bench_and_launch(self, key, args, kwargs, all_args, grid):
        """Tuning by the caller's `do_bench` (user_bench.py), then the launch."""
        hooks = user_bench.Hooks(self.reset_to_zero, self.restore_value, self.pre_hook, self.post_hook)
        configs = self.prune_configs(all_args)
        started = time.perf_counter()
        best, self.configs_timings = user_bench.fastest(
            self.do_bench, lambda cfg: self.fn.run(*args, grid=grid, **kwargs, **cfg.all_kwargs()), configs,
            all_args, hooks)
        if self.configs_timings:        # a lone config is not timed, and no tuning is told of
            self._tell(key, best, self.configs_timings, time.perf_counter() - started, cache_hit=False)
        if self.configs_timings:
            hooks.pre({**all_args, **best.all_kwargs()}, reset_only=True)
        self.cache[key] = (best, best.all_kwargs())
        self.best_config = best
        if print_autotuning():
            print(f"minitriton autotuning for {self.__name__} with key {key}, timed by the caller's do_bench: "
                  f"best config selected: {best};")
        return self._launch(best, best.all_kwargs(), args, kwargs, grid)

    def caching(self) -> bool:
        """Results go to the disk cache: cache_results=, or Triton's knobs.autotuning.cache."""
        return self.cache_results or bool(mt.knobs.autotuning.cache)

    def _tell(self, key, best, timings: dict, duration, cache_hit: bool):
        """Triton's knobs.autotuning.listener, if set, hears of a key tuned among several configs
        (its measured times in ms) or found in the disk cache."""
        listener = mt.knobs.autotuning.listener
        if listener is not None:
            listener(fn=_jitted(self.fn), key=key, best_config=best, configs_timings=timings, duration=duration,
                     cache_hit=cache_hit)

    def _offers(self, configs):
        """config -> this key's own equal config (one of `configs`, a point of the space), or None."""
        if configs is not None:
            return lambda config: next((c for c in configs if c == config), None)
        return lambda config: self._listed(config) if self.space is None or config in self.space else None

    def _listed(self, config):
        """`config` as the autotuner's list has it (the same knobs), so that its pre_hook, a
        function the disk cache and the records cannot hold, comes back with it (tutorial 09's
        hook sets the host descriptors' block shapes for the config that runs)."""
        return next((c for c in self.configs or () if c == config), config)

    def _launch(self, config, meta, args, kwargs, grid):
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **meta})
        return self.fn.run(*args, grid=grid, **kwargs, **meta)

    def _first_launch(self, key, args, kwargs, grid):
        """The first real launch of a key's chosen config.  HypoGPU times a launch without
        running it, so a config can win the tuning and then fail on the CPU (an unmasked load
        past the end at this exact size).  A failed launch leaves every array as it was, so the
        next fastest config measured is launched instead, once: if it runs, the failure was the
        config's, and it is recorded as failed (records and cache entry, which `show` lists) with
        a warning; if it fails too, the error is the call's and is raised as it is."""
        ckey, history = self._unproven.pop(key)
        config, meta = self.cache[key]
        try:
            return self._launch(config, meta, args, kwargs, grid)
        except Exception as failure:
            records = history if history is not None else \
                (self._disk_cache().log.read(ckey) if ckey is not None else [])
            dropped = {c for c, _ in self.dropped}
            ranked = sorted((r for r in latest_per_config(records)
                             if r.ok and r.config != config and r.config not in dropped), key=lambda r: r.time)
            if not ranked:
                raise
            runner_up = ranked[0]
            chosen = self._listed(runner_up.config)
            try:
                out = self._launch(chosen, chosen.all_kwargs(), args, kwargs, grid)
            except Exception as again:
                failure.add_note(f"(autotune: the next fastest config {chosen} failed as well "
                                 f"({type(again).__name__}), so the call itself is at fault: nothing recorded)")
                raise failure from None
            why = f"its real launch on the CPU failed: {type(failure).__name__}: {str(failure).splitlines()[0]}"
        self.cache[key] = (chosen, chosen.all_kwargs())
        self.best_config = chosen
        if ckey is not None and cache_enabled() and self.caching():
            self._record_failure(key, ckey, config, why, runner_up)
        warnings.warn(f"autotune({self.__name__}): the tuned config {config} is dropped, {why}; using "
                      f"{chosen}, the next fastest measured", RuntimeWarning, stacklevel=4)
        return out

    def _record_failure(self, key, ckey, config, why, runner_up):
        disk = self._disk_cache()
        disk.log.append(Record(config, [], why, kernel=f"{self.__name__}{key}", key=ckey, device=repr(self.device)))
        with disk.lock(ckey):
            entry = disk.get(ckey)
            if entry is not None:
                c = runner_up.config
                entry.update(config={"kwargs": c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages},
                             time=runner_up.time, failed_on_cpu=list(entry.get("failed_on_cpu", [])) + [[str(config), why]])
                disk.put(ckey, entry)

    def _key(self, args, kwargs) -> tuple:
        """The key: bucketed values of the `key` arguments, then the dtypes of array arguments
        (Triton's key).  This is the hot path of every cached call: no dicts are built."""
        vals = []
        for k, pos, f in self._key_plan:
            if pos >= len(args) and k not in kwargs:      # as the launch says it
                raise TypeError(f"kernel '{self.__name__}' is missing argument(s): {k}")
            v = args[pos] if pos < len(args) else kwargs[k]
            vals.append(f(v) if f is not None else v)
        for a in args:
            dt = getattr(a, "dtype", None)
            if dt is not None:
                vals.append(dt)
        if kwargs:
            for name in self.arg_names[len(args):]:
                dt = getattr(kwargs.get(name), "dtype", None)
                if dt is not None:
                    vals.append(dt)
        if kwargs and not self.tuned_names.isdisjoint(kwargs):
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(self.tuned_names & set(kwargs)))}. "
                             f"Make sure that you don't re-define auto-tuned symbols.")
        return tuple(vals)

    # -- tuning ----------------------------------------------------------------------------
    def prune_configs(self, nargs: dict) -> list:
        """Triton's pruning: `early_config_prune(configs, named_args, **kwargs)` with the call's
        positional arguments by name and its keyword arguments apart, then `perf_model(**args,
        **config.all_kwargs())` keeping the `top_k` best (a fraction <= 1.0 is a share of the
        configs left, at least one)."""
        configs = list(self.configs)
        named = dict(list(nargs.items())[:self._positional])
        rest = {k: v for k, v in nargs.items() if k not in named}
        if self.early_config_prune is not None:
            pruned = self.early_config_prune(configs, named, **rest)
            if pruned is None or isinstance(pruned, (dict, str)) or not hasattr(pruned, "__iter__"):
                raise TypeError(f"autotune({self.__name__}): prune_configs_by['early_config_prune'] must return a "
                                f"list of Configs, got {type(pruned).__name__}")
            configs = [as_config(c) for c in pruned]
            if not configs:
                raise AutotunerError("No valid autotuner configs after pruning. `early_config_prune` should return "
                                     "at least one config.")
        if self.perf_model is not None:
            top_k = self.top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **c.all_kwargs()) for c in configs}
                bad = [c for c, v in est.items() if isinstance(v, bool) or not isinstance(v, (int, float))]
                if bad:
                    raise TypeError(f"autotune({self.__name__}): prune_configs_by['perf_model'] must return a number, "
                                    f"got {est[bad[0]]!r} for {bad[0]}")
                configs = sorted(configs, key=lambda c: est[c])[:top_k]
        if not configs:
            raise AutotunerError(f"pruning left no configs of {self.__name__}")
        return configs

    def _disk_cache(self):
        if self._disk is None:
            self._disk = TuningCache(self.cache_dir)
        return self._disk

    def _task(self, at, grid, key) -> Task:
        kernel_args = {k: v for k, v in at.items() if k in self.arg_names}

        def launch(cfg):
            full = {**kernel_args, **cfg.all_kwargs()}
            if self.pre_hook is not None:
                self.pre_hook(full)
            if cfg.pre_hook is not None:
                cfg.pre_hook(full)
            try:
                self.fn.run(grid=grid, **full)
            except Exception as e:
                if self.post_hook is not None:
                    self.post_hook(full, exception=e)
                raise
            if self.post_hook is not None:
                self.post_hook(full, exception=None)

        shape = {k: at[k] for k in self.keys if isinstance(at.get(k), (int, float)) and not isinstance(at.get(k), bool)}
        return Task(self.fn, device=self.device, space=self.space, launch=launch, name=f"{self.__name__}{key}",
                    **shape)

    def _tuning_task(self, key, all_args, grid, configs):
        """The task a key is tuned on: at the bucket's value of each bucketed argument, unless
        the kernel cannot run there with the call's arrays (it loads indices valid only up to
        the real M, say) while it runs at the real values: then at the real values."""
        at = dict(all_args)
        for k, f in self.buckets.items():
            at[k] = f(all_args[k])
        task = self._task(at, grid, key)
        if at == all_args:
            return task, at
        probe = configs[0] if configs else (self.space.config(0) if self.space is not None and len(self.space) else None)
        if probe is None:
            return task, at
        try:
            task.profiles(probe)
        except OutOfResources:
            pass
        except Exception:
            real = self._task(all_args, grid, key)
            try:
                real.profiles(probe)
            except Exception:
                return task, at
            return real, dict(all_args)
        return task, at

    def _plan(self, key, all_args, grid):
        """(the task a key is tuned on, its configs or None, its cache key, the settings in it)."""
        at = dict(all_args)
        for k, f in self.buckets.items():
            at[k] = f(all_args[k])
        configs = self.prune_configs(at) if self.configs is not None else None
        task, _ = self._tuning_task(key, all_args, grid, configs)
        settings = dict(tuner=tuner_key(self.tuner), budget=self.budget, seed=self.seed, repeats=self.repeats,
                        remeasure=list(self.remeasure) if isinstance(self.remeasure, tuple) else self.remeasure)
        if self.sources:
            settings["transfer"] = [describe_source(s) for s in self.sources]
        what = [c.all_kwargs() for c in configs] if configs is not None else repr(self.space)
        ckey = digest(self.__name__, kernel_key(self.fn), self.device.fingerprint, settings, what, list(key))
        return task, configs, ckey, settings

    def _tune(self, key, all_args, grid) -> Config:
        launch_seconds()    # settings every launch reads, read before measuring: a bad one is the
        threads()           # caller's error, not failed configs that the records would keep
        task, configs, ckey, settings = self._plan(key, all_args, grid)
        progress = self.progress
        if not cache_enabled() or not self.caching():
            result = tune(task, self.tuner, self.budget, self.seed, configs=configs, repeats=self.repeats,
                          parallel=self.parallel, devices=self.devices, remeasure=self.remeasure,
                          key=ckey, progress=progress, transfer=self.sources)
            result.best_config = self._checked(result, all_args, grid)
            return self._finish(key, result, None, configs)
        disk = self._disk_cache()
        with disk.lock(ckey):
            entry = None if cache_refresh() else disk.get(ckey)
            best = offered_config(entry, self._offers(configs), f"autotune({self.__name__})", disk.dir) \
                if entry is not None else None
            if best is not None:
                self._unproven[key] = (ckey, None)
                if print_autotuning():
                    print(f"minitriton autotuning for {self.__name__} with key {key}: best config loaded from the "
                          f"cache in {disk.dir} (entry {ckey[:12]}, tuned by measuring {entry.get('measured')} "
                          f"configs): {best};")
                if configs is None or len(configs) > 1:
                    self._tell(key, best, {}, None, cache_hit=True)
                return best
            resume = [] if cache_refresh() else latest_per_config(disk.log.read(ckey))
            if not any(r.ok for r in resume):   # all failed: more likely the call (a grid that raises)
                resume = []                        # than the configs; measured again once it is mended
            result = tune(task, self._search(disk, task), self.budget, self.seed, configs=configs,
                          parallel=self.parallel, devices=self.devices, remeasure=self.remeasure,
                          repeats=self.repeats, log=disk.log, key=ckey, resume=resume, progress=progress,
                          transfer=self.sources)
            result.best_config = self._checked(result, all_args, grid)
            self._store(disk, ckey, key, settings, result, all_args, grid)
        return self._finish(key, result, ckey, configs)

    def _store(self, disk, ckey, key, settings, result, all_args, grid):
        best = result.best_config
        disk.put(ckey, dict(kernel=self.__name__, args=repr(key), device=repr(self.device), settings=settings,
                            config={"kwargs": best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages},
                            time=result.best_time, measured=result.measured,
                            dropped=[(str(c), why) for c, why in self.dropped],
                            simulated_seconds=result.simulated_seconds, remeasured=_settled(result.remeasured),
                            call=call_record(self, all_args, grid, result.history)))

    def _search(self, disk, task):
        """The tuner for one key: AutoTVM learns from this kernel's earlier keys by default
        (transfer learning: a kernel tuned at M=512 helps at M=1024); `transfer=False` stops it."""
        if self.tuner != "autotvm" or not self.transfer:
            return self.tuner
        here = task.name.split("(", 1)[0]
        earlier = [r for r in disk.log.read() if r.kernel.split("(", 1)[0] == here and r.kernel != task.name]
        return AutoTVMTuner(seed=self.seed, transfer=earlier) if earlier else self.tuner

    def _checked(self, result, all_args, grid):
        """With verify=: the fastest config among the top few whose numbers are right, run on the
        CPU with the call's own arguments (Kernel Tuner's answer= check).  Wrong ones are dropped
        with a warning saying where they differ; none is ever chosen."""
        self.dropped = []
        if not self.verify:
            return result.best_config
        ranked = sorted((r for r in latest_per_config(result.history) if r.ok), key=lambda r: r.time)
        top = [r.config for r in ranked[:self.verify_top]]
        args = {k: v for k, v in all_args.items() if k in self.arg_names}

        def run(cfg, copies):
            self.fn.run(grid=grid, **copies, **cfg.all_kwargs())
        reference = self.verify if callable(self.verify) else None
        keep, self.dropped = check_answers(run, top, args, reference, self.atol, self.rtol)
        for cfg, why in self.dropped:
            warnings.warn(f"autotune({self.__name__}): config {cfg} computes different numbers ({why}); dropped",
                          RuntimeWarning, stacklevel=4)
        if not keep:
            raise AssertionError(f"autotune({self.__name__}): none of the {len(top)} fastest configs computes the "
                                 f"reference's numbers: " + "; ".join(f"{c}: {w}" for c, w in self.dropped))
        result.best_time = next(r.time for r in ranked if r.config == keep[0])
        return keep[0]

    def _finish(self, key, result, ckey, configs):
        self.last_tuning = result
        self._unproven[key] = (ckey, result.history)
        if configs is None or len(configs) > 1:
            self._tell(key, result.best_config, {r.config: [r.time * 1e3] for r in latest_per_config(result.history)
                                                 if r.ok}, result.wall_seconds, cache_hit=False)
        if print_autotuning():
            refused = sum(not r.ok for r in result.history)
            print(f"minitriton autotuning for {self.__name__} with key {key} finished after "
                  f"{result.simulated_seconds:.1f}s on HypoGPU ({result.measured} configs measured: "
                  f"{result.measured - refused} ran, {refused} refused; {result.wall_seconds:.2f}s wall); "
                  f"best config selected: {result.best_config};")
        return result.best_config


class CacheBinding:
    """What ties a Task to a decorated kernel's cache entry (Autotuner.task): whoever tunes the
    task stores its result where the kernel's own call will look."""

    def __init__(self, tuner, key, all_args, grid, configs, ckey, settings):
        self.autotuner, self.key, self.all_args, self.grid = tuner, key, all_args, grid
        self.configs, self.ckey, self.settings = configs, ckey, settings

    @property
    def tuner(self):
        return self.autotuner.tuner

    def disk(self):
        return self.autotuner._disk_cache() if cache_enabled() and self.autotuner.caching() else None

    def store(self, result):
        """Keep a tuning's result as the kernel's own tuning would (disk entry and this process)."""
        a = self.autotuner
        a.dropped = []
        disk = self.disk()
        if disk is not None:
            a._store(disk, self.ckey, self.key, dict(self.settings, by="tune_network"), result, self.all_args,
                     self.grid)
        a.cache[self.key] = (result.best_config, result.best_config.all_kwargs())


def autotune(configs=None, key=(), prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=True,
             tuner=None, budget=None, space=None, device=None, seed=0, bucket=None, cache_dir=None, repeats=1,
             progress=None, verify=None, verify_top=3, atol=None, rtol=None, transfer=True, parallel=None,
             devices=1, remeasure="auto"):
    """Triton's `autotune` (configs, key, prune_configs_by, reset_to_zero, restore_value,
    pre_hook, post_hook, do_bench; `warmup`, `rep` and `use_cuda_graph` are accepted for ported
    code and have no effect: HypoGPU's Measurer times every config, simulated, with its own
    compile and run costs and `repeats`, unless `do_bench` is given: then that function times
    each config as in Triton (user_bench.py; results kept in memory only); `cache_results=False`
    keeps this kernel's results out of the disk cache, as in Triton), plus
    `tuner` ("exhaustive", the default for configs | "ansor", the default for a space | "autotvm" |
    "random" | "grid" | a Tuner class or object), `budget` (default: all
    configs for "exhaustive", 128 otherwise), `space`, `device`, `seed`, `bucket`, `cache_dir`,
    `repeats` (timed repeats per measurement), `progress` (a progress bar on stderr), and
    `verify` (True, or a reference function `args -> {name: expected}`): after tuning, the
    `verify_top` fastest configs run on the CPU with the call's arguments and any whose output
    arrays disagree (beyond `atol`/`rtol`, by default a few output ulps) is dropped, never chosen.
    `parallel` says where measurements run (None: local processes for traced kernels when more
    than one core is free; 1: in-process; n: n processes; "ray" or a Ray address) and `devices`
    how many simulated GPUs measure at once (autotune/pools.py).  `remeasure` settles the choice
    after the search ("auto": the configs the measured noise cannot separate from the best are
    timed again and their medians choose; False: the fastest single time; see `tune`).
    With `tuner="autotvm"`, the records of this kernel's earlier keys train a global model first
    (`transfer=False` turns that off).  `transfer=[...]`: the same kernel measured on other GPUs
    (Kernel Tuner cache files' paths, Replay devices, records) proposes configs for as long as it
    predicts this one (`tune`'s transfer; autotune/transfer.py).

    Measuring traces launches, which write nothing: so `restore_value` has nothing to undo, and
    `reset_to_zero` arrays are zeroed once, before the real launch that follows a tuning."""
    def decorator(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, pre_hook, post_hook,
                         tuner, budget, space, device, seed, bucket, cache_dir, repeats, progress, cache_results,
                         verify, verify_top, atol, rtol, transfer, parallel, devices, remeasure, do_bench)
    return decorator
