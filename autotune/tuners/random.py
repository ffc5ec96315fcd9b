"""Random search: distinct configs drawn uniformly (the baseline every other tuner must beat)."""
from __future__ import annotations

import numpy as np

from .base import Tuner

PERMUTE_UP_TO = 4_000_000  # spaces up to this size are walked in one random permutation


class RandomTuner(Tuner):
    name = "random"

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self.rng = np.random.default_rng(seed)
        self._order = None      # built at the first batch, when the space is known

    def _start(self):
        pool = self._candidates()
        if pool is not None:
            self._order = iter([pool[i] for i in self.rng.permutation(len(pool))])
        elif self.space.size <= PERMUTE_UP_TO:
            self._order = (self.space.config(i) for i in self.rng.permutation(self.space.size))
        else:
            self._order = False

    def next_batch(self, n):
        if self._order is None:
            self._start()
        out = []
        if self._order is not False:
            for c in self._order:
                if c not in self.seen and (self.space is None or self.space.constraint is None or c in self.space):
                    out.append(c)
                    if len(out) == n:
                        break
        else:  # a huge space: draw with rejection of what was already seen
            while len(out) < n:
                out += [c for c in self.space.sample(self.rng, n - len(out)) if c not in self.seen and c not in out]
        self.seen.update(out)
        return out
