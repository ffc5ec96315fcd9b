"""Neighbourhood search: measure the configs one knob change from the best measured so far.

Real GPU landscapes are jagged along their block sizes and near-flat along many other knobs,
so a model's smooth guess about a near neighbour of the best is often wrong, and measuring the
neighbour is cheap.  This search proposes an unmeasured neighbour of the fastest config whose
neighbourhood is not yet used up (a knob moved to its next value up or down first, then to any
other value), and goes on to the next fastest when it is: best-first descent with no memory of
its own, since it starts each time from what every tuner measured (Kernel Tuner's greedy
strategies walk one such path each; here the path is the portfolio's shared history).
When every measured config's neighbourhood is used up, it proposes a random unmeasured config.
"""
from __future__ import annotations

import math

import numpy as np

from .base import Tuner
from .candidates import Candidates


class LocalTuner(Tuner):
    name = "local"

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self.rng = np.random.default_rng(seed)
        self.cands = None
        self.times: dict = {}        # row -> measured time (inf: failed)
        self.taken: set = set()      # rows measured or proposed
        self.used_up: set = set()    # rows whose whole neighbourhood is taken

    def _setup(self):
        if self.cands is None:
            self._candidates()
            self.cands = Candidates(self.space, self.configs, self.name)

    def update(self, records):
        super().update(records)
        self._setup()
        for rec in records:
            r = self.cands.row(rec.config)
            if r is not None:
                self.times[r] = rec.time if rec.ok and rec.time > 0 else math.inf
                self.taken.add(r)

    def propose(self):
        """One row: a free neighbour of the fastest config that has one, else a random free row."""
        for r in sorted((r for r, t in self.times.items() if math.isfinite(t) and r not in self.used_up),
                        key=self.times.get):
            near, far = self.cands.neighbours(r)
            for group in (near, far):
                free = [q for q in group if q not in self.taken]
                if free:
                    return free[int(self.rng.integers(len(free)))]
            self.used_up.add(r)
        return self.random_free()

    def random_free(self):
        """A random row neither measured nor proposed, or None when none is left."""
        free = len(self.cands) - len(self.taken)
        for _ in range(64 if free > 0 else 0):
            q = int(self.rng.integers(len(self.cands)))
            if q not in self.taken:
                return q
        left = np.setdiff1d(np.arange(len(self.cands)), np.fromiter(self.taken, np.int64, len(self.taken)))
        return int(self.rng.choice(left)) if left.size else None

    def next_batch(self, n):
        self._setup()
        out = []
        for _ in range(n):
            r = self.propose()
            if r is None:
                break
            self.taken.add(r)
            out.append(self.cands.config(r))
        self.seen.update(out)
        return out
