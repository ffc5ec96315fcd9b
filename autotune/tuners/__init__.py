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
from .alternating import AlternatingTuner, BayesTPETuner

TUNERS = {"exhaustive": ExhaustiveTuner, "random": RandomTuner, "grid": GridTuner, "autotvm": AutoTVMTuner, "ansor": AnsorTuner,
          "bayes": BayesTuner, "bayes_ansor": BayesAnsorTuner, "portfolio": PortfolioTuner,
          "tpe": TPETuner, "bayes_tpe": BayesTPETuner}


SMALL_SPACE = 100_000  # points (listed ones, else the product's) up to which a GP's cost stays cheap


def default_tuner(task=None, space=None, configs=None) -> str:
    """The tuner used when none is named: "exhaustive" for a config list; "ansor" where the
    kernel states its launch profile (program features) or the space is large (its listed points
    for a recorded landscape, whose restrictions often keep a few per cent of the product; else
    the product); "bayes_tpe" for a small space known only by its knobs (a real GPU's recorded
    landscape, a traced kernel's few meta-parameters): a Gaussian process and a Parzen estimator
    taking turns (tuners/alternating.py says why and how it was chosen).  On large knob-only
    spaces the turns were better than Ansor on the two landscapes the rule was decided on and
    worse on the two held out (HypoGPU's matmul and conv2d exports), so Ansor stays there.
    Checked again on 2026-12-05 against AutoTVM, which beat Ansor on the leaderboard's four
    large exports (19 seeds: score 0.716 against 0.586): on four exports the leaderboard does not
    hold (matmul square, lora_b and prefill_ffn_down, conv2d 32x28x28x128x128; 10 seeds) Ansor
    scored 0.780, AutoTVM 0.634, the turns 0.745 (Optuna's TPE 0.810), so the rule stands."""
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
