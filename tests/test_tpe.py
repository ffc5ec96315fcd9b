"""The tree-structured Parzen estimator (tuners/tpe.py), its multivariate form
(tuners/tpe_multivariate.py) and the default that alternates the GP with TPE
(tuners/alternating.py), on test_tuners' recorded 216-config matmul space."""
import math

import numpy as np
import pytest

from autotune import tune
from autotune.records import Record
from autotune.tuners import BayesTPETuner, MultivariateTPETuner, TPETuner
from autotune.tuners.bayes import BayesTuner

from tests.test_tuners import SPACE, TIMES, Replay, ReplayTask


def record(config, time):
    return Record(config, [float(time)]) if math.isfinite(time) else Record(config, [], "failed")


def proposals_after_forty(cls):
    """20 proposals of `cls` after 40 random configs, 200 random configs not among those 40, and
    the knobs of the fastest four of them."""
    rng = np.random.default_rng(0)
    valid = np.flatnonzero(np.isfinite(TIMES))
    start = rng.choice(valid, 40, replace=False)
    fast = [SPACE.config(int(i)).all_kwargs() for i in start[np.argsort(TIMES[start])][:4]]
    tuner = cls(space=SPACE, seed=0)
    tuner.update([record(SPACE.config(int(i)), TIMES[i]) for i in start])
    proposed = tuner.next_batch(20)
    assert len(set(proposed)) == 20 and not set(proposed) & {SPACE.config(int(i)) for i in start}
    others = [SPACE.config(int(i)) for i in rng.choice(np.setdiff1d(valid, start), 200)]
    return proposed, others, fast


def test_tpe_draws_the_levels_that_the_fast_configs_share():
    """After 40 random configs, TPE's proposals take each knob's level from the fastest few far
    more often than a random config does."""
    proposed, others, fast = proposals_after_forty(TPETuner)

    def shared(configs):      # per config: knobs whose level one of the fast four has
        return np.mean([sum(any(c.all_kwargs()[k] == f[k] for f in fast) for k in SPACE.names) for c in configs])

    assert shared(proposed) > shared(others) + 0.5


@pytest.mark.parametrize("tuner", ["tpe", "tpe_multivariate"])
def test_tpe_finds_the_best_sooner_than_random_sampling(tuner):
    """Within 60 of the 216 configs TPE measures the best in at least 3 of 5 seeds (random
    sampling: each seed with probability 60/216, 1.4 of 5 expected)."""
    found = 0
    for seed in range(5):
        result = tune(ReplayTask(), tuner, budget=60, seed=seed, measurer=Replay(), remeasure=False)
        found += result.best_time == TIMES.min()
    assert found >= 3


def test_multivariate_tpe_proposes_near_the_fast_configs():
    """After 40 random configs, each proposal agrees with one of the fastest four in more knobs
    than a random config does: the good density is a mixture of kernels around them."""
    proposed, others, fast = proposals_after_forty(MultivariateTPETuner)

    def agreement(configs):   # per config: knobs it shares with the fast config nearest to it
        return np.mean([max(sum(c.all_kwargs()[k] == f[k] for k in SPACE.names) for f in fast) for c in configs])

    assert agreement(proposed) > agreement(others) + 0.4


def test_a_measured_config_drawn_again_counts_once_more():
    """When the multivariate TPE's best candidate is a config already measured, it is kept as one
    more observation (Optuna does the same with a cached objective) and the search draws again:
    every proposal is still a config not measured."""
    tuner = MultivariateTPETuner(space=SPACE, seed=1)
    measured = set()
    for config in [SPACE.config(int(i)) for i in np.flatnonzero(np.isfinite(TIMES))[:12]]:
        tuner.update([record(config, TIMES[SPACE.flat_index(config)])])
        measured.add(config)
    for _ in range(60):
        (config,) = tuner.next_batch(1)
        assert config not in measured
        measured.add(config)
        tuner.update([record(config, TIMES[SPACE.flat_index(config)])])
    assert tuner.again and set(tuner.again) <= set(tuner.times)


def test_the_gp_and_tpe_take_turns_and_each_is_told_every_measurement():
    tuner = BayesTPETuner(space=SPACE, seed=2)
    gp, tpe = tuner.tuners
    assert isinstance(gp, BayesTuner) and isinstance(tpe, TPETuner)
    whose = []
    for _ in range(30):
        before = (len(gp.proposed), len(tpe.taken))
        (config,) = tuner.next_batch(1)
        whose.append("gp" if len(gp.proposed) > before[0] else "tpe")
        tuner.update([record(config, TIMES[SPACE.flat_index(config)])])
    assert whose == ["gp", "tpe"] * 15
    assert len(gp.times) == len(tpe.times) == 30                  # both model every measurement
    assert len(tuner.next_batch(4)) == 1                          # one per call: each turn sees the last


def test_a_member_with_nothing_left_passes_its_turn():
    tuner = BayesTPETuner(space=SPACE, seed=0)
    measured = set()
    while True:
        batch = tuner.next_batch(16)
        if not batch:
            break
        assert not set(batch) & measured
        measured.update(batch)
        tuner.update([record(c, TIMES[SPACE.flat_index(c)]) for c in batch])
    assert len(measured) == SPACE.size
