"""The Replay device (issue 12): Kernel Tuner cache files of real GPUs as landscapes."""
import gzip
import json
import pathlib
import warnings

import numpy as np
import pytest

import kernels
from autotune import Task, tune
from minitriton.hypogpu import oracle
from minitriton.replay import Replay, ReplayFileError, export_cache

DATA = pathlib.Path(__file__).resolve().parents[1] / "datasets"   # shipped with the project
PNPOLY = DATA / "pnpoly_RTX_2080_Ti.json.gz"


def test_a_real_gpus_space_its_failures_and_its_noise():
    device = Replay(PNPOLY)
    task = device.task()
    truth = oracle(task)
    assert task.space.size == 4 * 31 * 11 * 3 and truth.legal.sum() == 3722          # 370 failed at run time
    raw = json.loads(gzip.decompress(PNPOLY.read_bytes()))["cache"]
    entry = raw["0,32,1,0"]
    config = task.space.config(task.space.flat_index({"between_method": 0, "block_size_x": 32, "tile_size": 1,
                                                      "use_method": 0}))
    assert truth.time_of(config) == pytest.approx(entry["time"] / 1e3)
    m = device.measurer(seed=3)
    got = m.measure(task, config, repeats=4)
    scale = entry["time"] / np.mean(entry["times"])                                  # pnpoly's time includes host work
    allowed = {round(t * scale / 1e3, 12) for t in entry["times"]}
    assert got.ok and {round(s, 12) for s in got.samples} <= allowed
    assert m.clock == pytest.approx((entry["compile_time"] + 4 * entry["benchmark_time"]) / 1e3)
    again = device.measurer(seed=3).measure(task, config, repeats=4)
    assert again.samples == got.samples                                               # seeded
    failed = next(k for k, v in raw.items() if isinstance(v["time"], str))
    bad = dict(zip(["between_method", "block_size_x", "tile_size", "use_method"], map(int, failed.split(","))))
    assert m.measure(task, task.space.config(task.space.flat_index(bad))).error == "RuntimeFailedConfig"


@pytest.mark.parametrize("tuner", ["random", "grid", "autotvm", "ansor", "bayes", "bayes_ansor", "tpe", "bayes_tpe"])
def test_every_tuner_runs_on_a_replayed_space(tuner):
    task = Replay(PNPOLY).task()
    result = tune(task, tuner, budget=40, seed=1)
    assert result.measured == 40 and all(c in task.space for c in (r.config for r in result.history))
    truth = oracle(task)
    assert truth.best_time / truth.time_of(result.best_config) > 0.5


def test_the_default_tuner_follows_what_is_known_of_the_space():
    """A space known only by its knobs (a recorded landscape, HypoGPU's matmul space without its
    kernel): a GP and TPE in turn; a kernel that states its launch profile keeps Ansor (program
    features); a config list is walked."""
    from autotune.tuners import default_tuner
    from kernels.shapes import SHAPES
    assert default_tuner(Replay(PNPOLY).task(), Replay(PNPOLY).task().space) == "bayes_tpe"
    matmul = Task(kernels.matmul, **SHAPES["small"])
    assert default_tuner(matmul, matmul.space) == "ansor"
    assert default_tuner(None, matmul.space) == "bayes_tpe"      # the same 157,500 points known only by their knobs
    assert default_tuner(matmul, matmul.space, configs=[]) == "exhaustive"
    result = tune(Replay(PNPOLY).task(), budget=30, seed=2)   # no tuner named: the default's records
    named = tune(Replay(PNPOLY).task(), "bayes_tpe", budget=30, seed=2)
    assert [r.config for r in result.history] == [r.config for r in named.history]


def _sparse_file(folder):
    """300 configs of an 823,543-point product (7 knobs of 7 sizes), the time set by three knobs."""
    values = [1, 2, 4, 8, 16, 32, 64]
    params = {f"p{j}": values for j in range(7)}
    rng = np.random.default_rng(5)
    cache = {}
    while len(cache) < 300:
        point = [int(v) for v in rng.choice(values, 7)]
        time = 1.0 + sum((np.log2(v) - 2) ** 2 for v in point[:3]) + 0.1 * rng.random()
        cache[",".join(map(str, point))] = {**dict(zip(params, point)), "time": time, "times": [time]}
    path = folder / "sparse.json"
    path.write_text(json.dumps({"tune_params_keys": list(params), "tune_params": params, "cache": cache}))
    return path, params


def test_a_sparse_recorded_space_is_judged_by_its_configs_not_its_product(tmp_path):
    """Kernel Tuner's restrictions often keep a few per cent of the product: 300 configs of an
    823,543-point product are a small space for the GP, which sets up from the list."""
    from autotune.tuners import SMALL_SPACE, default_tuner
    from autotune import Space
    path, params = _sparse_file(tmp_path)
    task = Replay(path).task()
    assert task.space.size == 7 ** 7 > SMALL_SPACE and len(task.space) == 300
    assert default_tuner(task, task.space) == "bayes_tpe"
    assert default_tuner(task, Space(params)) == "ansor"             # the same knobs, nothing listed
    result = tune(task, budget=40, seed=0)
    assert result.measured == 40 and all(c in task.space for c in (r.config for r in result.history))
    truth = oracle(task)
    assert truth.best_time / truth.time_of(result.best_config) > 0.8


def test_ansor_evolves_a_sparse_recorded_space_within_its_configs(tmp_path):
    """On the product, nearly every mutation of a listed config leaves the file (0.1 % of it is
    listed), so the evolved candidates would be almost all unmeasurable; searched as its list,
    every candidate Ansor scores is a config the file holds."""
    from autotune.records import Record
    from autotune.tuners import AnsorTuner
    task = Replay(_sparse_file(tmp_path)[0]).task()
    truth = oracle(task)
    tuner = AnsorTuner(space=task.space, seed=0)
    tuner.task = task
    while len(tuner.seen) < 40:
        batch = tuner.next_batch(8)
        tuner.update([Record(c, [truth.time_of(c)], None) for c in batch])
    scored = tuner._evolve()
    assert len(scored) >= 100 and all(tuner._config(i) in task.space for i in scored)


def test_hypogpu_landscapes_and_records_round_trip(tmp_path):
    task = Task(kernels.softmax, M=4096, N=1024)
    truth = oracle(task)
    path = export_cache(tmp_path / "softmax.json.gz", task)
    back = Replay(path).task()
    again = oracle(back)
    for cfg in truth.configs[::7]:
        assert again.time_of(cfg) == pytest.approx(truth.time_of(cfg), rel=1e-8) or \
            (not np.isfinite(truth.time_of(cfg)) and not np.isfinite(again.time_of(cfg)))
    result = tune(task, "random", budget=12, seed=0)
    path = export_cache(tmp_path / "records.json", records=result.history)
    replayed = Replay(path)
    for r in result.history:
        assert replayed.entry(r.config) is not None
        if r.ok:
            assert oracle(replayed.task()).time_of(r.config) == pytest.approx(np.mean(r.samples), rel=1e-12)


def test_records_of_a_replayed_gpu_export_as_its_own_parameters(tmp_path):
    """Every Config carries launch options (num_warps, num_stages); a recorded GPU's file has no
    such parameters, so its records export with the file's parameters, in its order."""
    path, params = _sparse_file(tmp_path)
    task = Replay(path).task()
    result = tune(task, "random", budget=10, seed=0)
    for name, kw in (("with_task.json", {"task": task}), ("records_only.json", {})):
        out = json.loads(export_cache(tmp_path / name, records=result.history, **kw).read_text())
        assert out["tune_params_keys"] == list(params)
        if kw:
            assert out["tune_params"] == params
        back = Replay(tmp_path / name)
        assert all(back.cost(back.entry(r.config)) == pytest.approx(np.mean(r.samples)) for r in result.history)


def test_bad_files_say_which_file_and_what_is_wrong(tmp_path):
    cases = {"text.json": b"not json at all",
             "wrong.json": json.dumps({"cache": {}}).encode(),
             "empty.json": json.dumps({"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {}}).encode(),
             "failed.json": json.dumps({"tune_params_keys": ["a"], "tune_params": {"a": [1]},
                                        "cache": {"1": {"a": 1, "time": "RuntimeFailedConfig"}}}).encode(),
             "t4.json": json.dumps({"schema_version": "1.0.0", "results": [{"configuration": {"a": 1}}]}).encode(),
             "stray.json": json.dumps({"tune_params_keys": ["a"], "tune_params": {"a": [1]},
                                       "cache": {"3": {"a": 3, "time": 2.0}}}).encode()}
    why = {"text.json": "not a Kernel Tuner cache file", "wrong.json": "lacks tune_params_keys",
           "empty.json": "empty cache", "t4.json": "T4 results file", "failed.json": "no config ran", "stray.json": "value outside tune_params"}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ReplayFileError, match=why[name]) as e:
            Replay(tmp_path / name)
        assert name in str(e.value)
    with pytest.raises(ReplayFileError, match="cannot read"):
        Replay(tmp_path / "missing.json")


def test_a_malformed_entry_costs_only_itself(tmp_path):
    """Entries that are not records, name values outside tune_params or cannot be placed are
    skipped with a warning naming the first; the rest of the file is the landscape."""
    good = {f"{a}": {"a": a, "time": float(a)} for a in (1, 2, 4)}
    bad = {"7": {"a": 7, "time": 0.1}, "x": [1, 2], "y": {"a": [1], "time": 0.2}, "z,z": {"time": 0.3}}
    (tmp_path / "mixed.json").write_text(json.dumps({"tune_params_keys": ["a"], "tune_params": {"a": [1, 2, 4]},
                                                     "cache": {**good, **bad}}))
    with pytest.warns(UserWarning, match=r"mixed.json: 4 of 7 cache entries skipped as malformed .*outside tune_params"):
        device = Replay(tmp_path / "mixed.json")
    assert len(device.skipped) == 4 and sorted(device.records) == [(1,), (2,), (4,)]
    assert oracle(device.task()).best_time == pytest.approx(1e-3)


def _open_cache(entries):
    """A cache file as Kernel Tuner writes it while tuning: the header with the cache's braces
    left open, then one entry per line, each ending in a comma."""
    params = {"bx": [16, 32, 64], "unroll": [False, True]}
    header = json.dumps({"device_name": "GPU", "kernel_name": "k", "tune_params_keys": list(params),
                         "tune_params": params, "cache": {}}, indent="")[:-3]
    lines = [f'"{k}": {json.dumps(e)},' for k, e in entries.items()]
    return header + "\n" + "\n".join(lines) + "\n"


def test_files_kernel_tuner_left_open_or_wrote_in_its_older_ways(tmp_path):
    """Kernel Tuner closes a cache file only when tuning ends: a stopped run leaves it open, a
    crash can cut its last line, and a copy taken mid-run can end mid-gzip-stream.  The entries
    written whole are the file's space.  Older versions wrote 1e20 for a failed config's time,
    and an entry's key alone can name its config."""
    entries = {"16,False": {"bx": 16, "unroll": False, "time": 3.0, "times": [3.0]},
               "32,False": {"bx": 32, "unroll": False, "time": 1e20},
               "64,False": {"time": 2.0, "times": [2.0]},
               "16,True": {"bx": 16, "unroll": True, "time": 1.5, "times": [1.5]}}
    text = _open_cache(entries)
    cut = text[:text.rindex('"time"')]                       # the last entry cut mid-line
    cases = {"open.json": text.encode(), "cut.json": cut.encode(),
             "cut.json.gz": gzip.compress(cut.encode())[:-8]}    # a copy that ends before gzip's trailer
    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        device = Replay(tmp_path / name)
        task = device.task()
        truth = oracle(task)
        kept = 4 if name == "open.json" else 3
        assert len(task.space) == kept, name
        assert truth.legal.sum() == kept - 1, name                  # 1e20 is a failure
        assert truth.time_of({"bx": 64, "unroll": False}) == pytest.approx(2e-3)
        failed = device.measurer(0).measure(task, task.space.config(task.space.flat_index({"bx": 32, "unroll": False})))
        assert not failed.ok and "1e+20" in failed.error
    assert oracle(Replay(tmp_path / "open.json").task()).best_time == pytest.approx(1.5e-3)
    (tmp_path / "nameless.json").write_text(_open_cache({"8,True": {"time": 1.0}}))
    with pytest.raises(ReplayFileError, match="nameless.json.*'8,True'.*lacks a parameter"):
        Replay(tmp_path / "nameless.json")


def test_the_files_objective_is_what_is_optimised(tmp_path):
    """A cache file names its objective: GFLOP/s is maximised (its inverse ranks the configs), a
    score that can be negative too (the hyperparameter-tuning files record no time at all), and
    the caller can name another metric or direction."""
    rng = np.random.default_rng(0)
    params = {"a": [1, 2, 4, 8], "b": [0, 1, 2]}
    cache, score = {}, {}
    for a in params["a"]:
        for b in params["b"]:
            t = 1.0 + rng.random()
            flops = t * t * (1.0 + 0.1 * rng.random())             # the slow configs do the most work
            cache[f"{a},{b}"] = {"a": a, "b": b, "time": t, "times": [t, t], "GFLOP/s": flops / t}
            s = float(rng.normal())
            score[f"{a},{b}"] = {"a": a, "b": b, "score": s, "scores": [s]}
    score["8,2"] = {"a": 8, "b": 2, "score": "RuntimeFailedConfig"}
    for name, entries, objective in (("rate.json", cache, "GFLOP/s"), ("score.json", score, "score")):
        (tmp_path / name).write_text(json.dumps({"tune_params_keys": ["a", "b"], "tune_params": params,
                                                 "objective": objective, "cache": entries}))
    def best(device, pick):
        ran = {p: e[device.objective] for p, e in device.records.items() if device.cost(e) is not None}
        return pick(ran, key=ran.get)

    def point(config):
        return tuple(config.all_kwargs()[k] for k in ("a", "b"))

    rate, by_time = Replay(tmp_path / "rate.json"), Replay(tmp_path / "rate.json", objective="time")
    assert rate.higher_is_better and not by_time.higher_is_better and rate.fingerprint != by_time.fingerprint
    assert best(rate, max) != best(by_time, min)
    for device, pick in ((rate, max), (by_time, min)):
        assert point(oracle(device.task()).best_config) == best(device, pick)
        result = tune(device.task(), "random", budget=12, seed=0)            # every config measured
        assert point(result.best_config) == best(device, pick)
    scored = Replay(tmp_path / "score.json")
    truth = oracle(scored.task())
    assert scored.higher_is_better and truth.legal.sum() == 11
    assert point(truth.best_config) == best(scored, max)
    low = Replay(tmp_path / "score.json", higher_is_better=False)
    assert point(oracle(low.task()).best_config) == best(low, min)
    with pytest.raises(ReplayFileError, match="score.json.*no entry records the objective 'energy'"):
        Replay(tmp_path / "score.json", objective="energy")


def test_the_decorator_tunes_on_a_replayed_gpu(tmp_path):
    import minitriton as mt
    import minitriton.language as tl
    from autotune import autotune
    from autotune.cache import TuningCache
    device = Replay(PNPOLY)

    @autotune(space=device.space, key=["n"], device=device, budget=20, cache_dir=tmp_path)
    @mt.jit
    def copy(x_ptr, y_ptr, n, block_size_x: tl.constexpr, tile_size: tl.constexpr, between_method: tl.constexpr,
             use_method: tl.constexpr):
        offs = tl.program_id(0) * 64 + tl.arange(0, 64)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = np.arange(100, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # nothing to warn about: the default features use the knobs
        copy[(2,)](x, y, 100)
    assert np.array_equal(x, y) and copy.best_config in device.space and copy.last_tuning.measured == 20
    entries = TuningCache(tmp_path).entries()
    assert len(entries) == 1 and "pnpoly_RTX_2080_Ti" in entries[0]["device"]


def test_model_based_tuners_on_a_recorded_space_say_nothing_about_features(recwarn):
    """A Replay task states no launch profile: the default features quietly use its knobs; only
    an explicit features='program' warns, naming the task and how to silence it."""
    from autotune.tuners import AnsorTuner, AutoTVMTuner
    task = Replay(PNPOLY).task()
    for make in (AutoTVMTuner, AnsorTuner):
        tune(task, make(seed=0), budget=20, seed=0)
    assert not [w for w in recwarn.list if "features" in str(w.message)]
    with pytest.warns(RuntimeWarning, match=r"features='program' needs .*does not.*features='auto'"):
        tune(task, AutoTVMTuner(seed=0, features="program"), budget=20, seed=0)


@pytest.mark.parametrize("tuner", ["autotvm", "ansor", "portfolio", "bayes_tpe"])
def test_a_knob_whose_values_mix_numbers_and_text_is_placed_by_position(tmp_path, tuner):
    """numpy makes such a knob's values text ("1" beside "x"); the knob features place each
    value by its position in the knob's list instead of looking the text up (a KeyError before)."""
    params = {"a": [1, "x", 2.5, 8], "b": [None, 1, 2]}
    cache = {}
    for i, a in enumerate(params["a"]):
        for j, b in enumerate(params["b"]):
            t = 1.0 + i + 2 * j
            cache[f"{a},{b}"] = {"a": a, "b": b, "time": t, "times": [t]}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"tune_params_keys": list(params), "tune_params": params, "cache": cache}))
    task = Replay(path).task()
    result = tune(task, tuner, budget=12, seed=0)
    assert result.measured == 12 and result.best_config["a"] == 1 and result.best_config["b"] is None


def test_hostile_files_cost_only_themselves(tmp_path, monkeypatch):
    """A gzip bomb is refused before it expands (bounded steps); deep nesting and malformed
    structures are ReplayFileErrors naming the file and the fault, not raw TypeErrors."""
    import minitriton.replay as replay
    from minitriton.replay import ReplayFileError
    monkeypatch.setattr(replay, "MAX_FILE_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * (64 << 20) + b"]"))    # 64 KiB that expands to 64 MiB
    with pytest.raises(ReplayFileError, match="bomb.json.gz expands past 1 MiB"):
        Replay(bomb)
    # 600 KiB of `[],` would take about 16 MB parsed: refused by its count of values, before parsing
    monkeypatch.setattr(replay, "MAX_PARSE_BYTES", 8 << 20)
    lists = tmp_path / "lists.json"
    lists.write_text('{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1, '
                     '"times": [' + ",".join(["[]"] * 200_000) + "]}}}")
    monkeypatch.setattr(replay.json, "loads", lambda *a, **k: pytest.fail("parsed a file judged too costly"))
    with pytest.raises(ReplayFileError, match="lists.json holds so many JSON values that parsing it would take over 8 MiB"):
        Replay(lists)
    monkeypatch.undo()
    monkeypatch.setattr(replay, "MAX_FILE_BYTES", 1 << 20)
    assert len(Replay(lists).task().space) == 1           # under the default bound, the same file is read
    header = {"tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}}
    cases = {
        "deep.json": ("[" * 100_000 + "]" * 100_000, "nests its JSON too deeply"),
        "int_values.json": (json.dumps({**header, "tune_params": {"a": 5}, "cache": {"1": {"a": 1, "time": 1}}}),
                            r"tune_params\['a'\] must be a list of values"),
        "list_key.json": (json.dumps({**header, "tune_params_keys": [["a"]], "cache": {"1": {"time": 1}}}),
                          "tune_params_keys must be a list of parameter names"),
        "twice.json": (json.dumps({**header, "tune_params_keys": ["a", "a"], "cache": {"1,1": {"time": 1}}}),
                       "tune_params_keys names 'a' more than once"),
        "list_value.json": (json.dumps({**header, "cache": {"1": {"a": [1], "time": 1}}}),
                            "has a parameter value that is not a number"),
        "entry_list.json": (json.dumps({**header, "cache": {"1": [1, 2]}}), "is not a record"),
        "huge_product.json": (json.dumps({"tune_params_keys": [f"p{i}" for i in range(30)],
                                          "tune_params": {f"p{i}": list(range(100)) for i in range(30)},
                                          "cache": {",".join(["0"] * 30): {**{f"p{i}": 0 for i in range(30)},
                                                                           "time": 1.0}}}),
                              "tune_params span 1e\\+60 configs, more than minitriton indexes"),
    }
    for name, (text, why) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ReplayFileError, match=f"{name}.*{why}"):
            Replay(tmp_path / name)
    # a number longer than Python's int() reads (4,300 digits) costs only its entry, in a whole
    # file and in one Kernel Tuner left open
    huge = "1" + "0" * 100_000
    body = (json.dumps({**header, "cache": {"1": {"a": 1, "time": 2.0}}})[:-2] + ', "2": {"a": 2, "time": ' + huge
            + "}}}")
    for name, text in (("long_int.json", body), ("long_int_open.json", body[:-2] + ",\n")):
        (tmp_path / name).write_text(text)
        r = Replay(tmp_path / name)
        assert r.cost(r.records[(1,)]) == 0.002 and r.cost(r.records[(2,)]) is None     # (times in ms)
