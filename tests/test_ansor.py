"""The Ansor tuner (issue 10): sketches from the library kernels' rules, random annotation,
evolutionary search with the learned model, the ablation variants; scored by HypoGPU's oracle."""
import warnings

import numpy as np
import pytest

import kernels
import minitriton as mt
import minitriton.language as tl
from kernels.shapes import SHAPES
from autotune import Task, tune, autotune, Config, Space
from autotune.tuners import AnsorTuner
from tests.test_autotvm import _share_of_optimum as _share


def test_sketches_follow_the_rules_and_say_why():
    square, wgrad = Task(kernels.matmul, **SHAPES["square"]), Task(kernels.matmul, **SHAPES["wgrad"])
    assert [s.name for s in square.sketches] == ["tiled"]
    assert [s.name for s in wgrad.sketches] == ["tiled", "tiled + rfactor"]
    text = str(square.sketches)
    assert "not generated" in text and "1024 output tiles" in text            # the reason it was not
    assert wgrad.sketches[0].space.knobs["SPLIT_K"] == [1]
    assert 1 not in wgrad.sketches[1].space.knobs["SPLIT_K"]
    relu = Task(kernels.matmul_relu, M=4096, N=4096, K=4096)
    assert [s.name for s in relu.sketches] == ["tiled, fused epilogue"]
    assert "cache write + separate epilogue" in str(relu.sketches)
    rows = Task(kernels.row_sum, M=16, N=1_000_000)
    assert [s.name for s in rows.sketches] == ["one program per row", "rfactor"]
    conv = Task(kernels.conv2d, N=16, H=7, W=7, C=512, F=512, KH=3, KW=3, padding=1)
    assert len(conv.sketches) == 2
    assert [s.name for s in Task(kernels.softmax, M=64, N=1024).sketches] == ["as written"]


def test_random_annotation_fills_each_blank_within_its_sketch():
    task = Task(kernels.matmul, **SHAPES["wgrad"])
    tuner = AnsorTuner(seed=0)
    tuner.task, tuner.space = task, task.space
    tuner._setup()
    genes, sketch = tuner.annotate(4000)
    split = np.array(task.space.knobs["SPLIT_K"])[genes[:, task.space.names.index("SPLIT_K")]]
    assert set(np.unique(sketch)) == {0, 1}
    assert (split[sketch == 0] == 1).all() and (split[sketch == 1] > 1).all()
    assert len(np.unique(split[sketch == 1])) == 5                           # every legal split value drawn


def test_ansor_beats_random_and_reaches_the_optimum_on_wgrad():
    task = Task(kernels.matmul, **SHAPES["wgrad"])
    ansor = [_share(task, tune(task, "ansor", budget=384, seed=s), 384) for s in range(3)]
    rand = [_share(task, tune(task, "random", budget=384, seed=s), 384) for s in range(3)]
    assert np.median(ansor) >= 0.99
    assert np.median(ansor) > np.median(rand) + 0.03


def test_variants_search_their_own_spaces():
    task = Task(kernels.matmul, **SHAPES["wgrad"])
    limited = tune(task, AnsorTuner(variant="limited", seed=0), budget=64, seed=0)
    assert all(r.config.kwargs["SPLIT_K"] == 1 and r.config.kwargs["BLOCK_M"] <= 128 for r in limited.history)
    assert _share(task, limited, 64) < 0.7                                  # the best program is not in its space
    for variant in ("beam", "no_finetune"):
        result = tune(task, AnsorTuner(variant=variant, seed=0), budget=48, seed=0)
        assert len({r.config for r in result.history}) == 48


def test_seeded_and_within_a_config_list():
    task = Task(kernels.matmul, **SHAPES["small"])
    a = tune(task, "ansor", budget=40, seed=3)
    b = tune(task, "ansor", budget=40, seed=3)
    assert [r.config for r in a.history] == [r.config for r in b.history]
    configs = list(task.space.sample(np.random.default_rng(0), 30))
    listed = tune(task, "ansor", configs=configs, budget=100, seed=0)
    assert len(listed.history) == 30 and {r.config for r in listed.history} == set(configs)


def test_decorator_with_a_config_list_on_a_user_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path))

    @autotune(configs=[Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256) for w in (1, 2, 4)], key=["n"],
              tuner="ansor", budget=5)
    @mt.jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = np.arange(1000, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # a traced kernel: knob features, nothing to warn about
        double[lambda meta: (mt.cdiv(1000, meta["BLOCK"]),)](x, y, 1000)
    np.testing.assert_array_equal(y, 2 * x)
    assert double.best_config in double.configs


@pytest.mark.parametrize("bad, match", [(dict(variant="greedy"), "variant"), (dict(population=1), "population"),
                                        (dict(generations=0), "generations"), (dict(mutation=2), "mutation"),
                                        (dict(batch=0), "batch"), (dict(epsilon=-0.1), "epsilon"),
                                        (dict(features="pixels"), "features"), (dict(local=1.5), "local")])
def test_bad_settings_name_the_setting(bad, match):
    with pytest.raises(ValueError, match=match):
        AnsorTuner(**bad)


def test_resumed_ansor_continues_from_its_records(tmp_path):
    from autotune import RecordLog
    task = Task(kernels.matmul, **SHAPES["wgrad"])
    log = RecordLog(tmp_path / "r.jsonl")
    full = tune(task, "ansor", budget=48, seed=2, log=log, key="k")
    resumed = tune(task, "ansor", budget=48, seed=2, key="k", resume=log.read("k")[:20])
    assert [r.config for r in resumed.history] == [r.config for r in full.history]


def test_settings_are_part_of_the_cache_key():
    from autotune.tuning_keys import tuner_key as _tuner_key
    assert _tuner_key(AnsorTuner(variant="beam")) != _tuner_key(AnsorTuner())
    assert _tuner_key(AnsorTuner(population=256)) != _tuner_key(AnsorTuner())


def test_decorator_over_a_space_on_a_user_kernel(tmp_path):
    @autotune(space=Space(BLOCK=[32, 64, 128, 256], num_warps=[1, 2, 4]), key=["n"], tuner="ansor", budget=6,
              cache_dir=tmp_path)
    @mt.jit
    def negate(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = np.arange(700, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        negate[lambda meta: (mt.cdiv(700, meta["BLOCK"]),)](x, y, 700)
    np.testing.assert_array_equal(y, -x)
    assert negate.best_config.kwargs["BLOCK"] in (32, 64, 128, 256)
