"""Search strategies behind one contract: `next_batch(n) -> list[Config]` proposes configs to
measure (empty when it has nothing left), `update(records)` tells it what they measured.
The driver (autotune.driver.tune) owns measuring, budget, records and progress."""
from __future__ import annotations

from .base import Tuner
from .exhaustive import ExhaustiveTuner
from .random import RandomTuner
from .grid import GridTuner

TUNERS = {"exhaustive": ExhaustiveTuner, "random": RandomTuner, "grid": GridTuner}


def make_tuner(tuner, space=None, configs=None, seed: int = 0) -> Tuner:
    """A tuner from its name (or the tuner object itself)."""
    if isinstance(tuner, Tuner):
        return tuner
    if not isinstance(tuner, str) or tuner not in TUNERS:
        raise ValueError(f"tuner must be one of {sorted(TUNERS)} or a Tuner object, got {tuner!r}")
    return TUNERS[tuner](space=space, configs=configs, seed=seed)


__all__ = ["Tuner", "ExhaustiveTuner", "RandomTuner", "GridTuner", "TUNERS", "make_tuner"]
