"""Grid search: the space in lexicographic order (the lecture's cautionary baseline: in a big
space, a fixed order spends the whole budget in one corner)."""
from __future__ import annotations

from .base import Tuner


class GridTuner(Tuner):
    name = "grid"

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self._it = None

    def next_batch(self, n):
        if self._it is None:
            pool = self._candidates()
            self._it = iter(pool) if pool is not None else iter(self.space)
        out = []
        for c in self._it:
            if c not in self.seen:
                out.append(c)
                if len(out) == n:
                    break
        self.seen.update(out)
        return out
