"""Tuning a whole network: Ansor's task scheduler (Zheng et al., OSDI 2020, §6; lecture §6).

A network is many tasks (kernels at shapes), each run `weight` times per inference.  Its time
is split into units (a unit = `unit_size` measurements of one task, taken by that task's own
tuner, which keeps its model and population from unit to unit).  `round_robin` deals units in
turn; `gradient` first gives every task one unit, then each unit to the task whose tuning is
expected to lower the objective f fastest:

    df/dt_i ~ df/dg_i * (alpha * (g_i(t_i) - g_i(t_i - w)) / w
                         + (1 - alpha) * min(-g_i / t_i,  beta * C_i / max_k V_k - g_i))

g_i is task i's best measured time after t_i units, C_i its FLOPs and V_k the FLOP/s reached
by the tasks k similar to it: the backward difference says what the last units bought, the
forward guess what the next might (the same again, or the throughput of its best peer).
With probability eps the unit goes to a random task instead.

Which tasks are similar is a choice (`similarity`): the paper's "same operator family", or
(lecture §6.3) arithmetic intensity within 4x, so that a memory-bound task is not promised the
FLOP/s of compute-bound ones, or any function of two tasks.

After the units, each task's k fastest configs are measured r more times and the median
chooses (`remeasure`): the lowest of many noisy times is biased low (the winner's curse).

Results go where the decorator keeps its own: a task made by `kernel.task(...)` of an
@autotune kernel stores its config in that kernel's cache entry (the kernel's next call is a
cache hit); every measurement goes to the cache's records log.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import sys

import numpy as np

from .cache import TuningCache, digest
from .cache_location import enabled as cache_enabled
from .driver import Tuning, progress_enabled
from .records import latest_per_config

STRATEGIES = ("round_robin", "gradient")


# -- objectives: f(g) of the tasks' times g and weights w, and df/dg ---------------------------------------
class WeightedSum:
    """The network's latency: sum of weight x time (the default)."""

    def __call__(self, g, w):
        return float(np.sum(w * g))

    def grad(self, g, w):
        return np.asarray(w, np.float64)


class LatencyRequirement:
    """Each task only has to meet its limit (seconds per run): f = sum w_i max(g_i, limit_i);
    a task already within its limit gets no more time."""

    def __init__(self, limits):
        self.limits = np.asarray(limits, np.float64)

    def __call__(self, g, w):
        return float(np.sum(w * np.maximum(g, self.limits)))

    def grad(self, g, w):
        return np.where(g > self.limits, w, 0.0)


class GeomeanSpeedup:
    """Maximise the geometric mean of each task's speedup over a reference time (f is its negative)."""

    def __init__(self, reference):
        self.reference = np.asarray(reference, np.float64)

    def __call__(self, g, w):
        return -float(np.exp(np.mean(np.log(self.reference / g))))

    def grad(self, g, w):
        return -self(g, w) / (len(g) * g)


def _grad(objective, g, w):
    if hasattr(objective, "grad"):
        return np.asarray(objective.grad(g, w), np.float64)
    out, f0 = np.empty(len(g)), objective(g, w)   # a plain function: forward differences
    for i in range(len(g)):
        h = g.copy()
        h[i] *= 1.0 + 1e-6
        out[i] = (objective(h, w) - f0) / (h[i] - g[i])
    return out


# -- which tasks are alike ----------------------------------------------------------------------------------
def same_family(a, b) -> bool:
    """The paper's rule: the same operator (here: the same kernel)."""
    return _family(a) == _family(b)


def within_intensity(factor=4.0):
    """Arithmetic intensities (FLOPs per byte) within `factor` of each other (lecture §6.3)."""
    def similar(a, b):
        ia, ib = a.intensity, b.intensity
        return ia > 0 and ib > 0 and max(ia, ib) / min(ia, ib) <= factor
    similar.__name__ = f"within_intensity({factor})"
    return similar


SIMILARITY = {"family": same_family, "intensity": within_intensity(4.0)}


def _family(node):
    k = node.task.kernel
    return getattr(k, "__name__", repr(k))


# -- the scheduler ------------------------------------------------------------------------------------------
@dataclasses.dataclass
class NetworkResult:
    configs: list            # the chosen config of each task, in the order given
    times: list              # each chosen config's measured time (the re-measured median when re-measured)
    weights: list
    units: list              # the task index each unit went to, in order
    latency: float           # sum of weight x measured time
    log: list                # per unit: (task index, its best so far, end-to-end estimate)
    remeasured: list         # per task: what re-measuring found (see Tuning.remeasure), or {}
    tunings: list            # per task: its TuneResult
    names: list
    intensity: list

    def table(self) -> str:
        """Per task: weight, intensity, units, measured time, share of the end-to-end time."""
        lines = ["| task | weight | FLOP/B | units | time µs | share | re-measured |", "|---|---|---|---|---|---|---|"]
        counts = np.bincount(self.units, minlength=len(self.configs))
        for i, name in enumerate(self.names):
            share = self.weights[i] * self.times[i] / self.latency if self.latency else 0.0
            rm = self.remeasured[i]
            note = "-" if not rm else "kept" if not rm["changed"] else \
                f"changed ({100 * (rm['after_time'] / rm['before_time'] - 1):+.1f} % measured)"
            lines.append(f"| {name} | {self.weights[i]:g} | {self.intensity[i]:.0f} | {counts[i]} | "
                         f"{self.times[i] * 1e6:.1f} | {share:.1%} | {note} |")
        lines.append(f"\nEnd-to-end estimate: {self.latency * 1e3:.3f} ms over {len(self.units)} units.")
        return "\n".join(lines)


class _Node:
    """One task of the network and its tuning."""

    def __init__(self, task, weight, tuning):
        self.task, self.weight, self.tuning = task, float(weight), tuning
        self.history: list = []   # best time after each unit
        try:
            self._work(task.work())
        except (ValueError, AttributeError, TypeError):   # traced: known once a config has run
            self._work((0.0, 0.0))
        self.traced = self.flops == 0 and getattr(task, "launch", None) is not None

    def _work(self, work):
        flops, nbytes = work
        self.flops, self.intensity = flops, (flops / nbytes if nbytes > 0 else 0.0)

    def learn_work(self):
        """A traced task's FLOPs and bytes, from the trace of its fastest config so far."""
        if not self.traced or not self.tuning.history:
            return
        self.traced = False
        ranked = self.tuning.ranked()
        if ranked:
            try:
                self._work(self.task.work(ranked[0].config))
            except Exception:  # noqa: BLE001 - a task that cannot say keeps being judged by its own progress
                pass

    @property
    def best(self) -> float:
        return self.tuning.best if math.isfinite(self.tuning.best) else math.inf


def tune_network(tasks, tuner="ansor", units=None, unit_size=64, strategy="gradient", similarity="intensity",
                 objective=None, total=None, alpha=0.2, window=3, beta=2.0, eps=0.05, seed=0, remeasure="auto",
                 progress=None, cache=True, cache_dir=None, parallel=None, devices=1) -> NetworkResult:
    """Tune every task of a network within one budget.

    `tasks`: (Task, weight) pairs; `units` of `unit_size` measurements, or `total` measurements
    (units = total // unit_size); `strategy`: "gradient" or "round_robin"; `similarity`:
    "intensity", "family" or a function of two nodes (with .task, .intensity, .flops);
    `objective`: WeightedSum() (default), LatencyRequirement(limits), GeomeanSpeedup(reference)
    or any f(times, weights); `remeasure="auto"` (see tune), `(k, r)` or None; `cache=False` keeps results off disk;
    `parallel` and `devices`: where measurements run, as for tune()."""
    pairs = _checked(tasks, strategy, similarity, unit_size, units, total, remeasure)
    n_units = units if units is not None else total // unit_size
    if n_units < len(pairs):
        raise ValueError(f"tune_network: {n_units} units cannot give each of the {len(pairs)} tasks one; "
                         f"give at least {len(pairs)} units ({len(pairs) * unit_size} measurements)")
    similar = SIMILARITY[similarity] if isinstance(similarity, str) else similarity
    objective = objective if objective is not None else WeightedSum()
    rng = np.random.default_rng(seed)
    show = progress_enabled(progress)
    with contextlib.ExitStack() as stack:
        nodes = [_node(task, weight, tuner, seed, stack, cache, cache_dir, unit_size * n_units, parallel, devices)
                 for task, weight in pairs]
        w = np.array([n.weight for n in nodes])
        order, log = [], []
        for u in range(n_units):
            live = [i for i, n in enumerate(nodes) if not n.tuning.done]
            if not live:
                break
            i = _pick(u, nodes, live, strategy, similar, objective, w, alpha, window, beta, eps, rng)
            nodes[i].tuning.step(unit_size)
            nodes[i].tuning.release()   # one task's workers at a time, however many tasks the network has
            nodes[i].history.append(nodes[i].best)
            nodes[i].learn_work()
            order.append(i)
            estimate = float(np.sum(w * np.array([n.best for n in nodes])))
            log.append((i, nodes[i].best, estimate))
            if show is not False:
                whole = f"{estimate * 1e3:.3f} ms" if math.isfinite(estimate) else "- (some task not measured yet)"
                _say(show, f"unit {u + 1}/{n_units}: {nodes[i].task.name}  best {nodes[i].best * 1e6:.1f} µs  "
                           f"end-to-end {whole}")
        found = []
        for n in nodes:
            n.tuning.close()
            found.append(n.tuning.settle(remeasure) if remeasure and n.tuning.history else {})
        results = [n.tuning.result() for n in nodes]
        for n, r in zip(nodes, results):
            binding = getattr(n.task, "binding", None)
            if binding is not None:
                binding.store(r)
            elif n.store is not None:
                n.store(r)
    times = [r.best_time for r in results]
    out = NetworkResult([r.best_config for r in results], times, list(w), order,
                        float(np.sum(w * np.array(times))), log, found, results, [n.task.name for n in nodes],
                        [n.intensity for n in nodes])
    if show is not False:
        _say(show, out.table())
    return out


def _say(show, line):
    if show or sys.stderr.isatty():
        print(line, file=sys.stderr)


def _checked(tasks, strategy, similarity, unit_size, units, total, remeasure):
    try:
        pairs = [(t, wt) for t, wt in tasks]
    except (TypeError, ValueError):
        raise TypeError("tune_network: tasks must be (Task, weight) pairs") from None
    if not pairs:
        raise ValueError("tune_network: tasks is empty")
    for t, wt in pairs:
        if not hasattr(t, "space") or not hasattr(t, "device"):
            raise TypeError(f"tune_network: {t!r} is not a Task (tasks must be (Task, weight) pairs)")
        if isinstance(wt, bool) or not isinstance(wt, (int, float)) or not wt > 0:
            raise ValueError(f"tune_network: the weight of {t.name} must be a positive number, got {wt!r}")
    if strategy not in STRATEGIES:
        raise ValueError(f"tune_network: strategy must be one of {STRATEGIES}, got {strategy!r}")
    if not (callable(similarity) or similarity in SIMILARITY):
        raise ValueError(f"tune_network: similarity must be one of {sorted(SIMILARITY)} or a function of two tasks, "
                         f"got {similarity!r}")
    if isinstance(unit_size, bool) or not isinstance(unit_size, int) or unit_size < 1:
        raise ValueError(f"tune_network: unit_size must be a positive int, got {unit_size!r}")
    if (units is None) == (total is None):
        raise ValueError("tune_network: give units= (units of unit_size measurements) or total= (measurements)")
    n = units if units is not None else total
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or (total is not None and total < unit_size):
        raise ValueError(f"tune_network: {'units' if units is not None else 'total'} must be a positive int "
                         f"(total at least unit_size), got {n!r}")
    if remeasure is not None and remeasure is not False and remeasure != "auto":
        if not (isinstance(remeasure, tuple) and len(remeasure) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in remeasure)):
            raise ValueError(f"tune_network: remeasure must be 'auto', (k, r) positive ints or None, got {remeasure!r}")
    return pairs


def _node(task, weight, tuner, seed, stack, cache, cache_dir, budget, parallel, devices):
    """A task's tuning, with its records going to the disk cache (locked while it runs)."""
    binding = getattr(task, "binding", None)
    disk = key = None
    if cache and cache_enabled():
        disk = binding.disk() if binding is not None else TuningCache(cache_dir)
    if disk is not None:
        key = binding.ckey if binding is not None else digest(
            "tune_network", task.name, getattr(task.kernel, "__name__", ""), repr(task.device),
            repr(task.space), str(tuner), seed)
        stack.enter_context(disk.lock(key))
    configs = binding.configs if binding is not None else None
    if binding is not None and configs is not None:
        tuner = "exhaustive"
    resume = latest_per_config(disk.log.read(key)) if disk is not None else ()
    tuning = Tuning(task, tuner, seed, configs=configs, log=disk.log if disk is not None else None,
                    key=key or "", resume=resume, progress=False, budget=budget, parallel=parallel, devices=devices)
    stack.callback(tuning.close)   # its measuring pool ends with the network's tuning, however that ends
    node = _Node(task, weight, tuning)
    node.store = None
    if disk is not None and binding is None:
        node.store = lambda r: disk.put(key, dict(kernel=task.name, device=repr(task.device), by="tune_network",
                                                  config={"kwargs": r.best_config.kwargs,
                                                          "num_warps": r.best_config.num_warps,
                                                          "num_stages": r.best_config.num_stages},
                                                  time=r.best_time, measured=r.measured,
                                                  simulated_seconds=r.simulated_seconds))
    return node


def _pick(u, nodes, live, strategy, similar, objective, w, alpha, window, beta, eps, rng) -> int:
    if strategy == "round_robin":
        return live[u % len(live)] if len(live) < len(nodes) else u % len(nodes)
    fresh = [i for i in live if not nodes[i].history]
    if fresh:                      # warm-up: one unit each, in order
        return fresh[0]
    if rng.random() < eps:
        return int(live[rng.integers(len(live))])
    g = np.array([n.best for n in nodes])
    if not np.isfinite(g[live]).all():   # nothing runs yet for some task: it needs the time most
        return next(i for i in live if not np.isfinite(g[i]))
    chain = _grad(objective, np.where(np.isfinite(g), g, 0.0), w)
    grads = {i: chain[i] * _dg_dt(i, nodes, similar, alpha, window, beta) for i in live}
    return min(grads, key=lambda i: (grads[i], i))


def _dg_dt(i, nodes, similar, alpha, window, beta) -> float:
    """Task i's expected change of best time per unit (negative: it gets faster)."""
    n = nodes[i]
    h, g, t = n.history, n.best, len(n.history)
    backward = (h[-1] - h[-1 - window]) / window if len(h) > window else 0.0
    forward = -g / t
    if n.flops > 0:
        peers = [k for k in nodes if k is not n and k.flops > 0 and math.isfinite(k.best) and similar(n, k)]
        if peers:
            best_speed = max([k.flops / k.best for k in peers] + [n.flops / g])
            forward = min(forward, beta * n.flops / best_speed - g)
    return alpha * backward + (1 - alpha) * forward
