"""A generated operator: its kernels compiled from their source (visible to tracebacks and the
lowering), called on numpy arrays, tunable as a Task, and autotuned per shape bucket."""
from __future__ import annotations

import itertools
import linecache

import numpy as np
import minitriton as mt
import minitriton.language as tl

from .. import te
from ..cache import TuningCache, digest, offered_config
from ..cache_location import enabled, refresh
from ..driver import tune
from ..families import gemm as gemm_family
from ..space import Config
from ..task import Task
from .analysis import NUMPY_TYPES, evaluate


_generated = itertools.count(1)


def compile_source(source: str, filename: str) -> dict:
    """Run generated source as a module of its own, visible to inspect and tracebacks (under a
    file name of its own: two operators may share a name)."""
    filename = f"{filename[:-1]} #{next(_generated)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"mt": mt, "tl": tl, "grouped_tile": gemm_family.grouped_tile, "__name__": filename}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


class Operator:
    """A generated operator: call it on numpy arrays, or make it a Task to tune (it states its
    launch profile, space, shape keys and sketch rules, like a library kernel)."""

    def __init__(self, c, space, default):
        self.c, self.space, self.default = c, space, default
        self.name = c.output.name
        self.__name__ = f"te_{self.name}"
        self.shape_keys = tuple(sorted({v.name for t in c.inputs for s in t.shape for v in te.walk(s)
                                        if isinstance(v, te.Var)}))

    def _size(self, s, shape):
        if isinstance(s, te.Var):
            if s.name not in shape:
                raise TypeError(f"{self.name}: the shape needs {s.name}")
            return int(shape[s.name])
        return int(s)

    def _bind(self, arrays):
        """The sizes the arrays give the te.vars, checked against the inputs' shapes and types."""
        inputs = self.c.inputs
        if len(arrays) != len(inputs):
            raise TypeError(f"{self.name}: expects {len(inputs)} arrays ({', '.join(t.name for t in inputs)}), "
                            f"got {len(arrays)}")
        env = {}
        for t, x in zip(inputs, arrays):
            if not isinstance(x, np.ndarray) or x.ndim != len(t.shape):
                raise ValueError(f"{self.name}: {t.name} must be a {len(t.shape)}-D numpy array, got "
                                 f"{getattr(x, 'shape', type(x).__name__)}")
            if x.dtype != np.dtype(NUMPY_TYPES.get(t.dtype, np.float32)):
                raise TypeError(f"{self.name}: {t.name} must be {t.dtype}, got {x.dtype}")
            for s, n in zip(t.shape, x.shape):
                if isinstance(s, te.Var):
                    if env.setdefault(s.name, n) != n:
                        raise ValueError(f"{self.name}: {s.name} is {env[s.name]} by one input and {n} by {t.name}")
                elif s != n:
                    raise ValueError(f"{self.name}: {t.name} has {n} where its shape says {s}")
        return env

    def reference(self, *arrays):
        """The computation in float64 numpy, straight from the expression (the numbers' check)."""
        return evaluate(self.c.output, dict(zip(self.c.inputs, arrays)))

    def autotuned(self, tuner="ansor", budget=256, seed=0, device=None, cache_dir=None, bucket=("M",)):
        """This operator tuned lazily, as `@autotune` tunes a kernel: the first call at a new
        shape (sizes named in `bucket` rounded up to a power of two) tunes a Task of it, and the
        best config is kept in memory and in the disk cache (keyed by the generated source)."""
        return AutotunedOperator(self, tuner, budget, seed, device, cache_dir, tuple(bucket))

    def __repr__(self):
        return f"Operator({self.name}: {self.c.output.body!r})"


class AutotunedOperator:
    def __init__(self, op, tuner, budget, seed, device, cache_dir, bucket):
        self.op, self.tuner, self.budget, self.seed, self.bucket = op, tuner, budget, seed, bucket
        self.device, self.cache_dir = device, cache_dir
        self.configs: dict = {}
        self.last_tuning = None

    def config_for(self, shape: dict) -> Config:
        at = {k: (mt.next_power_of_2(v) if k in self.bucket else v) for k, v in sorted(shape.items())}
        key = tuple(at.items())
        if key in self.configs:
            return self.configs[key]
        task = Task(self.op, device=self.device, **at)
        settings = dict(tuner=self.tuner, budget=self.budget, seed=self.seed)
        sources = [getattr(self.op, a) for a in ("source", "main_source", "reduce_source") if hasattr(self.op, a)]
        ckey = digest(self.op.__name__, sources, task.device.fingerprint, settings, list(key))
        if not enabled():
            self.last_tuning = result = tune(task, self.tuner, self.budget, self.seed, key=ckey)
            best = result.best_config
        else:
            disk = TuningCache(self.cache_dir)
            with disk.lock(ckey):
                entry = None if refresh() else disk.get(ckey)
                best = offered_config(entry, lambda c: c if c in task.space else None, self.op.__name__,
                                      disk.dir) if entry is not None else None
                if best is None:
                    self.last_tuning = result = tune(task, self.tuner, self.budget, self.seed, log=disk.log, key=ckey)
                    best = result.best_config
                    disk.put(ckey, dict(kernel=self.op.__name__, args=repr(key), device=repr(task.device),
                                        settings=settings, config={"kwargs": best.kwargs,
                                                                   "num_warps": best.num_warps,
                                                                   "num_stages": best.num_stages},
                                        time=result.best_time, measured=result.measured))
            disk.close()
        self.configs[key] = best
        return best

    def __call__(self, *arrays, out=None):
        return self.op(*arrays, config=self.config_for(self.op._bind(arrays)), out=out)
