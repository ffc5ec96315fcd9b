"""A cache directory, records and devices in hostile or broken hands (issue 25): whatever is
planted there is data that costs only itself; it never runs code, and nothing impossible is chosen."""
import json
import os
import subprocess
import sys
import warnings

import diskcache
import numpy as np
import pytest

from autotune import tune, Task, Config
from autotune.cache import TuningCache
from autotune.records import RecordLog, Record
from tests.test_autotune import CONFIGS, _call, make, tunings  # noqa: F401 (a fixture)


class Planted:
    """Unpickling this creates a file: proof that a pickle from the cache was loaded."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _plant_pickle(tmp_path, key, marker):
    plain = diskcache.Cache(str(tmp_path / "results"))     # diskcache's own (pickling) disk
    plain.set("result:" + key, Planted(str(marker)))
    plain.set(Planted(str(marker) + ".key"), "x")           # a pickled key too
    plain.close()


def test_a_pickle_planted_in_the_cache_is_never_loaded(tmp_path, tunings):
    _call(make(tmp_path), 100)
    key = TuningCache(tmp_path).entries()[0]["key"]
    marker = tmp_path / "ran"
    _plant_pickle(tmp_path, key, marker)
    with pytest.warns(RuntimeWarning, match="not JSON data.*never loaded"):
        _call(make(tmp_path), 100)
    assert len(tunings) == 2 and not marker.exists()                 # ignored, tuned again
    assert TuningCache(tmp_path).get(key)["version"] == 2
    _plant_pickle(tmp_path, key, marker)
    for command in (["list"], ["show", key[:8]], ["export"], ["verify", key[:8]], ["clear", key[:8]]):
        subprocess.run([sys.executable, "-m", "autotune", "--cache-dir", str(tmp_path), *command],
                       capture_output=True, text=True, timeout=120)
        assert not marker.exists() and not (tmp_path / "ran.key").exists(), command


def test_the_read_only_path_never_unpickles(tmp_path):
    from autotune.cache import _ReadOnlyResults, ForeignEntry
    _call(make(tmp_path), 100)
    key = TuningCache(tmp_path).entries()[0]["key"]
    marker = tmp_path / "ran"
    _plant_pickle(tmp_path, key, marker)
    ro = _ReadOnlyResults(tmp_path / "results")
    with pytest.raises(ForeignEntry):
        ro.get("result:" + key)
    assert not marker.exists()


def test_a_lock_file_planted_as_a_link_truncates_nothing(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    k = make(tmp_path / "cache")
    cache = TuningCache(tmp_path / "cache")
    (cache.dir / "locks").mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, plant in enumerate((os.symlink, os.link)):
            key = f"{i:032x}"
            plant(victim, cache.dir / "locks" / f"{key}.lock")
            with pytest.warns(RuntimeWarning, match="was a link to another file"):
                with cache.lock(key):
                    pass
            assert victim.read_text() == "keep me"
    _call(k, 100)
    assert victim.read_text() == "keep me"


def test_a_cache_others_can_write_draws_a_warning(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(RuntimeWarning, match=r"can be changed by others.*writable by others \(mode 0777\)"):
        TuningCache(shared)


BAD_LINES = {
    "nan": '{"config": {"kwargs": {"BLOCK_M": 16, "BLOCK_N": 32}, "num_warps": 2, "num_stages": 1}, "samples": [NaN]}',
    "inf": '{"config": {"kwargs": {"BLOCK_M": 16, "BLOCK_N": 32}, "num_warps": 2, "num_stages": 1}, "samples": [Infinity]}',
    "negative": '{"config": {"kwargs": {"BLOCK_M": 16}, "num_warps": 2, "num_stages": 1}, "samples": [-1.0]}',
    "string samples": '{"config": {"kwargs": {"BLOCK_M": 16}, "num_warps": 2, "num_stages": 1}, "samples": "fast"}',
    "dict samples": '{"config": {"kwargs": {"BLOCK_M": 16}, "num_warps": 2, "num_stages": 1}, "samples": {"a": 1}}',
    "list kwarg": '{"config": {"kwargs": {"BLOCK_M": [16]}, "num_warps": 2, "num_stages": 1}, "samples": [1e-6]}',
    "deep": "[" * 200_000 + "]" * 200_000,
    "not json": "this is not a record",
}


def test_bad_record_lines_cost_only_themselves(tmp_path):
    log = RecordLog(tmp_path / "records.jsonl")
    good = Record(Config({"BLOCK_M": 64}), [2e-6], key="k")
    log.append(good)
    with open(log.path, "a") as f:
        for line in BAD_LINES.values():
            f.write(line + "\n")
    log.append(good)
    with pytest.warns(RuntimeWarning, match=f"has {len(BAD_LINES)} line\\(s\\) that are not valid records"):
        got = log.read()
    assert [r.config for r in got] == [good.config, good.config]


def test_records_that_lie_are_not_trusted_when_resuming(tmp_path, tunings):
    """A planted record says a slow config took NaN, 0 or a negative time: the tuning skips those
    lines, measures that config itself, and does not choose it on the records' word."""
    k = make(tmp_path)
    cache = TuningCache(tmp_path)
    _call(make(tmp_path / "elsewhere"), 100)
    honest = TuningCache(tmp_path / "elsewhere").entries()[0]
    key = honest["key"]
    slow = Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=2, num_stages=1)
    with open(cache.log.path, "a") as f:
        for t in ("NaN", "-1.0", "0"):
            f.write(json.dumps({"config": {"kwargs": slow.kwargs, "num_warps": 2, "num_stages": 1}, "key": key,
                                "samples": ["X"]}).replace('"X"', t) + "\n")
    with pytest.warns(RuntimeWarning, match="not valid records"):
        _call(k, 100)
    assert k.best_config == Config(honest["config"]["kwargs"], num_warps=honest["config"]["num_warps"],
                                   num_stages=honest["config"]["num_stages"])


def test_records_file_that_is_a_directory_does_not_stop_the_launch(tmp_path):
    (tmp_path / "records.jsonl").mkdir(parents=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _call(make(tmp_path), 100)     # tunes without its records on disk, and runs


class BrokenDevice:
    """HypoGPU with a timer that is broken for its first launch."""

    def __init__(self, bad):
        from minitriton.hypogpu import HypoGPU
        self.real, self.bad, self.calls = HypoGPU(), bad, 0
        self.fingerprint = "broken"

    def time(self, profiles):
        self.calls += 1
        return self.bad if self.calls == 1 else self.real.time(profiles)

    def trace(self, *a, **k):
        return self.real.trace(*a, **k)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 0.0, -1.0])
def test_an_impossible_time_is_a_failed_measurement(bad):
    import kernels
    task = Task(kernels.row_sum, device=BrokenDevice(bad), M=64, N=4096)
    configs = list(kernels.row_sum.space)[:6]
    result = tune(task, "exhaustive", configs=configs, seed=0)
    assert np.isfinite(result.best_time) and result.best_time > 0 and result.best_config != configs[0]
    first = result.history[0]
    assert first.config == configs[0] and not first.ok and "impossible time from the device" in first.error
    assert np.isfinite(result.simulated_seconds)


@pytest.mark.parametrize("budget", [1.5, float("nan"), "8", 0, True])
def test_bad_budgets_are_refused_naming_the_budget(budget):
    import kernels
    from kernels.shapes import SHAPES
    with pytest.raises(ValueError, match="budget"):
        tune(Task(kernels.matmul, **SHAPES["small"]), "random", budget=budget)


def test_a_launch_that_never_ends_stops_naming_its_loop(monkeypatch):
    import minitriton as mt
    import minitriton.language as tl
    monkeypatch.setenv("MINITRITON_LAUNCH_TIMEOUT", "0.5")

    @mt.jit
    def forever(x_ptr, n):
        i = 0
        while i < n:          # i never grows
            i = i * 1
        tl.store(x_ptr, i)
    line = forever.fn.__code__.co_firstlineno + 3
    with pytest.raises(RuntimeError, match=f"kernel 'forever': the loop at line {line} was still running after 0.5 s"):
        forever[(4,)](np.zeros(1, np.int32), 5)


def test_tuning_skips_a_config_whose_launch_never_ends(monkeypatch, tmp_path):
    import minitriton as mt
    import minitriton.language as tl
    from autotune import autotune
    monkeypatch.setenv("MINITRITON_LAUNCH_TIMEOUT", "0.5")

    @autotune(configs=[Config({"BLOCK": 64}), Config({"BLOCK": 128})], key=["n"], cache_dir=tmp_path)
    @mt.jit
    def sometimes(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        while BLOCK == 128:   # this config never ends
            pass
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = np.zeros(64, np.float32)
    sometimes[(1,)](x, 64)
    assert sometimes.best_config.kwargs == {"BLOCK": 64} and (x == 1).all()
    failed = [r for r in sometimes.last_tuning.history if not r.ok]
    assert len(failed) == 1 and failed[0].config.kwargs == {"BLOCK": 128} and "LaunchTimeout" in failed[0].error


def test_blocks_over_tritons_element_limit_are_refused():
    import minitriton as mt
    import minitriton.language as tl

    @mt.jit
    def huge(x_ptr):
        tl.store(x_ptr + tl.arange(0, 2 ** 30), 1.0)

    @mt.jit
    def wide(x_ptr):
        r = tl.arange(0, 2048)
        tl.store(x_ptr + r[:, None] * 2048 + r[None, :], 1.0)
    with pytest.raises(ValueError, match="1,073,741,824 elements, more than Triton's limit of 1,048,576"):
        huge[(1,)](np.zeros(1, np.float32))
    with pytest.raises(ValueError, match="4,194,304 elements, more than Triton's limit"):
        wide[(1,)](np.zeros(2048 * 2048, np.float32))
