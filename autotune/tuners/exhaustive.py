"""Triton's autotune: measure every config of the list, in order."""
from __future__ import annotations

from .base import Tuner


class ExhaustiveTuner(Tuner):
    name = "exhaustive"

    def next_batch(self, n):
        pool = self._candidates()
        pool = pool if pool is not None else list(self.space)
        out = []
        for c in pool:
            if c not in self.seen and c not in out:
                out.append(c)
                if len(out) == n:
                    break
        self.seen.update(out)
        return out
