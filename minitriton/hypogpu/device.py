"""The HypoGPU device: times launch profiles and refuses configs that do not fit."""
from __future__ import annotations

import numpy as np

from .spec import Spec, A100
from .profile import Profile
from . import model
from .trace import trace


class OutOfResources(Exception):
    """A config needs more of a resource than the hardware has (Triton's OutOfResources)."""

    def __init__(self, name: str, required, limit):
        self.name, self.required, self.limit = name, required, limit
        super().__init__(f"out of resource: {name}, Required: {required}, Hardware limit: {limit}. "
                         f"Reducing block sizes or `num_stages` may help.")


class HypoGPU:
    """A simulated A100-class GPU.  `time(profiles)` is the exact, noise-free time; tuners do not
    call it: they measure through a Measurer, which adds noise and charges simulated time."""

    def __init__(self, spec: Spec = A100):
        self.spec = spec

    def __repr__(self):
        return f"HypoGPU({self.spec.name})"

    @property
    def fingerprint(self) -> str:
        """Identifies the device and its spec (for caches)."""
        return f"{self.spec!r}"

    def times(self, profile: Profile):
        """Vectorized: (seconds, reason code) per config of `profile`; inf where illegal."""
        return model.launch_time(profile, self.spec)

    def time(self, profiles) -> float:
        """Seconds for a sequence of launches (or one profile); raises OutOfResources."""
        total = 0.0
        for p in ([profiles] if isinstance(profiles, Profile) else profiles):
            t, reason = model.launch_time(p, self.spec)
            t, reason = float(np.asarray(t).reshape(-1)[0]), int(np.asarray(reason).reshape(-1)[0])
            if reason != model.OK:
                raise self._refusal(p, reason)
            total += t
        return total

    def _refusal(self, p: Profile, reason: int) -> OutOfResources:
        scalar = lambda x: float(np.asarray(x).reshape(-1)[0])
        s = self.spec
        for e in [p] + list(p.extra):
            _, r, _, _ = model.resources(e, s)
            if int(np.asarray(r).reshape(-1)[0]) != model.OK:
                p = e
                break
        if reason == model.SMEM:
            return OutOfResources("shared memory", int(scalar(p.num_stages) * scalar(p.smem_stage)), s.smem_per_block)
        if reason == model.REGS:
            w = scalar(p.num_warps)
            cap = min(s.max_regs_per_thread, s.regs_per_sm // int(32 * w) // 8 * 8)
            return OutOfResources("registers", int(scalar(p.regs)), 2 * cap)
        return OutOfResources("threads", int(32 * scalar(p.num_warps)), s.max_threads_per_block)

    def trace(self, fn, *args, **kwargs):
        """Launch profiles of what `fn` launches, derived by tracing (for kernels with no stated profile)."""
        return trace(fn, *args, **kwargs)
