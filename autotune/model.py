"""The learned cost model of AutoTVM (and Ansor): gradient-boosted trees (XGBoost) from a
config's features to its throughput, trained as measurements arrive.

Objectives: `rank` (pairwise ranking, AutoTVM's default: only the order of configs matters to
a search) and `reg` (regression on throughput normalised to [0, 1] per task).  Failed configs
are training data with throughput 0.  `base` is a model trained on other tasks' records
(transfer learning): this model then learns the residual on top of its predictions
(f = f_global + f_local, through XGBoost's base margin).
"""
from __future__ import annotations

import numpy as np

OBJECTIVES = {"rank": "rank:pairwise", "reg": "reg:squarederror"}


def throughput(times: np.ndarray) -> np.ndarray:
    """1 / time, normalised to [0, 1] (failed configs, with infinite time, get 0)."""
    t = np.asarray(times, np.float64)
    y = np.where(np.isfinite(t) & (t > 0), 1.0 / np.where(np.isfinite(t) & (t > 0), t, 1.0), 0.0)
    top = y.max() if y.size else 0.0
    return y / top if top > 0 else y


class CostModel:
    TREE = {"max_depth": 3, "eta": 0.3, "min_child_weight": 1}  # AutoTVM's settings (xgboost_cost_model.py)

    def __init__(self, objective: str = "rank", seed: int = 0, base: "CostModel | None" = None, rounds: int = 120,
                 weighted: bool = False):
        """`weighted`: each sample's squared error weighted by its throughput (Ansor's loss: the
        model cares most about the fast programs it will be asked to tell apart)."""
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
        self.objective, self.seed, self.base, self.rounds, self.weighted = objective, seed, base, rounds, weighted
        self.booster = None

    def _params(self):
        # AutoTVM's tree settings (xgboost_cost_model.py): shallow trees, fast learning rate
        params = {"gamma": 1e-4, "subsample": 1.0, "lambda": 1.0, "alpha": 0.0, **self.TREE,
                  "objective": OBJECTIVES[self.objective], "nthread": 1, "seed": self.seed, "verbosity": 0}
        if self.objective == "rank":
            # pairs drawn across the whole task, as AutoTVM's pairwise loss sees them (XGBoost's
            # newer default only pairs the top of each list)
            params.update(lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8)
        return params

    def fit(self, x: np.ndarray, y: np.ndarray, groups=None) -> "CostModel":
        """`groups`: sizes of consecutive runs of rows from one task (ranking is within a task;
        throughputs are normalised per task by the caller)."""
        import xgboost as xgb   # on first fit: its import takes about a second, and only model-based tuners fit
        x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
        data = xgb.DMatrix(x, label=y)
        if self.base is not None and self.base.trained:
            data.set_base_margin(self.base.margin(x))
        if self.objective == "rank":
            data.set_group(list(groups) if groups is not None else [len(y)])
        elif self.weighted:
            data.set_weight(np.maximum(y, 1e-3))
        self.booster = xgb.train(self._params(), data, num_boost_round=self.rounds)
        return self

    @property
    def trained(self) -> bool:
        return self.booster is not None or (self.base is not None and self.base.trained)

    def margin(self, x: np.ndarray) -> np.ndarray:
        """Raw scores (higher is faster), base model included."""
        x = np.asarray(x, np.float32)
        base = self.base.margin(x) if self.base is not None and self.base.trained else None
        if self.booster is None:
            return base if base is not None else np.zeros(len(x), np.float32)
        # straight from the array (no DMatrix copy): a fifth faster on a whole space
        return self.booster.inplace_predict(x, predict_type="margin", base_margin=base)

    predict = margin


class GatedModel:
    """A speed model that learns from failures without letting them pull the ranking down.

    Trained on throughput with failed configs at 0, one ranking model concludes that a knob
    value is slow when it is merely often illegal (a 256-row tile fails with deep pipelines but
    is the fastest tile with shallow ones), and stops proposing it.  Here the speed model ranks
    the configs that ran, and a classifier trained on every measurement (failed ones as the
    negative class) says which configs will run; predicted failures rank below every predicted
    success, in the speed model's order."""

    def __init__(self, objective: str = "rank", seed: int = 0, base: CostModel | None = None, rounds: int = 120,
                 weighted: bool = False):
        self.speed = CostModel(objective, seed=seed, base=base, rounds=rounds, weighted=weighted)
        self.valid = None
        self.seed, self.rounds = seed, rounds

    def fit(self, x: np.ndarray, times: np.ndarray) -> "GatedModel":
        x = np.asarray(x, np.float32)
        ok = np.isfinite(times) & (times > 0)
        if ok.sum() >= 2 and not ok.all():
            self.speed.fit(x[ok], throughput(times[ok]))
            self.valid = _classifier(x, ok, self.seed, self.rounds)
        else:
            self.speed.fit(x, throughput(times))
        return self

    @property
    def trained(self) -> bool:
        return self.speed.trained

    def predict(self, x: np.ndarray) -> np.ndarray:
        score = self.speed.predict(x)
        if self.valid is None or score.size == 0:
            return score
        runs = self.valid.inplace_predict(np.asarray(x, np.float32)) >= 0.5
        drop = float(score.max() - score.min()) + 1.0
        return np.where(runs, score, score - drop)


def _classifier(x, ok, seed, rounds):
    import xgboost as xgb
    # whether a config runs is decided by rules, not noise: leaves may hold a single config
    params = {**CostModel.TREE, "min_child_weight": 0.25, "objective": "binary:logistic", "nthread": 1,
              "seed": seed, "verbosity": 0}
    return xgb.train(params, xgb.DMatrix(x, label=ok.astype(np.float32)), num_boost_round=max(rounds // 4, 10))
