"""One search handed from tuner to tuner: each proposes for its share of the measurements, and
every one of them is told every measurement, so the next starts where the last left off.

"bayes_ansor", the default for small spaces known only by their knobs until "bayes_tpe"
(alternating.py) replaced it: a Gaussian process
for the first 200 measurements (it finds good regions of a real GPU's landscape in a few dozen,
where a tree model is still guessing), then Ansor's evolutionary search, warm-started by all of
them (a GP settles on its best region; Ansor's population keeps crossing to others).  Measured
on the three real landscapes of issue 12 (the replay benchmark, now benchmarks/leaderboard.py): handing over after 200 rather
than 100 found convolution's optimum within 200 measurements in 34 of 40 seeds instead of 24
(same results before; the GP's rounds past 100 cost about 0.1 s each).
"""
from __future__ import annotations

import functools

from .ansor import AnsorTuner
from .base import Team
from .bayes import BayesTuner


class StagedTuner(Team):
    name = "staged"
    stages: tuple = ()      # (Tuner class or factory(space, configs, seed), measurements it proposes or None for the rest)

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self.tuners = [cls(space, configs, seed) for cls, _ in self.stages]
        self.measured = 0

    def next_batch(self, n):
        self._share()
        out, start = [], 0
        for t, (_, count) in zip(self.tuners, self.stages):
            end = None if count is None else start + count
            if end is None or self.measured < end:
                out = t.next_batch(n if end is None else min(n, end - self.measured))
                if out or end is None:
                    break
            start = end
        return self._proposed(out)


class BayesAnsorTuner(StagedTuner):
    name = "bayes_ansor"
    # Ansor on the knobs, as the GP sees them (no program features to warn about)
    stages = ((BayesTuner, 200), (functools.partial(AnsorTuner, features="knob"), None))
