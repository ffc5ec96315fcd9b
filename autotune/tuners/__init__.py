"""Search strategies behind one contract: `next_batch(n) -> list[Config]` proposes configs to
measure (empty when it has nothing left), `update(records)` tells it what they measured.
The driver (autotune.driver.tune) owns measuring, budget, records and progress."""
from __future__ import annotations

import copy

from ..space import as_config
from .. import features as F
from .base import Tuner
from .exhaustive import ExhaustiveTuner
from .random import RandomTuner
from .grid import GridTuner
from .autotvm import AutoTVMTuner
from .ansor import AnsorTuner
from .bayes import BayesTuner
from .staged import StagedTuner, BayesAnsorTuner
from .portfolio import PortfolioTuner
from .tpe import TPETuner
from .tpe_multivariate import MultivariateTPETuner
from .alternating import AlternatingTuner, BayesTPETuner

TUNERS = {"exhaustive": ExhaustiveTuner, "random": RandomTuner, "grid": GridTuner, "autotvm": AutoTVMTuner, "ansor": AnsorTuner,
          "bayes": BayesTuner, "bayes_ansor": BayesAnsorTuner, "portfolio": PortfolioTuner,
          "tpe": TPETuner, "tpe_multivariate": MultivariateTPETuner, "bayes_tpe": BayesTPETuner}


SMALL_SPACE = 500_000  # points (listed ones, else the product's) a GP holds cheaply: 460K took 57 s, under 1 GB


def default_tuner(task=None, space=None, configs=None) -> str:
    """The tuner used when none is named: "exhaustive" for a config list; "ansor" where the
    kernel states its launch profile (program features) or the space is too large for a GP to
    hold (its listed points for a recorded landscape, whose restrictions often keep a few per cent
    of the product; else the product); "bayes_tpe" for any other space known only by its knobs (a
    real GPU's recorded landscape, an exported one, a traced kernel's meta-parameters): a Gaussian
    process and a Parzen estimator taking turns (tuners/alternating.py says why).

    The size limit is the GP's cost, not a landscape's: until 2026-12-05 it was 100,000 points,
    which sent HypoGPU's exported matmul and conv2d landscapes (157,500 points) to Ansor.  That
    was checked on four exports and held (Ansor 0.780, the turns 0.745); a second set of six,
    fixed before any was run (matmul prefill_ffn_up, small and lora_a, matmul_relu
    2048x2048x1024, conv2d 8x14x14x256x256 3x3 and 32x56x56x64x64 1x1; 10 seeds, 400
    measurements, Willemsen et al.'s score), reversed it: the turns 0.824, Ansor 0.547, the
    three taking turns (Ansor too) 0.794, Optuna's TPE 0.710.  Over all ten held-out exports the
    turns score 0.792 and Ansor 0.640, so the limit is now what the GP can hold.  Where the
    kernel states its profile, Ansor's model reads program features, not knobs: on the same six
    shapes tuned as HypoGPU kernels (10 seeds) Ansor scored 0.728 and the turns 0.743, Ansor ahead
    on four and level on one, far behind on lora_a (0.136 against 0.605), so Ansor stays there."""
    if configs is not None:
        return "exhaustive"
    if space is None or (task is not None and F.can_state(task)) or space.size_bound > SMALL_SPACE:
        return "ansor"
    return "bayes_tpe"


def make_tuner(tuner, space=None, configs=None, seed: int = 0, task=None) -> Tuner:
    """A fresh tuner for one search: from its name, a Tuner subclass, or a Tuner object
    (copied, so that one object can serve many keys).  `task`: what is being tuned, for tuners
    that look at it (AutoTVM's program features)."""
    if isinstance(tuner, Tuner):
        fresh = copy.deepcopy(tuner)
        if fresh.space is None and fresh.configs is None:
            fresh.space, fresh.configs = space, [as_config(c) for c in configs] if configs is not None else None
    elif isinstance(tuner, type) and issubclass(tuner, Tuner):
        fresh = tuner(space=space, configs=configs, seed=seed)
    elif not isinstance(tuner, str) or tuner not in TUNERS:
        raise ValueError(f"tuner must be one of {sorted(TUNERS)} or a Tuner object, got {tuner!r}")
    else:
        fresh = TUNERS[tuner](space=space, configs=configs, seed=seed)
    fresh.task = task
    return fresh


__all__ = ["Tuner", "ExhaustiveTuner", "RandomTuner", "GridTuner", "AutoTVMTuner", "AnsorTuner", "BayesTuner", "StagedTuner", "BayesAnsorTuner", "PortfolioTuner", "TUNERS", "make_tuner", "default_tuner"]
