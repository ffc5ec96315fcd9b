"""Tree-structured Parzen estimator: a density of the good configs against one of the rest.

Bergstra et al. (NeurIPS 2011), the sampler Optuna and Hyperopt use by default.  Split the
configs measured so far into the fastest few (`good`: a tenth of them, at most GOOD_AT_MOST)
and the rest; model each as a product over knobs of a smoothed histogram of their levels; then
draw a handful of candidates from the good density and measure the one where good is most
likely relative to the rest.  Unlike a Gaussian process it assumes nothing about distance
between levels and nothing about how knobs interact, so a jagged landscape or one whose fast
region is a corner of a few knobs does not mislead it, and each proposal costs microseconds.
Where the GP tends to settle on its hill, the draws from the good density keep proposing
other combinations of the levels that fast configs share.

Drawing from the good density is done over the valid candidate rows themselves (each free row
weighed by its density), so a recorded landscape's restrictions cost no wasted draws: Optuna
proposes from the knobs' product and has to skip the points outside the space.
"""
from __future__ import annotations

import math

import numpy as np

from .base import Tuner
from .candidates import Candidates

INITIAL = 10          # random configs before the densities
GOOD_SHARE = 0.1      # of the measured configs that are "good" (at least one)
GOOD_AT_MOST = 25
PRIOR = 1.0           # pseudo-count spread evenly over each knob's levels
DRAWS = 24            # candidates drawn from the good density per proposal


class TPETuner(Tuner):
    name = "tpe"

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self.rng = np.random.default_rng(seed)
        self.cands = None
        self.times: dict = {}        # row -> measured time (inf: failed)
        self.taken = None            # rows measured or proposed

    def _setup(self):
        if self.cands is None:
            self._candidates()
            self.cands = Candidates(self.space, self.configs, self.name)
            self.taken = np.zeros(len(self.cands), bool)

    def update(self, records):
        super().update(records)
        self._setup()
        for rec in records:
            r = self.cands.row(rec.config)
            if r is not None:
                self.times[r] = rec.time if rec.ok and rec.time > 0 else math.inf
                self.taken[r] = True

    def _log_density(self, rows, free) -> np.ndarray:
        """log of the product over knobs of each level's smoothed share among `rows`, at `free`."""
        pos = self.cands.pos
        out = np.zeros(free.size)
        for j, domain in enumerate(self.cands.domains):
            counts = np.bincount(pos[rows, j], minlength=len(domain)) + PRIOR / len(domain)
            out += np.log(counts / counts.sum())[pos[free, j]]
        return out

    def propose(self, free) -> int:
        measured = np.fromiter(self.times, np.int64, len(self.times))
        if measured.size < INITIAL:
            return int(self.rng.choice(free))
        speed = np.array([self.times[r] for r in measured.tolist()])
        order = measured[np.argsort(speed, kind="stable")]
        finite = int(np.isfinite(speed).sum())
        n_good = max(1, min(GOOD_AT_MOST, math.ceil(GOOD_SHARE * measured.size), finite))
        good, rest = order[:n_good], order[n_good:]
        log_good = self._log_density(good, free)
        weights = np.exp(log_good - log_good.max())
        draws = self.rng.choice(free, size=min(DRAWS, free.size), replace=False, p=weights / weights.sum())
        at = np.searchsorted(free, draws)
        score = log_good[at] - self._log_density(rest, draws)
        return int(draws[int(np.argmax(score))])

    def next_batch(self, n):
        self._setup()
        out = []
        for _ in range(n):
            free = np.flatnonzero(~self.taken)
            if free.size == 0:
                break
            r = self.propose(free)
            self.taken[r] = True
            out.append(self.cands.config(r))
        self.seen.update(out)
        return out
