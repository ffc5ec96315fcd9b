"""Measuring on HypoGPU: noisy times, simulated compile and run cost, a simulated clock."""
from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np

from .device import HypoGPU, OutOfResources


@dataclasses.dataclass
class Measurement:
    config: object
    samples: list            # seconds per timed repeat (empty when the config failed)
    error: str | None        # why the config could not run (e.g. OutOfResources), else None
    cost: float              # simulated seconds this measurement took (compile + timed runs)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples) if self.samples else float("inf")

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("inf")

    @property
    def min(self) -> float:
        return min(self.samples) if self.samples else float("inf")

    @property
    def time(self) -> float:
        """The number a tuner ranks by: the median of the repeats (inf when it failed)."""
        return self.median


class Measurer:
    """Compiles (1 simulated second), runs `runs` times per repeat and reports each repeat's
    mean with 1.5 % multiplicative noise.  Seeded: the same calls give the same numbers."""

    def __init__(self, device: HypoGPU | None = None, seed: int = 0, noise: float = 0.015,
                 compile_seconds: float = 1.0, runs: int = 100):
        if noise < 0 or compile_seconds < 0 or runs < 1:
            raise ValueError(f"Measurer: noise and compile_seconds must be >= 0 and runs >= 1, got "
                             f"noise={noise}, compile_seconds={compile_seconds}, runs={runs}")
        self.device = device or HypoGPU()
        self.rng = np.random.default_rng(seed)
        self.noise, self.compile_seconds, self.runs = noise, compile_seconds, runs
        self.clock = 0.0          # simulated seconds spent measuring so far
        self.count = 0

    def replay(self, samples):
        """Advance the noise stream as measuring a config with these samples did, so that a
        tuning resumed from records draws the numbers an uninterrupted one would."""
        for _ in samples:
            self.rng.standard_normal()

    def measure(self, task, config, repeats: int = 1, compiled: bool = False) -> Measurement:
        """`compiled`: the config was built by an earlier measurement (re-timing it to settle a
        choice), so only its timed runs are charged, as re-running a cached binary costs."""
        return self.finish(config, outcome(self.device, task, config), repeats, compiled)

    def finish(self, config, result, repeats: int = 1, compiled: bool = False) -> Measurement:
        """A measurement from the config's outcome on the device (`outcome()`, which may have run
        in another process): the noise and the clock are applied here, in measuring order, so
        the same seed gives the same samples wherever the outcomes were computed."""
        if repeats < 1:
            raise ValueError(f"measure: repeats must be >= 1, got {repeats}")
        self.count += 1
        true, error = result
        if error is None and not (isinstance(true, (int, float, np.floating)) and not isinstance(true, bool)
                                  and math.isfinite(true) and true > 0):
            error = f"impossible time from the device: {true!r} s (a time must be finite and > 0)"
        build = 0.0 if compiled else self.compile_seconds
        if error is not None:
            self.clock += build
            return Measurement(config, [], error, build)
        samples = [true * float(np.exp(self.noise * self.rng.standard_normal())) for _ in range(repeats)]
        cost = build + repeats * self.runs * true
        self.clock += cost
        return Measurement(config, samples, None, cost)


def outcome(device, task, config) -> tuple:
    """(true seconds, None), or (None, why the config cannot run): the slow, deterministic part
    of a measurement (tracing the launch, the performance model), safe to run anywhere."""
    try:
        return device.time(task.profiles(config)), None
    except OutOfResources as e:
        return None, f"OutOfResources: {e}"
    except Exception as e:  # the kernel cannot be built or run at this config (a failed
        # tl.static_assert, a block shape it refuses, an access out of bounds): skipped, as
        # Triton skips a config that fails to compile, with the reason kept
        first = str(e).splitlines()[0] if str(e) else ""
        return None, f"{type(e).__name__}: {first}"
