"""The AutoTVM tuner (issue 9): an XGBoost cost model on program or knob features steering
exact scoring or simulated annealing, scored against HypoGPU's oracle."""
import warnings

import numpy as np
import pytest

import kernels
from kernels.shapes import SHAPES
from autotune import Task, tune, RecordLog, autotune, Config
from autotune.tuners import AutoTVMTuner
from autotune import features as F
from autotune.model import CostModel, throughput
from minitriton.hypogpu import oracle


def _share_of_optimum(task, result, n):
    truth = oracle(task)
    return truth.times.min() / min(truth.time_of(r.config) for r in result.history[:n])


def test_autotvm_beats_random_by_a_wide_margin():
    task = Task(kernels.matmul, **SHAPES["square"])
    auto = [_share_of_optimum(task, tune(task, "autotvm", budget=256, seed=s), 256) for s in range(3)]
    rand = [_share_of_optimum(task, tune(task, "random", budget=256, seed=s), 256) for s in range(3)]
    assert np.median(auto) >= 0.98
    assert np.median(auto) > np.median(rand) + 0.1


def test_annealing_finds_what_exact_scoring_finds():
    task = Task(kernels.matmul, **SHAPES["small"])
    space = task.space
    x = F.program_matrix(task, space)
    rng = np.random.default_rng(0)
    train = rng.choice(space.size, 200, replace=False)
    model = CostModel("rank").fit(x[train], throughput(oracle(task).times[train]))
    exact = AutoTVMTuner(space=space, seed=0)
    exact.task = task
    exact._setup()
    sa = AutoTVMTuner(space=space, seed=0, exact_below=0, chains=128, anneal_steps=500)
    sa.task = task
    sa._setup()
    want = {i for i, _ in exact.top(model, 20)}
    got = {i for i, _ in sa.top(model, 20)}
    assert len(want & got) >= 16          # the same top candidates, up to near-ties


def test_model_ranks_unseen_configs_and_predicts_fast():
    import time
    task = Task(kernels.matmul, **SHAPES["square"])
    x = F.program_matrix(task, task.space)
    times = oracle(task).times
    rng = np.random.default_rng(1)
    train, test = rng.choice(times.size, 512, replace=False), rng.choice(times.size, 3000, replace=False)
    model = CostModel("rank").fit(x[train], throughput(times[train]))
    t = time.perf_counter()
    scores = model.predict(x[:100_000])
    assert time.perf_counter() - t < 2.0 and scores.shape == (100_000,)
    pred, true = model.predict(x[test]), throughput(times[test])
    rho = np.corrcoef(np.argsort(np.argsort(pred)), np.argsort(np.argsort(true)))[0, 1]
    assert rho > 0.85


@pytest.mark.parametrize("kwargs,match", [
    (dict(features="loops"), "features must be"), (dict(objective="mse"), "objective must be one of"),
    (dict(batch=0), "batch must be a positive int"), (dict(epsilon=1.5), r"epsilon must be in \[0, 1\]")])
def test_bad_settings_name_the_setting(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AutoTVMTuner(**kwargs)


def test_a_config_list_smaller_than_the_budget_is_measured_once_each():
    task = Task(kernels.matmul, **SHAPES["small"])
    configs = [task.space.config(i) for i in range(0, 150_000, 7_000)]
    result = tune(task, "autotvm", budget=100, configs=configs, seed=0)
    assert sorted(map(str, (r.config for r in result.history))) == sorted(map(str, configs))


def test_resumed_autotvm_continues_from_its_records(tmp_path):
    task = Task(kernels.matmul, **SHAPES["decode"])
    log = RecordLog(tmp_path / "r.jsonl")
    full = tune(task, "autotvm", budget=48, seed=2, log=log, key="k")
    resumed = tune(task, "autotvm", budget=48, seed=2, key="k", resume=log.read("k")[:20])
    assert [r.config for r in resumed.history] == [r.config for r in full.history]


def test_transfer_from_other_shapes_starts_ahead(tmp_path):
    log = RecordLog(tmp_path / "r.jsonl")
    for name in ("square", "prefill_ffn_up", "small", "decode"):
        tune(Task(kernels.matmul, **SHAPES[name]), "autotvm", budget=256, seed=0, log=log, key=name)
    target = Task(kernels.matmul, **SHAPES["prefill_qkv"])
    warm = tune(target, AutoTVMTuner(transfer=log), budget=16, seed=0)
    cold = tune(target, AutoTVMTuner(), budget=16, seed=0)
    assert _share_of_optimum(target, warm, 16) >= 0.95
    assert _share_of_optimum(target, warm, 16) > _share_of_optimum(target, cold, 16)


def test_transfer_ignores_records_of_other_kernels_with_a_warning(tmp_path):
    from autotune import Record
    foreign = [Record(Config({"BLOCK": 64}), [1e-5], kernel="softmax(M=4, N=4)", shape={"M": 4, "N": 4})]
    task = Task(kernels.matmul, **SHAPES["small"])
    with pytest.warns(RuntimeWarning, match="ignored"):
        result = tune(task, AutoTVMTuner(transfer=foreign), budget=16, seed=0)
    assert result.measured == 16


def test_the_decorator_tunes_a_traced_kernel_with_knob_features(tmp_path):
    import minitriton as mt
    from tests.test_faults import scale_kernel, CONFIGS, _run
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path, tuner="autotvm", budget=6)(scale_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # traced: the knobs, without a warning
        _run(k, 100)
    assert k.last_tuning.measured == 6


def test_the_decorator_learns_from_its_earlier_keys(tmp_path, monkeypatch):
    from tests.test_faults import scale_kernel, CONFIGS, _run
    import autotune.tuners.autotvm as atvm
    built = []
    real = atvm.AutoTVMTuner._transfer_model

    def spy(self):
        model = real(self)
        built.append(model is not None)
        return model
    monkeypatch.setattr(atvm.AutoTVMTuner, "_transfer_model", spy)
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path, tuner="autotvm", budget=8)(scale_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run(k, 100)                     # M bucket 128: nothing earlier to learn from
        _run(k, 300)                     # M bucket 512: learns from the 128 tuning
    assert built == [True]
    off = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path, tuner="autotvm", budget=8,
                   transfer=False)(scale_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run(off, 600)
    assert built == [True]


def test_a_whole_space_is_scored_once_per_64_measurements_and_a_shortlist_in_between(monkeypatch):
    task = Task(kernels.matmul, **SHAPES["small"])
    sizes = []
    original = CostModel.predict
    monkeypatch.setattr(CostModel, "predict", lambda self, x: sizes.append(len(x)) or original(self, x))
    tuner = AutoTVMTuner(seed=0, local=0.0)        # plans of 16: a full scoring every 4th plan
    result = tune(task, tuner, budget=16 * 9, seed=0)
    assert len(result.history) == 144
    full = [n == task.space.size for n in sizes]
    assert sum(full) == 2                          # plans 2 and 6 (the first plan is a spread, unscored)
    assert max(n for n, f in zip(sizes, full) if not f) <= 2 * AutoTVMTuner.KEEP
    with pytest.raises(ValueError, match="rescore"):
        AutoTVMTuner(rescore=0)
    with pytest.raises(ValueError, match="rounds"):
        AutoTVMTuner(rounds=0)


def test_failures_teach_validity_without_ranking_a_fast_knob_value_low():
    """Big tiles are twice as fast but fail with more than two pipeline stages: the gated model
    ranks a big tile that runs first, and every config it expects to fail last."""
    from autotune.model import GatedModel
    tile, stages = np.meshgrid([0, 1], np.arange(1, 7), indexing="ij")
    x = np.stack([tile.ravel(), stages.ravel()], 1).astype(np.float32)
    fails = (x[:, 0] == 1) & (x[:, 1] > 2)
    times = np.where(fails, np.inf, np.where(x[:, 0] == 1, 1.0, 2.0) * (1 + 0.01 * x[:, 1]))
    train = np.r_[0:12]
    model = GatedModel("rank", seed=0).fit(x[train], times[train])
    score = model.predict(x)
    best = int(np.argmax(score))
    assert x[best, 0] == 1 and not fails[best]
    assert score[fails].max() < score[~fails].min()
