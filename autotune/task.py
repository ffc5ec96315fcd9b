"""A Task: one kernel at one shape on one device, the unit that tuners and the decorator measure."""
from __future__ import annotations

from .space import Space, as_config


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
            from minitriton.hypogpu import HypoGPU
            device = HypoGPU()
        self.kernel, self.shape, self.device, self.launch = kernel, dict(shape), device, launch
        self._traces = {}
        stated = hasattr(kernel, "launch_profile")
        if not stated and launch is None:
            raise TypeError(f"Task: {getattr(kernel, '__name__', kernel)!r} states no launch profile; "
                            f"pass launch=<function of a config that launches it> so it can be traced")
        if stated:
            missing = [k for k in getattr(kernel, "shape_keys", ()) if k not in shape]
            if missing:
                raise TypeError(f"Task: {kernel.__name__} needs shape argument(s) {missing}, got {sorted(shape)}")
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
        from . import sketch
        return sketch.of(self, self.space)

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
