"""Learning a new GPU from the others: a tuner that lets other GPUs' measurements of the same
kernel (autotune/transfer.py) propose configs, for as long as they predict this GPU.

Two arms share the measurements.  The base tuner (the one the task would get without transfer)
is told its own measurements.  The transfer arm's measurements go only to the Bayesian tuners
inside it (the base itself, or a team's Gaussian-process member), which also get the sources'
combined ranking as the GP's prior mean (BayesTuner: fitted to the measured times with a slope
>= 0, so a ranking that does not predict this GPU changes nothing): the GP starts warm, while a
team's other members (the default's Parzen estimator) search as they would without the sources,
so a source that points to the wrong region cannot pull the whole base there.  Chosen over
telling every member every measurement, and over telling none, on leave-one-GPU-out runs of the
recorded files (benchmarks/cross_gpu.py, 8 seeds): the three missed about as many goals, and this
one missed them by the fewest points in total.  The transfer arm
proposes the configs the sources rank best, combined: each config's score is the mean of its
rank (0 fastest, 1 slowest) in each source, weighted by how well that source has predicted
this GPU so far (the rank correlation between its times and ours over the configs both hold,
squared, floored at zero; every source weighs 1 until four such configs are measured).

The schedule, in proposals:
- first the fastest config of each source (up to MAX_PROBES sources): one measurement each says
  a lot about a source, and a good one is often the answer;
- then the arms alternate, the transfer arm taking RATIO_TRUSTED of every RATIO_TRUSTED + 1
  proposals while some source predicts well (weight >= TRUSTED), one in two while it only
  might, and none once no source predicts at all (every weight below USEFUL, four or more
  configs compared): a source whose ranking is unrelated or reversed costs its probe and the few
  transfer proposals before the base tuner's measurements expose it;
- the transfer arm retires for good after PATIENCE of its proposals in a row found nothing
  faster than the best so far (by then the sources' top is measured, and the base tuner
  searches around it better than a fixed ranking can), or as soon as the base tuner finds a
  config faster than every one the sources proposed (their ranking is then beaten here).  When
  it retires, its prior mean is withdrawn and the GP forgets the arm's picks (BayesTuner.forget): from
  then on the GP models the measurements of its own search alone, so a region the sources
  favour cannot hold the search after they stopped paying.  Seen on point-in-polygon on the
  Titan and convolution on the A100, whose sources' best region is a plateau below the
  optimum.  Withdrawing the prior was chosen on 8 seeds (after 100 measurements and more, two
  points more than a point below no transfer, 6.0 points short in all, against three and 15.7
  with the prior kept); forgetting the picks on 20 (convolution on the A100 after 100: 90.9 %,
  against 67.9 % with the picks kept and 88.6 % without transfer).  What forgetting costs:
  convolution on the W6600, whose NVIDIA sources happened to lead the GP to a config at 99 % of
  its optimum, now does as well as no transfer (83.6 % after 100), no better.

What a misleading source still costs: point-in-polygon on the 2080 Ti, whose sources (the
laptop and the Titan) rank its configs well (rank correlation 0.7-1.0) but favour a plateau at
85 % of its optimum, is at 87.8 % after 25 measurements with transfer against 98.4 % without (20
seeds; after 50, 99.7 % both).  The arm retires after 9-14 measurements, its picks are forgotten,
and the base starts its random start again.  Tried on 2026-12-06 at 25 and 50 measurements on all
17 leave-one-GPU-out targets (20 seeds), and not taken:
- keeping the picks when the arm retires: 96.7 % there after 25, but convolution on the A100 falls
  to 67.9 % after 100 (against 90.9 %, and 88.6 % without transfer), a goal missed;
- telling the Parzen member the picks too: 94.7 %, and the A100 at 67.9 % after 100, 84.2 % after 200;
- PATIENCE 3: 96.0 %, but dedispersion on the W6600 falls to 93.2 % after 25 and convolution on the
  3060 laptop to 97.4 % after 50, two goals missed (PATIENCE 4: 92.2 %, the same two misses);
- one transfer proposal in two while trusted (RATIO_TRUSTED 1): 84.9 %; no prior mean for the GP: 86.7 %.
"""
from __future__ import annotations

import math

import numpy as np

from ..space import as_config
from ..transfer import spearman
from .base import Tuner

MAX_PROBES = 8
COMPARED = 4          # configs both measured here and held by a source before its weight is its fit
USEFUL, TRUSTED = 0.2, 0.6   # a source's rank correlation with this GPU: worth a share / most proposals
SHARPNESS = 0.05
RATIO_TRUSTED = 3
PATIENCE = 6
GAIN = 0.01          # a transfer proposal pays when it beats the best so far by this share


class TransferTuner(Tuner):
    name = "transfer"

    def __init__(self, base: Tuner, sources, names, seed: int = 0):
        super().__init__(base.space, base.configs, seed)
        self.base, self.sources, self.names = base, list(sources), list(names)
        self.ranks = [s.ranks() for s in self.sources]
        self.measured: dict = {}            # point -> time here (inf: failed)
        self.mine: set = set()              # points the transfer arm proposed
        self.best = self.best_mine = self.best_base = math.inf
        self.beaten = False
        self.stalled, self.retired, self.credit = 0, False, 0.0
        self.fit = [1.0] * len(self.sources)        # rank correlation with this GPU (1 until measured)
        self.weights = [1.0] * len(self.sources)
        self.guessed, self.row_points = None, {}
        self.picked: list = []              # the records of the transfer arm's proposals
        self.probed = 0                     # sources whose fastest config has been proposed or found measured

    def settings(self) -> dict:
        return {**self.base.settings(), "transfer": [s.name for s in self.sources]}

    def _point(self, config):
        kw = as_config(config).all_kwargs()
        return tuple(kw.get(k) for k in self.names)

    def _fits(self, config) -> bool:
        if self.configs is not None:
            return as_config(config) in self.configs
        return self.space is not None and config in self.space

    # -- the contract ---------------------------------------------------------------------------
    def update(self, records):
        records = list(records)
        super().update(records)
        self.base.task = self.task
        own = [r for r in records if self._point(r.config) not in self.mine]
        picks = [r for r in records if self._point(r.config) in self.mine]
        if own:
            self.base.update(own)
        if picks:
            for t in self._bayesian():
                t.update(picks)
            self.picked += picks
        was_retired = self.retired
        for r in records:
            p = self._point(r.config)
            t = r.time if r.ok else math.inf
            self.measured[p] = t
            if p in self.mine:
                self.stalled = 0 if t < self.best * (1 - GAIN) else self.stalled + 1
                self.best_mine = min(self.best_mine, t)
            else:
                self.best_base = min(self.best_base, t)
            self.best = min(self.best, t)
        if self.stalled >= PATIENCE:
            self.retired = True
        if self.mine & self.measured.keys() and self.best_base < self.best_mine * (1 - GAIN):
            self.retired = self.beaten = True     # the base found better than anything the sources ranked
        if self.retired and not was_retired:
            for t in self._bayesian():
                t.forget(self.picked)
        self._weigh()

    def _weigh(self):
        """Each source's fit (rank correlation with this GPU over the configs both hold), and from
        it its weight: the sources that predict best dominate (exp(-(best fit - fit) / SHARPNESS)),
        since averaging in a weaker one mostly blurs the better one's top."""
        for i, s in enumerate(self.sources):
            both = [p for p in self.measured if p in s.times]
            if len(both) >= COMPARED:
                here = [self.measured[p] for p in both]
                there = [s.times[p] for p in both]
                self.fit[i] = spearman(np.minimum(here, 1e300), np.minimum(there, 1e300))
        top = max(self.fit, default=0.0)
        self.weights = [math.exp(-(top - f) / SHARPNESS) if f > 0 else 0.0 for f in self.fit]

    def _guess(self, tuner):
        """The sources' weighted mean rank of every candidate row of a Bayesian tuner (the mean
        of the known ones where no source holds a config), for its GP's prior mean."""
        key = (id(tuner), tuple(round(w, 2) for w in self.weights))
        if self.guessed is not None and self.guessed[0] == key:
            return self.guessed[1]
        points = self.row_points.get(id(tuner))
        if points is None:
            points = [self._point(tuner.row_config(r)) for r in range(len(tuner.rows))]
            self.row_points[id(tuner)] = points
        num, den = np.zeros(len(points)), np.zeros(len(points))
        for w, ranks in zip(self.weights, self.ranks):
            if w > 0:
                r = np.array([ranks.get(p, np.nan) for p in points])
                held = ~np.isnan(r)
                num[held] += w * r[held]
                den[held] += w
        if not den.any():
            return None
        guess = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
        guess = np.where(np.isnan(guess), np.nanmean(guess), guess)
        self.guessed = (key, guess)
        return guess

    def _bayesian(self) -> list:
        """The Bayesian tuners inside the base (itself, or a team's members)."""
        return [t for t in [self.base, *getattr(self.base, "tuners", [])] if hasattr(t, "prior")]

    def _lend_guess(self):
        """Hand the guess to every Bayesian tuner inside the base (a staged tuner's stages too)."""
        for t in self._bayesian():
            if getattr(t, "rows", None) is not None:
                t.prior = None if self.beaten or self.retired else self._guess

    def _share(self) -> float:
        """The transfer arm's share of the next proposals."""
        if self.retired or not self.sources:
            return 0.0
        top = max(self.fit)
        if top >= TRUSTED:
            return RATIO_TRUSTED / (RATIO_TRUSTED + 1)
        return 1 / 3 if top >= USEFUL else 0.0

    def _probe(self):
        """The fastest config of a source whose fastest is not measured yet, in source order."""
        while self.probed < min(len(self.sources), MAX_PROBES):
            s = self.sources[self.probed]
            self.probed += 1
            fastest = min(s.times, key=lambda q: (s.times[q], str(q)))
            config = as_config(dict(zip(self.names, fastest)))
            if math.isfinite(s.times[fastest]) and fastest not in self.measured and fastest not in self.mine \
                    and self._fits(config):
                return fastest, config
        return None

    def _ranked(self, n: int) -> list:
        """The n best unmeasured points by the sources' weighted mean rank."""
        total = {}
        for w, ranks in zip(self.weights, self.ranks):
            if w <= 0:
                continue
            for p, r in ranks.items():
                if p not in self.measured and p not in self.mine:
                    acc = total.setdefault(p, [0.0, 0.0])
                    acc[0] += w * r
                    acc[1] += w
        order = sorted(total, key=lambda p: (total[p][0] / total[p][1], str(p)))
        out = []
        for p in order:
            config = as_config(dict(zip(self.names, p)))
            if self._fits(config):
                out.append((p, config))
                if len(out) == n:
                    break
        return out

    def next_batch(self, n):
        self.base.task = self.task
        self._lend_guess()
        probe = self._probe()
        if probe is not None:
            picks = [probe]
        else:
            share = self._share()
            self.credit += share          # the transfer arm's turns, spread evenly at its share
            mine = self.credit >= 1.0
            self.credit -= mine
            picks = self._ranked(1) if mine else []
        if picks:
            p, config = picks[0]
            self.mine.add(p)
            self.seen.add(config)
            self.base.seen.add(config)
            return [config]
        # while the arms alternate, the base proposes one config a turn (a tuner's random start
        # would otherwise fill a whole batch before the sources' next turn)
        for _ in range(len(self.mine) + 1):     # (the base may propose a pick it has not been told of)
            got = self.base.next_batch(1 if self._share() > 0 else n)
            out = [c for c in got if self._point(c) not in self.mine]
            if out or not got:
                break
        self.seen.update(out)
        return out
