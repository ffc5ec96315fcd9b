"""Ansor (Zheng et al., OSDI 2020; lecture §5): sketches, random annotation, and evolutionary
search steered by a learned cost model.

The space is the task's sketches (autotune/sketch.py): program structures whose blanks are
filled by random annotation.  Each round (`batch` measurements): retrain the model on all
measurements; start a population from random annotations of every sketch plus the best
programs measured so far; for a few generations, pick parents with probability growing with
the model's predicted throughput and make children by mutating one decision of a parent (a
tile size, the warps, the pipeline depth, or where work is computed: group size, split factor)
or by crossing two parents of the same sketch; keep the best of each generation.  Measure the
best predicted programs not measured yet, with a share `epsilon` of random annotations.

The model is XGBoost regression on throughput normalised per task, weighted by throughput
(Ansor's loss), on the AutoTVM tuner's program features; as there, failed programs teach a
validity classifier rather than the regression (model.GatedModel).

One deviation, measured: half of each round (`local`) goes to the model's best programs one
mutation step from the four fastest measured, the rest to the evolved population.  Over 10
seeds on square, prefill_qkv, decode and wgrad, the worst seed's share of the optimum after
512 measurements rose from 91-100 % to 99.9-100 %; the median measurements to 99 % stayed
within seed noise (56-147).

Variants for the ablation (lecture §5.7): `beam` builds programs decision by decision in a
fixed order and prunes partial programs by the model's score of them completed with defaults
(Halide's sequential construction); `no_finetune` ranks random annotations by the model only;
`limited` drops the rfactor sketches and tiles above 128, a hand-written template's space.
"""
from __future__ import annotations

import numpy as np

from .model_based import ModelBasedTuner
from .. import sketch as S

VARIANTS = ("full", "beam", "no_finetune", "limited")
# mutation families: knob name -> family (a knob that matches none is its own family, "other")
FAMILIES = (("tile", lambda k: k.startswith("BLOCK")), ("parallel", lambda k: k == "num_warps"),
            ("pipeline", lambda k: k == "num_stages"),
            ("location", lambda k: k.startswith(("GROUP", "SPLIT", "ROWS"))))
BEAM_ORDER = ("SPLIT", "BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK", "num_warps", "num_stages", "GROUP")


def _family(knob: str) -> str:
    return next((name for name, match in FAMILIES if match(knob)), "other")


class AnsorTuner(ModelBasedTuner):
    name = "ansor"
    weighted = True

    def __init__(self, space=None, configs=None, seed=0, variant="full", batch=16, epsilon=0.05, population=512,
                 generations=4, mutation=0.85, elite=0.05, features="auto", rounds=None, gate=True, sketches=None,
                 local=0.5):
        super().__init__(space, configs, seed, features, "reg", batch, epsilon, rounds, gate)
        if variant not in VARIANTS:
            raise ValueError(f"AnsorTuner: variant must be one of {VARIANTS}, got {variant!r}")
        if isinstance(population, bool) or not isinstance(population, int) or population < 2:
            raise ValueError(f"AnsorTuner: population must be an int >= 2, got {population!r}")
        if isinstance(generations, bool) or not isinstance(generations, int) or generations < 1:
            raise ValueError(f"AnsorTuner: generations must be a positive int, got {generations!r}")
        if not 0.0 <= float(mutation) <= 1.0:
            raise ValueError(f"AnsorTuner: mutation must be in [0, 1], got {mutation!r}")
        if not 0.0 <= float(elite) < 1.0:
            raise ValueError(f"AnsorTuner: elite must be in [0, 1), got {elite!r}")
        self.variant, self.population, self.generations = variant, population, generations
        self.mutation, self.elite, self.given_sketches = float(mutation), float(elite), sketches
        self.sketches = None
        if not 0.0 <= float(local) <= 1.0:
            raise ValueError(f"AnsorTuner: local must be in [0, 1], got {local!r}")
        self.local = float(local)

    def settings(self) -> dict:
        return {"tuner": self.name, "seed": self.seed, "variant": self.variant, "features": self.features,
                "batch": self.batch, "epsilon": self.epsilon, "population": self.population,
                "generations": self.generations}

    # -- sketches as allowed positions of each knob in the pool's domains ----------------------------
    def _setup(self):
        if self._x is not None:
            return
        super()._setup()
        sketches = self.given_sketches if self.given_sketches is not None else \
            S.of(self.task, self.space, self.configs) if self.task is not None or self.configs is not None else \
            S.of(None, self.space)
        if self.variant == "limited":
            sketches = [s for s in sketches if "rfactor" not in s.name] or list(sketches)[:1]
        domain = self._space_of_pool()
        self.names = list(domain.names)
        self.domains = [list(domain.knobs[k]) for k in self.names]
        if self.pool is not None:  # a config list: positions of each config's values, and the way back
            arrays = domain.arrays()
            pos = {k: {v: i for i, v in enumerate(d)} for k, d in zip(self.names, self.domains)}
            self.grid = np.array([[pos[k][v] for k, v in zip(self.names, row)]
                                  for row in zip(*(arrays[k] for k in self.names))], np.int64).reshape(-1, len(self.names))
            self.lookup = {tuple(r): i for i, r in enumerate(self.grid.tolist())}
            # configs of the list that differ from one another in knob j only: a mutation's moves
            self.groups = [{} for _ in self.names]
            for i, r in enumerate(self.grid.tolist()):
                for j in range(len(r)):
                    self.groups[j].setdefault(tuple(r[:j] + r[j + 1:]), []).append(i)
        self.sketches = []
        for sk in sketches:
            allowed = []
            for k, d in zip(self.names, self.domains):
                values = sk.space.knobs.get(k, d) if isinstance(sk.space, S.Space) else d
                keep = [i for i, v in enumerate(d) if v in values and
                        (self.variant != "limited" or not k.startswith("BLOCK") or v <= 128)]
                if not keep:
                    raise ValueError(f"AnsorTuner: sketch {sk.name!r} leaves knob {k!r} no value of {d}")
                allowed.append(np.array(keep, np.int64))
            self.sketches.append((sk, allowed))
        self.family = {}
        for j, k in enumerate(self.names):
            self.family.setdefault(_family(k), []).append(j)

    def _flat(self, genes: np.ndarray) -> np.ndarray:
        """Pool indices of gene rows (-1 where a config list has no such config)."""
        if len(genes) == 0:
            return np.zeros(0, np.int64)
        if self.pool is None:
            return np.ravel_multi_index(genes.T, self.space.sizes)
        return np.array([self.lookup.get(tuple(r), -1) for r in genes.tolist()], np.int64)

    def _genes(self, idx) -> np.ndarray:
        idx = np.asarray(idx, np.int64)
        if self.pool is None:
            return np.stack(np.unravel_index(idx, self.space.sizes), axis=1).astype(np.int64)
        return self.grid[idx]

    def _sketch_of(self, genes: np.ndarray) -> np.ndarray:
        """Which sketch each gene row belongs to (the first that allows it; -1 for none)."""
        out = np.full(len(genes), -1, np.int64)
        for s, (_, allowed) in reversed(list(enumerate(self.sketches))):
            inside = np.ones(len(genes), bool)
            for j, a in enumerate(allowed):
                inside &= np.isin(genes[:, j], a)
            out[inside] = s
        return out

    # -- random annotation, mutation, crossover ------------------------------------------------------
    def annotate(self, n: int, sketch_ids=None) -> tuple[np.ndarray, np.ndarray]:
        """n random programs: a sketch uniformly, then each blank uniformly over its legal values."""
        if self.pool is not None:
            idx = self.rng.integers(self.size, size=n)
            genes = self.grid[idx]
            return genes, self._sketch_of(genes)
        sk = self.rng.integers(len(self.sketches), size=n) if sketch_ids is None else np.asarray(sketch_ids)
        genes = np.empty((n, len(self.names)), np.int64)
        for s, (_, allowed) in enumerate(self.sketches):
            rows = np.flatnonzero(sk == s)
            for j, a in enumerate(allowed):
                genes[rows, j] = a[self.rng.integers(len(a), size=rows.size)]
        return genes, sk

    def _mutate(self, genes, sk):
        out = genes.copy()
        fams = list(self.family.values())
        for r in range(len(out)):
            allowed = self.sketches[sk[r]][1]
            knobs = fams[self.rng.integers(len(fams))]
            j = knobs[self.rng.integers(len(knobs))]
            if self.pool is not None:  # a config list: move to a listed config that differs in knob j
                row = out[r].tolist()
                mates = [i for i in self.groups[j].get(tuple(row[:j] + row[j + 1:]), ()) if self.grid[i, j] != row[j]]
                if mates:
                    out[r] = self.grid[mates[self.rng.integers(len(mates))]]
                continue
            a = allowed[j]
            if len(a) < 2:
                continue
            here = int(np.searchsorted(a, out[r, j]))
            if self.rng.random() < 0.5:   # the adjacent legal value
                step = -1 if here == len(a) - 1 or (here > 0 and self.rng.random() < 0.5) else 1
                out[r, j] = a[min(max(here + step, 0), len(a) - 1)]
            else:                         # any other legal value
                others = a[a != out[r, j]]
                out[r, j] = others[self.rng.integers(len(others))]
        return out

    def _crossover(self, a, b):
        take = self.rng.random(a.shape) < 0.5
        return np.where(take, a, b)

    # -- planning --------------------------------------------------------------------------------------
    def _make_plan(self) -> list:
        want = self._plan_size()
        if not want:
            return []
        if self.model is None:
            return self._annotated(want, set())
        n_random = int(round(self.epsilon * want))
        search = {"full": self._evolve, "limited": self._evolve, "no_finetune": self._ranked_random,
                  "beam": self._beam}[self.variant]
        scored = search()
        n_local = int(round(self.local * want)) if self.variant in ("full", "limited") else 0
        near = self._best_unmeasured(self._neighbours(), n_local) if n_local else []
        picked = near + [i for i in self._best_unmeasured(scored, want - n_random) if i not in near]
        picked = picked[:want - n_random]
        return picked + self._annotated(want - len(picked), set(picked))

    def _leftovers(self, n, exclude) -> list:
        """Random unmeasured programs of the sketches, found by listing them (a nearly
        exhausted small space, where random annotation keeps landing on measured ones)."""
        if self.size > 1_000_000:
            return []
        idx = np.flatnonzero(self._unmeasured_mask())
        idx = idx[self._sketch_of(self._genes(idx)) >= 0] if len(idx) else idx
        idx = [int(i) for i in self.rng.permutation(idx) if int(i) not in exclude and self._legal(int(i))]
        return idx[:n]

    def _annotated(self, n, exclude) -> list:
        """n unmeasured random annotations (fewer if they keep landing on measured programs)."""
        out = []
        for _ in range(20):
            if len(out) >= n:
                break
            genes, _ = self.annotate(4 * (n - len(out)) + 4)
            for i in self._flat(genes).tolist():
                if i >= 0 and i not in self.measured and i not in exclude and i not in out and self._legal(i):
                    out.append(i)
                    if len(out) == n:
                        break
        if len(out) < n:
            out += self._leftovers(n - len(out), set(out) | set(exclude))
        return out

    def _score(self, genes) -> tuple[np.ndarray, np.ndarray]:
        flat = self._flat(genes)
        scores = np.full(len(flat), -np.inf)
        ok = flat >= 0
        if ok.any():
            scores[ok] = self.model.predict(self._features(flat[ok]))
        return flat, scores

    def _best_unmeasured(self, scored: dict, n) -> list:
        order = sorted(scored.items(), key=lambda kv: (-kv[1], self.rng.random()))
        return [i for i, _ in order if i not in self.measured and self._legal(i)][:n]

    def _neighbours(self) -> dict:
        """The model's scores of every program one mutation step (an adjacent legal value of one
        blank) from the four fastest measured ones."""
        g_best, s_best = self._seeds()
        rows, ids = [], []
        for g, s in zip(g_best[:4], s_best[:4]):
            for j, a in enumerate(self.sketches[s][1]):
                here = int(np.searchsorted(a, g[j]))
                for k in (here - 1, here + 1):
                    if 0 <= k < len(a):
                        n = g.copy()
                        n[j] = a[k]
                        rows.append(n)
                        ids.append(s)
        if not rows:
            return {}
        flat, scores = self._score(np.array(rows))
        return {i: sc for i, sc in zip(flat.tolist(), scores.tolist()) if i >= 0 and np.isfinite(sc)}

    def _seeds(self):
        """The best measured programs, as gene rows and sketch ids."""
        done = sorted((t, i) for i, t in self.measured.items() if t is not None and np.isfinite(t))
        top = [i for _, i in done[:max(1, self.population // 8)]]
        if not top:
            return np.zeros((0, len(self.names)), np.int64), np.zeros(0, np.int64)
        genes = self._genes(top)
        sk = self._sketch_of(genes)
        return genes[sk >= 0], sk[sk >= 0]

    def _evolve(self) -> dict:
        g_best, s_best = self._seeds()
        genes, sk = self.annotate(self.population - len(g_best))
        genes, sk = np.concatenate([genes, g_best]), np.concatenate([sk, s_best])
        scored = {}
        for gen in range(self.generations):
            flat, scores = self._score(genes)
            for i, s in zip(flat.tolist(), scores.tolist()):
                if i >= 0 and np.isfinite(s) and i not in self.measured:
                    scored[i] = s
            if gen == self.generations - 1:
                break
            genes, sk = self._next_generation(genes, sk, scores)
        return scored

    def _next_generation(self, genes, sk, scores):
        n = len(genes)
        fitness = np.where(np.isfinite(scores), scores, -np.inf)
        # parents by rank, not by raw score: predicted failures sit far below everything else
        # and would squash the differences among the programs that run
        rank = np.empty(n)
        rank[np.argsort(-fitness, kind="stable")] = np.arange(n)
        weight = (1.0 - rank / n) ** 2
        prob = weight / weight.sum()
        n_elite = max(1, int(self.elite * n))
        elite = np.argsort(-fitness)[:n_elite]
        kids = n - n_elite
        parents = self.rng.choice(n, size=kids, p=prob)
        child = genes[parents].copy()
        child_sk = sk[parents].copy()
        mutate = self.rng.random(kids) < self.mutation
        child[mutate] = self._mutate(child[mutate], child_sk[mutate])
        for r in np.flatnonzero(~mutate):   # crossover with a parent of the same sketch
            mates = np.flatnonzero(sk == child_sk[r])
            mate = self.rng.choice(mates, p=prob[mates] / prob[mates].sum())
            child[r] = self._crossover(child[r], genes[mate])
        return np.concatenate([genes[elite], child]), np.concatenate([sk[elite], child_sk])

    def _ranked_random(self) -> dict:
        genes, _ = self.annotate(self.population * self.generations)
        flat, scores = self._score(genes)
        return {i: s for i, s in zip(flat.tolist(), scores.tolist()) if i >= 0 and np.isfinite(s)}

    def _beam(self) -> dict:
        """Sequential construction: decide the knobs in a fixed order; after each decision keep
        the `population // 8` partial programs whose completion with defaults (each undecided
        knob at its first legal value: the transformation not applied yet) scores best."""
        width = max(self.batch, self.population // 8)
        order = sorted(range(len(self.names)), key=lambda j: next(
            (p for p, prefix in enumerate(BEAM_ORDER) if self.names[j].startswith(prefix)), len(BEAM_ORDER)))
        genes = np.stack([np.array([a[0] for a in allowed]) for _, allowed in self.sketches])
        sk = np.arange(len(self.sketches))
        scored = {}
        for j in order:
            rows, ids = [], []
            for r in range(len(genes)):
                for v in self.sketches[sk[r]][1][j]:
                    g = genes[r].copy()
                    g[j] = v
                    rows.append(g)
                    ids.append(sk[r])
            genes, sk = np.array(rows), np.array(ids)
            flat, scores = self._score(genes)
            keep = np.argsort(-scores, kind="stable")[:width]
            genes, sk = genes[keep], sk[keep]
            if j == order[-1]:
                scored = {i: s for i, s in zip(flat[keep].tolist(), scores[keep].tolist()) if i >= 0}
        return scored
