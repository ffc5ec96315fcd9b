"""Every search strategy against one recorded search space (216 matmul configs timed on
HypoGPU, replayed without noise): the contract and what each strategy is supposed to do."""
import json
import pathlib

import numpy as np
import pytest

from autotune import Space, tune
from autotune.tuners import TUNERS
from minitriton.hypogpu.measure import Measurement

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "matmul_square_subspace.json").read_text())
SPACE = Space(RECORDED["space"])
TIMES = np.array([np.inf if t is None else t for t in RECORDED["times"]])


class ReplayTask:
    name, device, space = "replay", "replay-device", SPACE


class Replay:
    """A measurer that looks times up in the recording (and charges 1 s each)."""

    def __init__(self):
        self.clock, self.calls = 0.0, []

    def measure(self, task, config, repeats=1):
        self.calls.append(config)
        self.clock += 1.0
        t = TIMES[SPACE.flat_index(config)]
        if not np.isfinite(t):
            return Measurement(config, [], "OutOfResources: shared memory", 1.0)
        return Measurement(config, [t] * repeats, None, 1.0)


@pytest.mark.parametrize("name", sorted(TUNERS))
def test_strategy_on_recorded_space(name):
    full = Replay()
    result = tune(ReplayTask(), name, budget=SPACE.size, seed=0, measurer=full, remeasure=False)
    assert len(full.calls) == SPACE.size == len(set(full.calls))        # every point once, none twice
    assert result.best_time == TIMES.min()                               # so the true best is found
    small = Replay()
    result = tune(ReplayTask(), name, budget=20, seed=1, measurer=small, batch_size=7, remeasure=False)
    assert len(small.calls) == 20 and len(set(small.calls)) == 20
    assert result.best_time == min(TIMES[SPACE.flat_index(c)] for c in small.calls)
    assert result.measured == 20 and small.clock == 20.0
    if name in ("grid", "exhaustive"):                                   # both walk the space in order
        assert [SPACE.flat_index(c) for c in small.calls] == list(range(20))
    else:
        again = Replay()
        tune(ReplayTask(), name, budget=20, seed=1, measurer=again, batch_size=7, remeasure=False)
        assert again.calls == small.calls                                # seeded: reproducible
        assert [SPACE.flat_index(c) for c in small.calls] != list(range(20))


def test_exhaustive_follows_a_config_list_and_resumes():
    configs = [SPACE.config(i) for i in (5, 3, 9, 7)]
    first = Replay()
    done = tune(ReplayTask(), "exhaustive", configs=configs, measurer=first, budget=2, remeasure=False)
    assert first.calls == configs[:2]
    rest = Replay()
    result = tune(ReplayTask(), "exhaustive", configs=configs, measurer=rest, resume=done.history, remeasure=False)
    assert rest.calls == configs[2:]
    assert result.best_time == min(TIMES[[5, 3, 9, 7]])


def test_unknown_tuner_is_refused():
    with pytest.raises(ValueError, match="tuner must be one of"):
        tune(ReplayTask(), "annealing", budget=3, measurer=Replay())


def test_bayes_finds_the_best_within_forty_measurements():
    """The GP learns which knobs matter from ten random configs and goes there: within 40 of
    the 216 configs it has measured the best in at least 4 of 5 seeds (random search: each seed
    with probability 40/216, under 1 of 5 expected)."""
    found = 0
    for seed in range(5):
        r = Replay()
        result = tune(ReplayTask(), "bayes", budget=40, seed=seed, measurer=r)
        assert len(set(r.calls)) == 40
        found += result.best_time == TIMES.min()
    assert found >= 4


def test_bayes_refuses_bad_settings():
    from autotune.tuners import BayesTuner
    with pytest.raises(ValueError, match="initial must be an int >= 2"):
        BayesTuner(space=SPACE, initial=1)
    with pytest.raises(ValueError, match="batch must be a positive int"):
        BayesTuner(space=SPACE, batch=0)


def test_bayes_places_sizes_by_their_logarithm():
    from autotune.tuners.bayes import encode
    assert np.allclose(encode([16, 32, 64, 128]), [0, 1 / 3, 2 / 3, 1])        # sizes: log scale
    assert np.allclose(encode([0, 1, 2, 4]), [0, 0.25, 0.5, 1])                # a zero: by value
    assert np.allclose(encode([3, 4, 5]), [0, 0.5, 1])                         # within 2x: by value
    assert np.allclose(encode(["row", "col", "tile"]), [0, 0.5, 1])            # names: by position
    assert np.allclose(encode([True, False]), [0, 1])
    assert np.allclose(encode([7]), [0])


@pytest.mark.parametrize("additive", [0.0, 0.5])
def test_the_gps_kernel_by_level_lookups_is_the_pairwise_formula_to_the_bit(additive):
    """The GP's kernel matrices are built from each knob's (levels x levels) distances looked up
    per pair of points (a numba loop); written out pair by pair, knob by knob in the same order,
    they must give the same bits, or the GP's proposals (and every stored curve) would drift."""
    from autotune.tuners.bayes import NOISE, fit_gp

    def matern52(sq):
        d = np.sqrt(5.0 * np.maximum(sq, 0.0))
        return (1.0 + d + d * d / 3.0) * np.exp(-d)

    def pairwise(a, b, scales):
        total, summed = np.zeros((len(a), len(b))), np.zeros((len(a), len(b)))
        for j, scale in enumerate(scales):
            sq = ((a[:, j, None] - b[None, :, j]) / scale) ** 2
            total += sq
            summed += matern52(sq)
        out = (1.0 - additive) * matern52(total)
        return out + additive * summed / len(scales) if additive else out

    rng = np.random.default_rng(7)
    levels = [np.linspace(0, 1, n) for n in (2, 3, 5, 8)]
    x, xs = (np.stack([rng.choice(v, n) for v in levels], axis=1) for n in (40, 25))
    scales = np.array([0.2, 0.6, 1.0, 4.0])
    gp = fit_gp(x, rng.standard_normal(40), scales, additive)
    assert np.array_equal(gp.chol, np.linalg.cholesky(pairwise(x, x, scales) + NOISE * np.eye(40)))
    mean, _ = gp.predict(xs)
    assert np.array_equal(mean, gp.mu + gp.sd * (pairwise(xs, x, scales) @ gp.alpha))


def test_bayes_alternates_a_trust_region_around_the_best_with_global_rounds():
    """Odd model rounds stay within `radius` knob changes of the best measured config (one at
    first, one more after LOCAL_PATIENCE measurements without improvement); even rounds may go
    anywhere."""
    from autotune.records import Record
    from autotune.tuners import BayesTuner
    tuner = BayesTuner(space=SPACE, seed=3)
    changes = lambda a, b: sum(a.all_kwargs()[k] != b.all_kwargs()[k] for k in SPACE.names)
    measured, radii, far_in_global = {}, [], 0
    for _ in range(60):
        before = tuner.rounds
        (config,) = tuner.next_batch(1)
        if tuner.rounds > before:                                   # a model round
            best = min((c for c in measured if np.isfinite(measured[c])), key=measured.get)
            if tuner.rounds % 2:
                assert changes(config, best) <= tuner.radius, (config, best, tuner.radius)
                radii.append(tuner.radius)
            else:
                far_in_global += changes(config, best) > 1
        t = TIMES[SPACE.flat_index(config)]
        measured[config] = t
        tuner.update([Record(config, [float(t)] if np.isfinite(t) else [], None if np.isfinite(t) else "failed")])
    assert radii[0] == 1 and max(radii) > 1        # one change at first, more when stuck
    assert far_in_global > 0                       # global rounds leave the neighbourhood
