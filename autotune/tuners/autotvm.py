"""AutoTVM (Chen et al., NeurIPS 2018; lecture §4): a learned cost model steers the search.

Plans are 16 configs, not TVM's 64: retraining after every 16 measurements reached 96 % / 100 %
of the optimum after 64 / 128 measurements on the square matmul here, against 71 % / 88 % with
plans of 64 (median of 5 seeds); `batch=64` gives TVM's behaviour.

Each plan of `batch` configs: train XGBoost on everything measured so far, score the unmeasured points (all of them when the space is small enough, else
by parallel simulated annealing on the model's prediction: `chains` walkers kept between plans,
each step changing one knob to an adjacent value, accepted by the Metropolis rule under a
cooling temperature, stopped early when the best found stop changing), take the best, picked for
diversity (greedy submodular: predicted score plus how many knob values they add), with a
share `epsilon` replaced by random points.  The first plan is random, unless a model trained
on other tasks' records (`transfer=`) already has an opinion; the task's own model then
learns the residual on top of it.

Failed configs are training data, but not for the ranking: a speed model ranks the configs
that ran and a classifier learns which ones run (model.GatedModel; `gate=False` trains one
model with failures at throughput 0, as TVM does).  Without the gate, a tile size that fails
with deep pipelines looks slow everywhere, and prefill_qkv's best (256-row tiles) was ranked
below 100,000 other points.  With it, three quarters of each plan (`local`) are the model's
best neighbours of the fastest measured configs: on the five shapes, 10 seeds, median share of
the optimum after 128 measurements went from 89-99 % to 98-100 % (`local=0.5`: small stayed at
90 %).

The tuner's own CPU goes mostly to scoring the space (1.2 µs a point): a whole space is scored
once per 64 measurements (`rescore` plans, TVM's plan size), and the plans in between rescore
the last full ranking's best 4,096 points plus 4,096 fresh random ones.  Boosting stops at
120 rounds (not TVM's early-stopped up to 8,000): on this project's spaces 80, 120 and 200
rounds searched alike within seed noise, and 120 keeps the tuner under 0.5 s of CPU per 64.
"""
from __future__ import annotations

import warnings

import numpy as np

from .model_based import ModelBasedTuner, Subset
from .. import features as F
from ..model import CostModel, throughput
from ..records import RecordLog
from ..cache_location import default_dir
from ..task import Task

EXACT_BELOW = 250_000     # spaces up to this size are scored exhaustively, larger ones by annealing


class AutoTVMTuner(ModelBasedTuner):
    name = "autotvm"
    KEEP = 4096  # points kept from a full scoring, and the random sample added between full scorings

    def __init__(self, space=None, configs=None, seed=0, features="auto", objective="rank", batch=16,
                 epsilon=0.05, diversity=True, chains=128, anneal_steps=500, early_stop=50, exact_below=EXACT_BELOW,
                 transfer=None, knob_weight=0.1, local=0.75, rescore=None, rounds=None, gate=True):
        super().__init__(space, configs, seed, features, objective, batch, epsilon, rounds, gate)
        if chains < 1 or anneal_steps < 1:
            raise ValueError(f"AutoTVMTuner: chains and anneal_steps must be positive, got {chains}, {anneal_steps}")
        self.diversity, self.n_chains, self.anneal_steps, self.early_stop = bool(diversity), chains, anneal_steps, early_stop
        self.exact_below, self.transfer, self.knob_weight = exact_below, transfer, float(knob_weight)
        if not 0.0 <= float(local) <= 1.0:
            raise ValueError(f"AutoTVMTuner: local must be in [0, 1], got {local!r}")
        self.local = float(local)
        # full rescoring of the space once per 64 measurements (every plan with TVM's plans of 64)
        self.rescore = max(1, 64 // batch) if rescore is None else int(rescore)
        if self.rescore < 1:
            raise ValueError(f"AutoTVMTuner: rescore must be a positive int, got {rescore!r}")
        self._shortlist, self._plans_since_full = None, 0
        self.chains = None

    def settings(self) -> dict:
        return {"tuner": self.name, "seed": self.seed, "features": self.features, "objective": self.objective,
                "batch": self.batch, "epsilon": self.epsilon, "diversity": self.diversity, "chains": self.n_chains,
                "transfer": _describe(self.transfer)}

    def _setup(self):
        if self._x is not None:
            return
        super()._setup()
        if self.transfer:
            self.base = self._transfer_model()

    # -- planning -------------------------------------------------------------------------------------
    def _make_plan(self) -> list:
        want = self._plan_size()
        if not want:
            return []
        model = self.model if self.model is not None else (self.base if self.base is not None and self.base.trained
                                                            else None)
        if model is None:
            return self._spread(want)
        n_local = int(round(self.local * want)) if self.pool is None else 0
        near = self._near_best(model, n_local) if n_local else []
        shortlist = [(i, s) for i, s in self.top(model, (want - len(near)) * (2 if self.diversity else 1) + len(near))
                     if i not in near]
        rest = want - len(near)
        picked = near + (self._diverse(shortlist, rest) if self.diversity else [i for i, _ in shortlist][:rest])
        n_random = int(round(self.epsilon * want))
        if n_random:
            picked = picked[:want - n_random]
            picked += self._random(n_random, set(picked))
        return picked

    def _spread(self, n) -> list:
        """The first plan: random points that cover every knob's values evenly (a Latin
        hypercube over the knob grid), so the first model sees each value of each knob."""
        if self.pool is not None:
            return self._random(n, set())
        cols = []
        for size in self.space.sizes:
            reps = np.resize(np.arange(size), n)
            cols.append(self.rng.permutation(reps))
        out = []
        for flat in np.ravel_multi_index(np.stack(cols), self.space.sizes):
            i = int(flat)
            if i not in out and self._legal(i):
                out.append(i)
        return out + self._random(n - len(out), set(out))

    def _near_best(self, model, n) -> list:
        """The model's best unmeasured points one knob step from the fastest measured ones."""
        done = sorted((t, i) for i, t in self.measured.items() if t is not None and np.isfinite(t))
        cands = set()
        for _, i in done[:4]:
            for c in self.space.neighbors(self.space.config(i)):
                j = self.space.flat_index(c)
                if j not in self.measured:
                    cands.add(j)
        if not cands:
            return []
        idx = np.array(sorted(cands))
        scores = model.predict(self._features(idx))
        order = np.lexsort((self.rng.random(len(idx)), -scores))
        return [int(idx[k]) for k in order[:n]]

    def top(self, model, n) -> list:
        """The n best unmeasured legal points by the model: [(pool index, score)], best first."""
        if self.size <= self.exact_below:
            return self._exact(model, n)
        return self._anneal(model, n)

    def _exact(self, model, n):
        """Every unmeasured point scored by the model, once per `rescore` plans; in between, the
        previous full ranking's best points plus a fresh random sample are rescored (the model
        moves little between plans, and scoring a whole space is most of the tuner's CPU)."""
        full = self._shortlist is None or self._plans_since_full >= self.rescore
        if full:
            idx = np.arange(self.size)
            scores = model.predict(self._x if self._x is not False else self._features(idx))
            keep = min(self.size, max(self.KEEP, 16 * n))
            self._shortlist = idx[np.argpartition(-scores, keep - 1)[:keep]] if keep < self.size else idx
            self._plans_since_full = 0
        else:
            sample = self.rng.integers(self.size, size=min(self.size, self.KEEP))
            idx = np.unique(np.concatenate([self._shortlist, sample]))
            scores = model.predict(self._features(idx))
        self._plans_since_full += 1
        scores = np.where(self._unmeasured_mask()[idx], scores, -np.inf)
        out = []
        # trees predict piecewise constants: many points tie, and ties are broken at random
        # (by index they would all come from one corner of the space)
        for k in np.lexsort((self.rng.random(idx.size), -scores)):
            if not np.isfinite(scores[k]) or len(out) == n:
                break
            if self._legal(idx[k]):
                out.append((int(idx[k]), float(scores[k])))
        return out

    def _anneal(self, model, n):
        """Parallel simulated annealing (TVM's sa_model_optimizer): walkers on the knob grid."""
        sizes = np.array(self.space.sizes if self.pool is None else [self.size])
        if self.chains is None:
            self.chains = np.stack([self.rng.integers(s, size=self.n_chains) for s in sizes], axis=1)
        pos = self.chains
        flat = np.ravel_multi_index(pos.T, sizes)
        scores = model.predict(self._features(flat))
        best: dict = {}
        unmeasured = lambda i: i not in self.measured  # noqa: E731

        def remember(idx, sc):
            for i, s in zip(idx.tolist(), sc.tolist()):
                if unmeasured(i) and (i not in best) and self._legal(i):
                    best[i] = s
            if len(best) > 4 * n:
                for i in sorted(best, key=best.get)[:len(best) - 2 * n]:
                    del best[i]
        remember(flat, scores)
        quiet, last = 0, None
        for step in range(self.anneal_steps):
            t = 1.0 - step / self.anneal_steps
            knob = self.rng.integers(len(sizes), size=len(pos))
            move = self.rng.choice([-1, 1], size=len(pos))
            cand = pos.copy()
            rows = np.arange(len(pos))
            cand[rows, knob] = np.clip(cand[rows, knob] + move, 0, sizes[knob] - 1)
            cflat = np.ravel_multi_index(cand.T, sizes)
            cscores = model.predict(self._features(cflat))
            accept = self.rng.random(len(pos)) < np.exp(np.minimum((cscores - scores) / (t + 1e-5), 0.0))
            pos[accept], scores[accept] = cand[accept], cscores[accept]
            remember(cflat, cscores)
            top = tuple(sorted(best, key=best.get, reverse=True)[:n])
            quiet = quiet + 1 if top == last else 0
            last = top
            if quiet >= self.early_stop:
                break
        self.chains = pos
        ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)[:n]
        return [(int(i), float(s)) for i, s in ranked]

    def _diverse(self, shortlist, n) -> list:
        """Greedy submodular pick: predicted score (scaled to [0, 1]) plus the knob values a
        point adds to those already picked."""
        if not shortlist:
            return []
        idx = np.array([i for i, _ in shortlist])
        sc = np.array([s for _, s in shortlist], np.float64)
        span = sc.max() - sc.min()
        sc = (sc - sc.min()) / span if span > 0 else np.zeros_like(sc)
        values = [tuple(sorted(self._config(i).all_kwargs().items())) for i in idx]
        covered, picked, left = set(), [], list(range(len(idx)))
        weight = self.knob_weight / max(len(values[0]), 1)
        while left and len(picked) < n:
            gains = [sc[j] + weight * sum(v not in covered for v in values[j]) for j in left]
            j = left.pop(int(np.argmax(gains)))
            picked.append(int(idx[j]))
            covered.update(values[j])
        return picked

    # -- transfer learning ----------------------------------------------------------------------------
    def _transfer_model(self):
        """A global model from other tasks' records of the same kernel and space."""
        records = _records_of(self.transfer)
        here = _kernel_name(getattr(self.task, "name", ""))
        groups, xs, ys, skipped = {}, [], [], 0
        for r in records:
            if _kernel_name(r.kernel) != here or (self.task is not None and r.kernel == self.task.name):
                skipped += 1  # another kernel, or this very task (its own records are resume data)
                continue
            if self.program and not r.shape:
                skipped += 1
                continue
            groups.setdefault(tuple(sorted(r.shape.items())), []).append(r)
        sizes = []
        for shape, rs in groups.items():
            other = self._task_at(dict(shape))
            if other is None:
                skipped += len(rs)
                continue
            space = self._space_of_pool()
            idx, times = [], []
            for r in rs:
                i = self._index(r.config)
                if i is None:
                    skipped += 1
                    continue
                idx.append(i)
                times.append(r.time if r.ok else float("inf"))
            if not idx:
                continue
            mat = F.program_matrix(other, Subset(space, np.array(idx))) if self.program else \
                F.knob_matrix(Subset(space, np.array(idx)))
            xs.append(mat)
            ys.append(throughput(np.array(times)))
            sizes.append(len(idx))
        if skipped:
            warnings.warn(f"autotvm transfer: {skipped} record(s) of another kernel, space or shape were ignored",
                          RuntimeWarning, stacklevel=5)
        if not xs:
            return None
        return CostModel(self.objective, seed=self.seed).fit(np.concatenate(xs), np.concatenate(ys), groups=sizes)

    def _task_at(self, shape):
        if self.task is None:
            return None
        if not self.program:
            return self.task  # knob features do not depend on the shape
        try:
            return Task(self.task.kernel, device=self.task.device, space=self.task.space, **shape)
        except TypeError:
            return None


def _kernel_name(task_name: str) -> str:
    return task_name.split("(", 1)[0]


def _records_of(source) -> list:
    if source == "cache":
        return RecordLog(default_dir() / "records.jsonl").read()
    if isinstance(source, RecordLog):
        return source.read()
    return list(source)


def _describe(source):
    if source is None or source is False or source == "cache":
        return source
    path = getattr(source, "path", None)
    return str(path) if path is not None else f"{len(list(source))} records"
