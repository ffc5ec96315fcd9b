"""A portfolio of searches and a bandit that learns which one is working on this landscape.

No single search wins on every GPU landscape: a Gaussian process finds the good region of a
smooth one in a few dozen measurements and stalls on a jagged one, a neighbourhood search
polishes the best config but never leaves its hill, a population crosses good configs from
different regions, and on a landscape where many configs are near the optimum nothing beats
random sampling early.  The portfolio runs them all on one shared history (every search is told
every measurement, so each starts where the others left off) and before each measurement asks a
bandit which search proposes it (OpenTuner's area-under-the-curve bandit, Ansel et al., PACT
2014): a search's credit is the share of its recent proposals that improved the best time found,
recent ones weighing more, plus an exploration bonus sqrt(2 ln(proposals) / its proposals)
times EXPLORE; a search not yet tried goes first.  A search that keeps finding better configs
keeps being asked; when none does, they take turns.

The first INITIAL measurements are random for all of them (the GP needs a spread of points).
"""
from __future__ import annotations

import math

from .base import Tuner
from .bayes import BayesTuner
from .evolution import EvolutionTuner
from .local import LocalTuner
from .random import RandomTuner

TECHNIQUES = (("gp", BayesTuner), ("local", LocalTuner), ("evolution", EvolutionTuner), ("random", RandomTuner))
INITIAL = 10
EXPLORE = 0.05      # weight of the exploration bonus (OpenTuner's default C)
WINDOW = 500        # proposals the bandit remembers
BATCH = 1           # proposals per call: each measurement informs the bandit's next choice


class PortfolioTuner(Tuner):
    name = "portfolio"
    techniques = TECHNIQUES

    def __init__(self, space=None, configs=None, seed=0):
        super().__init__(space, configs, seed)
        self.names = [name for name, _ in self.techniques]
        self.tuners = [cls(space, configs, seed + 7919 * k) for k, (_, cls) in enumerate(self.techniques)]
        self.starter = RandomTuner(space, configs, seed)
        self.proposer: dict = {}        # config -> name of the search that proposed it
        self.history: list = []         # (name, improved the best?) per measured proposal, oldest first
        self.uses = {name: 0 for name in self.names}
        self.best = math.inf
        self.measured = 0

    def settings(self) -> dict:
        return {"tuner": self.name, "seed": self.seed}

    def _share(self):
        for t in [*self.tuners, self.starter]:
            t.task = self.task
            if t.space is None and t.configs is None:
                t.space, t.configs = self.space, self.configs

    def update(self, records):
        records = list(records)
        super().update(records)
        self._share()
        for rec in records:
            t = rec.time if rec.ok and rec.time > 0 else math.inf
            who = self.proposer.pop(rec.config, None)
            if who is not None:
                self.history.append((who, t < self.best))
            self.best = min(self.best, t)
        self.history = self.history[-WINDOW:]
        self.measured += len(records)
        for t in [*self.tuners, self.starter]:
            t.update(records)

    def credit(self, name) -> float:
        """The area under the curve of this search's improvements in the window, plus its bonus."""
        if not self.uses[name]:
            return math.inf
        mine = [improved for who, improved in self.history if who == name]
        auc = sum(k for k, improved in enumerate(mine, 1) if improved) * 2.0 / (len(mine) * (len(mine) + 1)) \
            if mine else 0.0
        return auc + EXPLORE * math.sqrt(2.0 * math.log(max(len(self.history), 1)) / self.uses[name])

    def next_batch(self, n):
        self._share()
        out = []
        if self.measured < INITIAL:
            out = self.starter.next_batch(min(n, INITIAL - self.measured))
            for c in out:
                self.proposer[c] = None
        tried = set()
        while len(out) < min(n, BATCH) and len(tried) < len(self.names):
            name = max((nm for nm in self.names if nm not in tried), key=self.credit)
            search = self.tuners[self.names.index(name)]
            got = [c for c in search.next_batch(1) if c not in self.seen and c not in out]
            if not got:
                tried.add(name)
                continue
            self.uses[name] += 1
            self.proposer[got[0]] = name
            out += got
        for t in [*self.tuners, self.starter]:
            t.seen.update(out)
        self.seen.update(out)
        return out
