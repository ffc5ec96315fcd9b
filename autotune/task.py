"""A Task: one kernel at one shape on one device, the unit that tuners and the decorator measure."""
from __future__ import annotations

import numbers

import numpy as np

from minitriton.hypogpu import HypoGPU

from . import sketch
from .space import Space, as_config


def _size(kernel: str, name: str, value) -> int:
    """A size of a stated kernel's shape: a positive int.  Zero is refused too: an empty
    operand has nothing to tune (the library kernels return an empty result without launching)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Task: {kernel}'s {name} must be an int (a size), got {value!r}")
    if value < 1:
        raise ValueError(f"Task: {kernel}'s {name} must be a positive size, got {name}={value}"
                         + (" (an empty operand has nothing to tune)" if value == 0 else ""))
    return int(value)


class Task:
    """`Task(kernels.matmul, M=4096, N=4096, K=4096)`.

    A library kernel states its launch profile (`kernel.launch_profile(shape, knobs)`) and its
    search space (`kernel.space`).  Any other minitriton kernel can be a task too: give `launch`,
    a function of a config that launches it (e.g. `lambda cfg: k[grid](*args, **cfg.all_kwargs())`),
    and a `space`; HypoGPU then times it by tracing.
    """

    def __init__(self, kernel, device=None, space: Space | None = None, launch=None, name: str | None = None,
                 **shape):
        if device is None:
            device = HypoGPU()
        self.kernel, self.shape, self.device, self.launch = kernel, dict(shape), device, launch
        self._traces = {}
        stated = hasattr(kernel, "launch_profile")
        if not stated and launch is None:
            raise TypeError(f"Task: {getattr(kernel, '__name__', kernel)!r} states no launch profile; "
                            f"pass launch=<function of a config that launches it> so it can be traced")
        if stated:
            keys = getattr(kernel, "shape_keys", ())
            missing = [k for k in keys if k not in shape]
            if missing:
                raise TypeError(f"Task: {kernel.__name__} needs shape argument(s) {missing}, got {sorted(shape)}")
            for k in keys:
                self.shape[k] = _size(kernel.__name__, k, shape[k])
        self.space = space if space is not None else getattr(kernel, "space", None)
        if self.space is None and stated:
            raise TypeError(f"Task: no search space: {getattr(kernel, '__name__', kernel)!r} has none; pass space=")
        self.name = name or f"{getattr(kernel, '__name__', 'kernel')}(" + \
            ", ".join(f"{k}={v}" for k, v in self.shape.items()) + ")"

    def __repr__(self):
        return f"Task({self.name})"

    @property
    def sketches(self):
        """The program structures (Ansor's sketches) generated at this task's shape; printing
        them says why each rule was or was not applied (autotune/sketch.py)."""
        return sketch.of(self, self.space)

    def work(self, config=None) -> tuple[float, float]:
        """(FLOPs, bytes) the computation needs: its size and its arithmetic intensity, by which the
        task scheduler (autotune.network) judges which tasks are alike.  A library kernel states
        it (`kernel.work(shape)`: the operator's own FLOPs and compulsory traffic); otherwise it is
        what `config`'s launches compute and load (the least over the space, for a stated profile
        without `work`), an upper bound on the traffic the computation needs."""
        if hasattr(self.kernel, "work"):
            flops, nbytes = self.kernel.work(self.shape)
            return float(flops), float(nbytes)
        if hasattr(self.kernel, "launch_profile") and config is None:
            p = self.vector_profile(self.space.arrays())
            grid = np.asarray(p.grid, np.float64)
            flops = np.asarray(p.flops, np.float64) + grid * np.asarray(p.alu_flops, np.float64)
            nbytes = np.asarray(p.loaded_bytes, np.float64) + grid * np.asarray(p.store_bytes, np.float64)
            ok = flops > 0
            return (float(np.min(flops[ok])), float(np.min(nbytes[ok]))) if np.any(ok) else (0.0, 0.0)
        if config is None:
            raise ValueError(f"Task.work: {self.name} is traced; give a config to trace its work")
        flops = nbytes = 0.0
        for p in self.profiles(config):
            grid = float(p.grid)
            flops += float(p.flops) + grid * float(p.alu_flops)
            nbytes += float(p.loaded_bytes) + grid * float(p.store_bytes)
        return flops, nbytes

    def profiles(self, config) -> list:
        """The launch profiles of one config (stated, or traced once and remembered)."""
        config = as_config(config)
        if hasattr(self.kernel, "launch_profile"):
            return [self.kernel.launch_profile(self.shape, config.all_kwargs())]
        if config not in self._traces:   # traced once per config: the task fixes kernel and shape
            self._traces[config] = self.device.trace(self.launch, config)
        return self._traces[config]

    def vector_profile(self, arrays):
        """All configs of `arrays` (knob -> values) at once, for a stated kernel."""
        return self.kernel.launch_profile(self.shape, arrays)
