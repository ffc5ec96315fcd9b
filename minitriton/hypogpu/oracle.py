"""The oracle: exact, noise-free times of every config of a task's space.

For tests and benchmarks only, to score tuners against the true optimum.  Nothing under
`autotune/` imports this module (a test checks it): tuners only ever measure.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np


@dataclasses.dataclass
class OracleResult:
    space: object
    times: np.ndarray          # seconds per point of the space (flat order), inf where illegal
    reasons: np.ndarray        # model.REASONS code per point (0 = legal)

    @property
    def best_index(self) -> int:
        return int(np.argmin(self.times))

    @property
    def best_time(self) -> float:
        return float(self.times[self.best_index])

    @property
    def best_config(self):
        return self.space.config(self.best_index)

    @functools.cached_property
    def configs(self) -> list:
        return [self.space.config(i) for i in range(self.times.size)]

    @property
    def legal(self) -> np.ndarray:
        return np.isfinite(self.times)

    def time_of(self, config) -> float:
        return float(self.times[self.space.flat_index(config)])


def oracle(task) -> OracleResult:
    """Exact times of all of task.space, in one vectorized evaluation of the model (or, for a
    device that answers from records, such as minitriton.replay.Replay, its recorded times)."""
    if hasattr(task.device, "oracle"):
        return task.device.oracle(task)
    space = task.space
    arrays = space.arrays()
    times, reasons = task.device.times(task.vector_profile(arrays))
    times = np.broadcast_to(np.asarray(times, np.float64), arrays[space.names[0]].shape).copy()
    if space.constraint is not None:
        keep = np.zeros(times.size, bool)
        keep[space.valid_flat()] = True
        times[~keep] = np.inf
    return OracleResult(space, times, np.asarray(reasons))
