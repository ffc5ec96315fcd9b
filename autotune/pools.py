"""Measuring pools: a batch of configs measured in parallel, results back in the batch's order.

A measurement on HypoGPU has a slow part that depends only on the config (tracing the launch,
the performance model: `hypogpu.measure.outcome`) and a cheap part that depends on the order of
measuring (the noise stream and the simulated clock: `Measurer.finish`).  A pool runs the slow
part wherever it likes; the driver applies the cheap part in the batch's order, so the same seed
gives the same records, in the same order, whatever the pool (TVM's `n_parallel` builders and
runners split the work the same way).

- `InProcess`: today's behaviour, the default for kernels that state their launch profile;
- `LocalProcesses(n)`: forked worker processes, the default for traced kernels when more than
  one core is free; a worker that dies has its configs measured again by a new one;
- `RayPool(address)`: Ray tasks on a cluster (`pip install -e .[ray]`; a local one is started
  with `ray.init()` when no address is given); Ray re-runs the tasks of a lost worker.

A pool that cannot start says why in one warning and the tuning measures in-process.
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import multiprocessing
import os
import pickle
import threading
import time
import warnings

from minitriton.hypogpu.measure import outcome

_TASKS: dict = {}            # token -> (device, task): what forked workers measure
_TOKENS = itertools.count()


def free_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class InProcess:
    name = "in-process"

    def outcomes(self, device, task, configs) -> list:
        return [outcome(device, task, c) for c in configs]

    def close(self):
        pass


def _die_with(parent: int):
    """In a worker: end when the tuning process is gone, however it ended (SIGKILL leaves no
    time to stop its workers, and an orphaned worker would wait for work forever)."""
    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="minitriton-orphan-watch").start()


def _pickles(config) -> bool:
    try:
        pickle.dumps(config)
        return True
    except Exception:           # pickle's errors for what it cannot take are of several kinds
        return False


def _work(token, config):
    device, task = _TASKS[token]
    return outcome(device, task, config)


class LocalProcesses:
    """`n` forked workers; the task reaches them through the fork (a traced task holds the
    call's arrays and a launch closure, which need not pickle)."""

    retries = 3

    def __init__(self, n: int, device, task):
        if "fork" not in multiprocessing.get_all_start_methods():
            raise RuntimeError("local processes need the 'fork' start method, which this platform lacks")
        self.n, self.name = n, f"{n} local processes"
        self.token = next(_TOKENS)
        _TASKS[self.token] = (device, task)
        self.pool = self._start()

    def _start(self):
        return cf.ProcessPoolExecutor(max_workers=self.n, mp_context=multiprocessing.get_context("fork"),
                                      initializer=_die_with, initargs=(os.getpid(),))

    def outcomes(self, device, task, configs) -> list:
        out = [None] * len(configs)
        todo = []
        for i, c in enumerate(configs):
            if _pickles(c):
                todo.append(i)
            else:   # a pre_hook that is a lambda or a local function cannot reach a worker
                out[i] = outcome(device, task, c)
        if not todo:
            return out
        for attempt in range(self.retries + 1):
            futures = {}
            try:
                futures = {i: self.pool.submit(_work, self.token, configs[i]) for i in todo}
            except (cf.process.BrokenProcessPool, RuntimeError):
                pass
            lost = []
            for i in todo:
                try:
                    out[i] = futures[i].result()
                except (cf.process.BrokenProcessPool, KeyError):
                    lost.append(i)   # its worker died (or the pool was broken before): measured again
            if not lost:
                return out
            todo = lost
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._start()
            if attempt == self.retries:
                break
        warnings.warn(f"measuring pool: workers kept dying on {len(todo)} configs; measuring them in-process",
                      RuntimeWarning, stacklevel=3)
        for i in todo:
            out[i] = outcome(device, task, configs[i])
        return out

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)
        _TASKS.pop(self.token, None)


_SHIPPED: dict = {}     # in a Ray worker: token -> (device, task), unpickled once


def _on_ray(token, blob, config):
    if token not in _SHIPPED:
        while len(_SHIPPED) >= 4:            # a worker keeps the last few tasks (a network has many)
            _SHIPPED.pop(next(iter(_SHIPPED)))
        _SHIPPED[token] = pickle.loads(blob)   # own, writable arrays (the object store's are read-only)
    return outcome(*_SHIPPED[token], config)


class RayPool:
    """Ray tasks: the task is shipped once (`ray.put`), each config is a remote call."""

    def __init__(self, address, device, task):
        import ray
        if not ray.is_initialized():
            if address in (None, "ray"):
                ray.init(num_cpus=free_cores(), include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            else:
                ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        self.ray = ray
        self.name = f"Ray ({int(ray.cluster_resources().get('CPU', 0))} CPUs)"
        self.remote = ray.remote(max_retries=3)(_on_ray)
        from ray import cloudpickle   # the task may hold closures and arrays: pickled by value
        self.token = f"{os.getpid()}-{next(_TOKENS)}"
        self.ref = ray.put(cloudpickle.dumps((device, task)))

    def outcomes(self, device, task, configs) -> list:
        ray = self.ray
        refs = [self.remote.remote(self.token, self.ref, c) for c in configs]
        out = []
        for c, r in zip(configs, refs):
            try:
                out.append(ray.get(r))
            except ray.exceptions.RayError as e:   # a lost node beyond Ray's retries
                warnings.warn(f"measuring pool: Ray lost {c} ({type(e).__name__}); measuring it in-process",
                              RuntimeWarning, stacklevel=3)
                out.append(outcome(device, task, c))
        return out

    def close(self):
        self.ref = None   # the shipped task may leave the object store


def make_pool(parallel, device, task):
    """The pool `parallel` asks for: None (in-process for stated profiles, local processes for
    traced kernels when more than one core is free), 1 or False (in-process), an int n (n local
    processes), "ray" or a Ray address.  A pool that cannot start warns once and gives way to
    in-process measuring."""
    if parallel is None:
        traced = not hasattr(task.kernel, "launch_profile") and hasattr(device, "trace")
        parallel = min(free_cores(), 8) if traced and free_cores() > 1 else 1
    if parallel is False or parallel == 1:
        return InProcess()
    if isinstance(parallel, bool) or not isinstance(parallel, (int, str)) or (isinstance(parallel, int) and parallel < 1):
        raise ValueError(f"parallel must be None, a positive int, 'ray' or a Ray address, got {parallel!r}")
    try:
        if isinstance(parallel, int):
            return LocalProcesses(parallel, device, task)
        return RayPool(parallel, device, task)
    except Exception as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        warnings.warn(f"measuring pool {parallel!r} could not start ({type(e).__name__}: {reason}); measuring "
                      f"in-process", RuntimeWarning, stacklevel=3)
        return InProcess()


def makespan(costs, devices: int) -> float:
    """Simulated seconds for `devices` identical GPUs to measure a batch: each config goes to
    the device that frees up first, in the batch's order; the batch ends with the last one."""
    if devices <= 1:
        return float(sum(costs))
    free = [0.0] * devices
    for c in costs:
        k = free.index(min(free))
        free[k] += c
    return max(free)
