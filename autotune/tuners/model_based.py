"""What AutoTVM and Ansor share (TVM's model_based_tuner.py): a pool of candidates, their
features, the measurements, a cost model retrained on them, and plans handed out a batch at
a time.  Subclasses say how a plan is made (`_make_plan`) and which model learns (`_new_model`).

The pool is a config list, or the points of a space's product by flat index.  Features are
computed once for a whole space up to FEATURE_CACHE points, on demand beyond.
"""
from __future__ import annotations

import warnings

import numpy as np

from .base import Tuner
from ..space import as_config
from .. import features as F
from ..model import CostModel, GatedModel, throughput, OBJECTIVES

FEATURE_CACHE = 1_000_000
# A listed space holding less of its product than this is searched as its list of configs: below
# it most mutations leave the list.  Ansor on HypoGPU's wgrad landscape cut to 57 / 18.5 / 13.8 /
# 11 % of its product (10 seeds, median % of optimum after 200): product search 99.7 / 99.1 / 94.5
# / 94.3, list search 100 / 94.6 / 94.6 / 96.7; the crossover lies between 11 and 14 %.
SPARSE = 0.1


class ModelBasedTuner(Tuner):
    def __init__(self, space=None, configs=None, seed=0, features="auto", objective="rank", batch=16,
                 epsilon=0.05, rounds=None, gate=True):
        super().__init__(space, configs, seed)
        who = type(self).__name__
        if features not in ("auto", "program", "knob"):
            raise ValueError(f"{who}: features must be 'auto', 'program' or 'knob', got {features!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"{who}: objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"{who}: batch must be a positive int, got {batch!r}")
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"{who}: epsilon must be in [0, 1], got {epsilon!r}")
        self.rounds = CostModel(objective).rounds if rounds is None else int(rounds)
        if self.rounds < 1:
            raise ValueError(f"{who}: rounds must be a positive int, got {rounds!r}")
        self.features, self.objective, self.batch, self.epsilon = features, objective, batch, float(epsilon)
        self.gate = bool(gate)
        self.rng = np.random.default_rng(seed)
        self.plan: list = []
        self.planned_at = 0             # measurements done when the plan was made
        self.measured: dict = {}        # pool index -> time (inf when the config failed, None when proposed)
        self.trained_on = 0
        self.model = None
        self.base = None                # a model that the task's own model learns the residual of (transfer)
        self.note = None                # why program features were not used, if they were not
        self._x = None
        self._useful = None

    # -- the pool of candidates -----------------------------------------------------------------------
    def _setup(self):
        if self._x is not None:
            return
        listed = self.space is not None and self.space.size_bound < SPARSE * self.space.size
        if self.configs is not None or listed:
            self.pool = list(self.configs) if self.configs is not None else list(self.space)
            self.where = {c: i for i, c in enumerate(self.pool)}
            self.size = len(self.pool)
        else:
            if self.space is None:
                raise ValueError(f"the {self.name} tuner needs a config list or a space")
            self.pool, self.where, self.size = None, None, self.space.size
        # "auto": program features where the kernel states its launch profile, its knobs elsewhere
        # (a traced kernel, a recorded landscape), silently: nothing there for a user to change
        use_program = self.features != "knob" and F.can_state(self.task)
        if self.features == "program" and not use_program:
            self.note = (f"features='program' needs a kernel that states its launch profile "
                         f"(launch_profile(shape, knobs)); {self.task.name} does not, so {self.name} uses its knobs "
                         f"(features='auto' chooses without this warning)")
            warnings.warn(f"{self.name}: {self.note}", RuntimeWarning, stacklevel=2)
        self.program = use_program
        self._x = self._matrix()

    def _space_of_pool(self):
        """A space whose product is the pool (a config list becomes a space of its own points)."""
        if self.pool is None:
            return self.space
        return ListSpace(self.pool)

    def _matrix(self):
        space = self._space_of_pool()
        if self.size > FEATURE_CACHE and self.pool is None:
            if self.program:  # padding is measured against the least work of a large sample
                sample = self.rng.integers(self.size, size=50_000)
                self._useful = F.least_work(self.task, Subset(self.space, sample))
            return False  # computed on demand
        return F.program_matrix(self.task, space) if self.program else F.knob_matrix(space)

    def _features(self, idx: np.ndarray) -> np.ndarray:
        if self._x is not False:
            return self._x[idx]
        sub = Subset(self.space, idx)
        return F.program_matrix(self.task, sub, self._useful) if self.program else F.knob_matrix(sub)

    def _index(self, cfg):
        cfg = as_config(cfg)
        if self.pool is not None:
            return self.where.get(cfg)
        return self.space.flat_index(cfg) if cfg in self.space else None

    def _config(self, i):
        return self.pool[i] if self.pool is not None else self.space.config(i)

    def _legal(self, i) -> bool:
        if self.pool is not None or self.space.constraint is None:
            return True
        return self.space.constraint(self.space.point(np.unravel_index(int(i), self.space.sizes)))

    def _unmeasured_mask(self):
        mask = np.ones(self.size, bool)
        if self.measured:
            mask[np.fromiter(self.measured, np.int64)] = False
        return mask

    def _random(self, n, exclude) -> list:
        out = []
        tries = 0
        while len(out) < n and tries < 100 * n + 1000:
            tries += 1
            i = int(self.rng.integers(self.size))
            if i not in self.measured and i not in exclude and i not in out and self._legal(i):
                out.append(i)
        return out

    # -- the contract ---------------------------------------------------------------------------------
    def update(self, records):
        super().update(records)
        self._setup()
        for r in records:
            i = self._index(r.config)
            if i is not None:
                self.measured[i] = r.time if r.ok else float("inf")

    def next_batch(self, n):
        self._setup()
        out = []
        done = sum(t is not None for t in self.measured.values())
        if self.plan and done - self.planned_at >= self.batch:
            self.plan = []          # a batch's worth measured since (by others: a portfolio): plan again
        while len(out) < n:
            if not self.plan:
                self.planned_at = done
                self.plan = self._make_plan()
                if not self.plan:
                    break
            i = self.plan.pop(0)
            if i not in self.measured:
                out.append(i)
                self.measured[i] = None  # proposed: never proposed again
        configs = [self._config(i) for i in out]
        self.seen.update(configs)
        return configs

    def _make_plan(self) -> list:
        raise NotImplementedError

    def _plan_size(self) -> int:
        """How many configs the next plan holds (0 when none is left), the model retrained first."""
        free = self.size - len(self.measured)
        if free <= 0:
            return 0
        self._fit()
        return min(self.batch, free)

    # -- the model ------------------------------------------------------------------------------------
    weighted = False  # Ansor weights the regression by throughput

    def _new_model(self):
        kind = GatedModel if self.gate else CostModel
        return kind(self.objective, seed=self.seed, base=self.base, rounds=self.rounds, weighted=self.weighted)

    def _fit(self):
        """Retrain on everything measured so far (when something new was measured)."""
        done = [(i, t) for i, t in self.measured.items() if t is not None]
        if not done or (len(done) <= self.trained_on and self.model is not None):
            return
        idx = np.array([i for i, _ in done])
        times = np.array([t for _, t in done], np.float64)
        model = self._new_model()
        if isinstance(model, GatedModel):
            model.fit(self._features(idx), times)
        else:
            model.fit(self._features(idx), throughput(times))
        self.model, self.trained_on = model, len(done)


class ListSpace:
    """A config list seen as a space whose i-th point is the i-th config (for features)."""

    def __init__(self, configs):
        names = sorted({k for c in configs for k in c.all_kwargs()})
        self.names = names
        self.knobs = {k: sorted({c.all_kwargs().get(k) for c in configs}, key=str) for k in names}
        self._arrays = {k: np.array([c.all_kwargs().get(k) for c in configs]) for k in names}

    def arrays(self):
        return self._arrays


class Subset:
    """Some points of a space's product, by flat index, seen as a space (for features)."""

    def __init__(self, space, idx):
        self.names, self.knobs = space.names, space.knobs
        full = space.arrays() if not hasattr(space, "sizes") else None
        if full is not None:
            self._arrays = {k: np.asarray(v)[idx] for k, v in full.items()}
        else:
            pos = np.unravel_index(np.asarray(idx, np.int64), space.sizes)
            self._arrays = {k: np.asarray(space.knobs[k])[p] for k, p in zip(space.names, pos)}

    def arrays(self):
        return self._arrays
