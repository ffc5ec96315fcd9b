"""The portfolio's searches (tuners/local.py, evolution.py) and its bandit (tuners/portfolio.py),
on the recorded 216-config matmul space of test_tuners and on a made-up space."""
import math

import numpy as np

from autotune import Space
from autotune.records import Record
from autotune.tuners import PortfolioTuner
from autotune.tuners.candidates import Candidates
from autotune.tuners.evolution import EvolutionTuner
from autotune.tuners.local import LocalTuner
from autotune.tuners.random import RandomTuner

from tests.test_tuners import SPACE, TIMES


def record(config, time):
    return Record(config, [float(time)]) if math.isfinite(time) else Record(config, [], "failed")


def changes(a, b):
    return sum(a.all_kwargs()[k] != b.all_kwargs()[k] for k in SPACE.names)


def test_candidates_find_a_configs_neighbours_one_knob_away():
    space = Space({"a": [1, 2, 4, 8], "b": [0, 1]}, constraint=lambda c: not (c["a"] == 8 and c["b"] == 1))
    cands = Candidates(space)
    assert len(cands) == 7
    r = cands.row(space.config(space.flat_index({"a": 2, "b": 0})))
    near, far = cands.neighbours(r)
    as_dicts = lambda rows: sorted((cands.config(q).all_kwargs()["a"], cands.config(q).all_kwargs()["b"]) for q in rows)
    assert as_dicts(near) == [(1, 0), (2, 1), (4, 0)]         # next value up or down of one knob
    assert as_dicts(far) == [(8, 0)]
    assert cands.row_at([3, 1]) is None                        # (8, 1) breaks the constraint


def test_local_search_measures_the_best_configs_neighbours_first():
    tuner = LocalTuner(space=SPACE, seed=0)
    measured = {}
    for i in np.random.default_rng(0).choice(np.flatnonzero(np.isfinite(TIMES)), 5, replace=False):
        c = SPACE.config(int(i))
        measured[c] = TIMES[i]
    tuner.update([record(c, t) for c, t in measured.items()])
    for _ in range(30):
        (c,) = tuner.next_batch(1)
        best = min((b for b in measured if np.isfinite(measured[b])), key=measured.get)
        neighbours = [q for q in (SPACE.config(int(i)) for i in SPACE.valid_flat()) if changes(q, best) == 1]
        if any(q not in measured for q in neighbours):
            assert changes(c, best) == 1, (c, best)              # a neighbour of the best while one is left
        measured[c] = TIMES[SPACE.flat_index(c)]
        tuner.update([record(c, measured[c])])
    assert len(measured) == 35                                   # never the same config twice


def test_evolution_children_mix_two_of_the_fastest_configs():
    tuner = EvolutionTuner(space=SPACE, seed=1)
    order = np.argsort(TIMES)
    top = [SPACE.config(int(i)) for i in order[:20]]
    tuner.update([record(SPACE.config(int(i)), TIMES[i]) for i in order[:20]])
    fastest = top[:16]
    close = 0
    for c in tuner.next_batch(30):
        assert c not in top
        # each knob from one of two parents, one knob in (knobs) mutated on average
        close += min(changes(c, p) for p in fastest) <= 2
    assert close >= 24


class Good(RandomTuner):
    """Proposes the slowest config still faster than the best so far: each proposal improves."""
    name = "good"
    best = np.inf

    def update(self, records):
        super().update(records)
        self.best = min([self.best, *(r.time for r in records)])

    def next_batch(self, n):
        faster = [i for i in np.argsort(TIMES)[::-1] if TIMES[i] < self.best and SPACE.config(int(i)) not in self.seen]
        out = [SPACE.config(int(i)) for i in faster[:n]]
        self.seen.update(out)
        return out


class Bad(Good):
    """Proposes configs slower than the best so far: never an improvement."""
    name = "bad"

    def next_batch(self, n):
        slower = [i for i in np.argsort(TIMES) if np.isfinite(TIMES[i]) and TIMES[i] > self.best and
                  SPACE.config(int(i)) not in self.seen]
        out = [SPACE.config(int(i)) for i in slower[-n:]]
        self.seen.update(out)
        return out


def test_the_bandit_asks_the_search_that_improves():
    class Pair(PortfolioTuner):
        techniques = (("bad", Bad), ("good", Good))
        first = 0                   # no GP stage: the bandit from the first measurement
    tuner = Pair(space=SPACE, seed=0)
    # a history of ten configs from the slower half, so that the good search improves for many turns
    slow = np.argsort(TIMES)[len(TIMES) // 2:]
    tuner.update([record(SPACE.config(int(i)), TIMES[i]) for i in np.random.default_rng(0).choice(slow, 10, replace=False)])
    for _ in range(40):
        batch = tuner.next_batch(1)
        tuner.update([record(c, TIMES[SPACE.flat_index(c)]) for c in batch])
    improving = tuner.uses["good"]
    assert improving >= 20 and tuner.uses["bad"] >= 1            # tried, then left alone
    while tuner.best > TIMES.min():
        tuner.update([record(c, TIMES[SPACE.flat_index(c)]) for c in tuner.next_batch(1)])
    before = tuner.uses["bad"]
    for _ in range(20):             # the good one has found the optimum: now they take turns
        tuner.update([record(c, TIMES[SPACE.flat_index(c)]) for c in tuner.next_batch(1)])
    assert tuner.uses["bad"] - before >= 5
