"""Evolution over the knobs: children of the fastest configs measured so far.

Where a neighbourhood search stays near the best config and a Gaussian process follows its
smooth guess, a population crosses good configs with each other: half the knobs of one fast
config with half of another's lands in a region neither would reach one knob change at a time,
and that is what a landscape with several good regions needs (Kernel Tuner's genetic algorithm
is among its most reliable strategies on the recorded GPU landscapes for that reason).

Each proposal: two parents, each the faster of two drawn at random from the POPULATION fastest
measured configs (tournament selection); a child taking each knob from either parent, then each
knob moved to a random value with probability 1 / knobs; the first such child that is a valid,
unmeasured config is proposed (a random unmeasured config after TRIES children that are not).
"""
from __future__ import annotations

import math

import numpy as np

from .local import LocalTuner

POPULATION = 16
TRIES = 200


class EvolutionTuner(LocalTuner):
    name = "evolution"

    def propose(self):
        ranked = sorted((r for r, t in self.times.items() if math.isfinite(t)), key=self.times.get)[:POPULATION]
        if len(ranked) >= 2:
            pos, sizes = self.cands.pos, [len(d) for d in self.cands.domains]
            d = len(sizes)

            def parent():
                a, b = self.rng.choice(len(ranked), 2, replace=False)
                return ranked[min(a, b)]
            for _ in range(TRIES):
                mum, dad = pos[parent()], pos[parent()]
                child = np.where(self.rng.random(d) < 0.5, mum, dad)
                flip = self.rng.random(d) < 1.0 / max(d, 1)
                child = np.where(flip, [int(self.rng.integers(s)) for s in sizes], child)
                r = self.cands.row_at(child)
                if r is not None and r not in self.taken:
                    return r
        return self.random_free()
