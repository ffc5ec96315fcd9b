"""Tuning under faults loses nothing and hangs nothing (issue 8): killed tunings, full or
read-only caches, torn records, interrupted refreshes, resumed tunings, stale cache keys."""
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from autotune import autotune, Config, Task, tune, RecordLog, Record
from autotune.cache import TuningCache
import autotune.autotuner as autotuner_module
import autotune.tuning_keys as tuning_keys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@mt.jit
def scale_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


CONFIGS = [Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=1)
           for bm in (16, 64) for bn in (32, 128) for w in (2, 8)]


def _run(kernel, M=100, N=256):
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    y = np.zeros_like(x)
    kernel[lambda meta: (mt.cdiv(M, meta["BLOCK_M"]), mt.cdiv(N, meta["BLOCK_N"]))](x, y, M, N)
    np.testing.assert_array_equal(y, 2 * x)
    return y


def _python(code, *args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ---------------------------------------------------------------- locks
def test_a_killed_tuning_leaves_no_lock_and_a_waiter_says_whom_it_waits_for(tmp_path):
    holder = _python("""
        import sys, time
        from autotune.cache import TuningCache
        with TuningCache(sys.argv[1]).lock("somekey"):
            print("held", flush=True)
            time.sleep(60)
    """, tmp_path)
    assert holder.stdout.readline().strip() == "held"
    waiter = _python("""
        import sys
        from autotune.cache import TuningCache
        with TuningCache(sys.argv[1]).lock("somekey"):
            print("got it", flush=True)
    """, tmp_path)
    deadline = time.monotonic() + 20
    line = ""
    while "waiting for" not in line and time.monotonic() < deadline:
        line = waiter.stderr.readline()
    assert f"process {holder.pid}" in line           # who it waits for
    os.kill(holder.pid, signal.SIGKILL)               # the holder dies without cleaning up
    holder.wait()
    out, _ = waiter.communicate(timeout=20)          # ... and the waiter goes on at once
    assert out.strip() == "got it"
    with TuningCache(tmp_path).lock("somekey"):      # nobody is blocked afterwards
        pass


# ---------------------------------------------------------------- unwritable caches
@pytest.mark.parametrize("variable, value, match", [
    ("MINITRITON_LAUNCH_TIMEOUT", "ten", "must be a number of seconds, got 'ten'"),
    ("MINITRITON_LAUNCH_TIMEOUT", "-1", "must be >= 0 seconds"),
    ("MINITRITON_THREADS", "two", "must be a positive number of threads, got 'two'"),
])
def test_a_bad_setting_in_the_environment_is_the_callers_error_and_poisons_no_key(tmp_path, monkeypatch, variable,
                                                                                     value, match):
    """Every launch reads these: set wrong, each config's measurement would fail on it, the
    records would keep the failures, and the key would stay untunable once the setting is mended."""
    monkeypatch.setenv(variable, value)
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    with pytest.raises(ValueError, match=f"{variable} {match}"):
        _run(k, 100)
    assert not RecordLog(tmp_path / "records.jsonl").read()      # nothing measured, nothing recorded
    monkeypatch.delenv(variable)
    _run(k, 100)                                                 # mended: tuned as if nothing happened
    assert len(TuningCache(tmp_path).entries()) == 1


def test_a_call_every_config_failed_on_is_measured_again_once_mended(tmp_path):
    """A grid that raises fails every config, and the records keep the failures; resumed from
    them, the key would stay failed after the grid is mended.  When nothing recorded ran, the
    next call measures afresh."""
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    x, y = np.ones((100, 256), np.float32), np.zeros((100, 256), np.float32)
    with pytest.raises(Exception, match="could run.*ZeroDivisionError"):
        k[lambda meta: (1 // 0,)](x, y, 100, 256)
    failed = RecordLog(tmp_path / "records.jsonl").read()
    assert failed and not any(r.ok for r in failed)
    _run(k, 100)                                                 # the grid mended: tuned, right answer
    assert len(TuningCache(tmp_path).entries()) == 1


def test_a_key_argument_left_out_is_named_as_the_launch_names_it(tmp_path):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    x = np.ones((100, 256), np.float32)
    with pytest.raises(TypeError, match="kernel 'scale_kernel' is missing argument\\(s\\): N"):
        k[(1, 1)](x, x.copy(), 100)


def test_a_full_disk_keeps_the_database_and_tunes_in_memory(tmp_path, monkeypatch):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    _run(k, 100)
    stored = TuningCache(tmp_path).entries()
    assert len(stored) == 1

    def full(*a, **kw):
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr("diskcache.Cache.set", full)
    k2 = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _run(k2, 300)                                 # a new key: tuned, kept in memory
        _run(k2, 300)
    assert sum("cannot be written" in str(w.message) for w in caught) <= 1
    monkeypatch.undo()
    assert not list(tmp_path.glob("results.damaged*"))   # nothing set aside on an I/O error
    assert [e["key"] for e in TuningCache(tmp_path).entries()] == [stored[0]["key"]]


def test_a_read_only_cache_serves_what_it_holds(tmp_path, monkeypatch):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    _run(k, 100)
    key = TuningCache(tmp_path).entries()[0]["key"]

    def read_only(self, *a, **kw):
        raise sqlite3.OperationalError("attempt to write a readonly database")
    monkeypatch.setattr("diskcache.Cache.__init__", read_only)
    with pytest.warns(RuntimeWarning, match=str(tmp_path)):
        cache = TuningCache(tmp_path)
    assert cache.get(key) is not None                 # served from the file, read-only
    calls = []
    monkeypatch.setattr(autotuner_module, "tune", lambda *a, **kw: calls.append(1))
    _run(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel), 100)
    assert calls == []                                # a hit: no tuning


def test_a_cache_directory_that_is_a_file_still_launches(tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=path)(scale_kernel)
    with pytest.warns(RuntimeWarning, match="not-a-dir"):
        _run(k, 100)


def test_only_a_corrupt_database_is_set_aside(tmp_path):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    _run(k, 100)
    (tmp_path / "results" / "cache.db").write_bytes(b"this is not a database" * 100)
    for extra in (tmp_path / "results").glob("cache.db-*"):
        extra.unlink()
    cache = TuningCache(tmp_path)
    assert len(list(tmp_path.glob("results.damaged-*"))) == 1
    assert cache.entries() == []
    assert len([r for r in cache.log.read() if not r.again]) == len(CONFIGS)      # the measurements survive


# ---------------------------------------------------------------- records
def _record(bm, t, key="k"):
    return Record(Config({"BLOCK_M": bm}), [t], key=key)


def test_a_torn_last_line_costs_only_itself(tmp_path):
    log = RecordLog(tmp_path / "records.jsonl")
    log.append(_record(16, 1.0))
    with open(log.path, "a") as f:
        f.write('{"kernel": "x", "key": "k", "conf')      # a crash mid-write
    log.append(_record(32, 2.0))
    with pytest.warns(RuntimeWarning, match="has 1 line\\(s\\) that are not valid records"):
        assert [r.config.kwargs["BLOCK_M"] for r in log.read()] == [16, 32]


def test_an_interrupted_refresh_does_not_eat_the_next_tunings_budget(tmp_path, monkeypatch):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    _run(k, 100)
    first = k.best_config
    cache = TuningCache(tmp_path)
    key = cache.entries()[0]["key"]
    for r in cache.log.read(key)[:5]:                 # a refresh measured 5 configs again, then died
        cache.log.append(r)
    cache.delete(key)
    again = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel)
    _run(again, 100)
    assert again.last_tuning.measured == len(CONFIGS)
    assert len({r.config for r in again.last_tuning.history}) == len(CONFIGS)
    assert again.best_config == first


def test_a_resumed_tuning_chooses_as_an_uninterrupted_one(tmp_path):
    import kernels
    task = Task(kernels.matmul, M=512, N=512, K=512)
    log = RecordLog(tmp_path / "full.jsonl")
    full = tune(task, "random", budget=24, seed=3, log=log, key="k")
    for cut in (1, 9, 23):
        resumed = tune(task, "random", budget=24, seed=3, key="k", resume=log.read("k")[:cut])
        assert resumed.best_config == full.best_config
        assert [r.config for r in resumed.history] == [r.config for r in full.history]
        assert [r.samples for r in resumed.history] == [r.samples for r in full.history]


# ---------------------------------------------------------------- cache keys
def _kernel_in(namespace_src):
    ns = {"tl": tl, "mt": mt}
    exec(textwrap.dedent(namespace_src), ns)
    return ns


def test_the_cache_key_covers_helpers_and_global_constants():
    src = """
        SCALE = 2

        @mt.jit
        def helper(x):
            return x * SCALE

        @mt.jit
        def kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, helper(tl.load(x_ptr + offs)))
    """
    ns = _kernel_in(src)
    base = ns["kernel"].cache_key()
    assert ns["kernel"].cache_key() == base
    ns["SCALE"] = 3                                   # a global constant the helper reads
    assert ns["kernel"].cache_key() != base
    ns["SCALE"] = 2
    other = _kernel_in(src.replace("x * SCALE", "x * SCALE + 1"))
    ns["helper"] = other["helper"]                     # the helper edited
    assert ns["kernel"].cache_key() != base


def test_tuner_objects_are_keyed_by_their_settings():
    from autotune.tuners import RandomTuner
    a, b = RandomTuner(seed=1), RandomTuner(seed=1)
    assert tuning_keys.tuner_key(a) == tuning_keys.tuner_key(b)
    assert tuning_keys.tuner_key(a) != tuning_keys.tuner_key(RandomTuner(seed=2))


# ---------------------------------------------------------------- tuning at the real M
@mt.jit
def gather_rows(x_ptr, idx_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Loads integer indices valid for the real M only (unmasked, as written)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    keep = rows < M
    src = tl.load(idx_ptr + rows, mask=keep, other=0)
    vals = tl.load(x_ptr + src[:, None] * N + cols[None, :])
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], vals, mask=keep[:, None])


def test_a_kernel_that_only_runs_at_the_real_m_is_tuned_there(tmp_path):
    configs = [Config({"BLOCK_M": bm, "BLOCK_N": 32}, num_warps=4, num_stages=1) for bm in (16, 32)]
    k = autotune(configs=configs, key=["M"], cache_dir=tmp_path)(gather_rows)
    M, N = 100, 32
    x = np.random.default_rng(0).standard_normal((M, N)).astype(np.float32)
    idx = np.random.default_rng(1).integers(0, M, M).astype(np.int32)
    y = np.zeros_like(x)
    k[lambda meta: (mt.cdiv(M, meta["BLOCK_M"]),)](x, idx, y, M, N)
    np.testing.assert_array_equal(y, x[idx])


def test_a_config_that_fails_a_static_assert_is_skipped_with_its_reason(tmp_path):
    @mt.jit
    def picky(x_ptr, M, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK <= 64, "BLOCK too large")
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < M) + 1, mask=offs < M)
    configs = [Config({"BLOCK": b}, num_warps=4, num_stages=1) for b in (32, 64, 128)]
    k = autotune(configs=configs, key=["M"], cache_dir=tmp_path)(picky)
    x = np.zeros(100, np.float32)
    k[lambda meta: (mt.cdiv(100, meta["BLOCK"]),)](x, 100)
    assert (x == 1).all() and k.best_config.kwargs["BLOCK"] in (32, 64)
    failed = [r for r in k.last_tuning.history if r.error]
    assert len(failed) == 1 and failed[0].config.kwargs["BLOCK"] == 128
    assert "BLOCK too large" in failed[0].error


# ---------------------------------------------------------------- input checks
@pytest.mark.parametrize("kwargs,match", [
    (dict(tuner="anneal"), "tuner= must be one of"),
    (dict(device="gpu0"), "device= must be a device"),
    (dict(key=["N"], bucket=lambda m: m), "M is not in key"),
    (dict(key="M"), r"key= must be a list of argument names, e.g. key=\['M'\]"),
    (dict(repeats=0), "repeats= must be a positive int"),
    (dict(budget=True), "budget= must be a positive int"),
])
def test_decorator_arguments_are_checked_when_applied(kwargs, match):
    kwargs = {"configs": CONFIGS, "key": ["M", "N"], **kwargs}
    with pytest.raises((TypeError, ValueError), match=match):
        autotune(**kwargs)(scale_kernel)


@pytest.mark.parametrize("kwargs,match", [
    (dict(prune_configs_by={"early_config_prune": lambda configs, args: None}), "must return a list of Configs"),
    (dict(prune_configs_by={"early_config_prune": lambda configs, args: {"BLOCK_M": 16}}), "got dict"),
    (dict(prune_configs_by={"perf_model": lambda **kw: None, "top_k": 2}), "perf_model'] must return a number"),
    (dict(reset_to_zero=["M"]), "reset_to_zero names 'M', which is not an array"),
])
def test_hooks_and_names_are_checked_at_the_first_call(tmp_path, kwargs, match):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path, **kwargs)(scale_kernel)
    with pytest.raises(TypeError, match=match):
        _run(k, 100)


# ---------------------------------------------------------------- launches at the edges
@mt.jit
def _increment(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_zero_size_arrays_with_fully_masked_accesses_are_a_no_op():
    x = np.zeros(0, np.float32)
    _increment[(3,)](x, 0, BLOCK=16)
    assert x.size == 0


def test_huge_grids_fail_fast():
    t = time.monotonic()
    for grid in ((2 ** 31, 1, 1), (1, 2 ** 16, 1), (2 ** 20, 2 ** 10, 1)):
        with pytest.raises(ValueError, match="grid too large"):
            _increment[grid](np.zeros(4, np.float32), 4, BLOCK=16)
    assert time.monotonic() - t < 5


@mt.jit
def _block_norms(x_ptr, out_ptr, step, BLOCK: tl.constexpr, SHARED: tl.constexpr):
    """Every program reduces a whole block; with SHARED, the same block scaled by its id."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs) * (pid + 1) if SHARED else tl.load(x_ptr + pid * step + offs)
    w = tl.where(v > 0, v, -v) if SHARED else tl.maximum(v, -v)     # results of ops of their own
    tl.store(out_ptr + pid, tl.sum(v * w * (w > -1)))


@pytest.mark.parametrize("shared", [True, False])
def test_lockstep_values_over_budget_run_fewer_programs_at_a_time(monkeypatch, shared):
    """All programs' blocks of one value are held at once in lockstep: 4,096 programs of
    2**20-element blocks would make 16 GB values.  Over the budget, the launch runs fewer programs
    at a time (the same results), and the next launch starts there."""
    import minitriton.tensor as tensor_module
    monkeypatch.setattr(tensor_module, "LOCKSTEP_VALUE_BYTES", 1 << 20)   # 1 MB: 64 programs x 64 KB are 4 MB
    programs, block = 64, 1 << 14
    x = np.random.default_rng(0).standard_normal(block * (1 if shared else programs)).astype(np.float32)
    out = np.zeros(programs, np.float32)
    _block_norms[(programs,)](x, out, 0 if shared else block, BLOCK=block, SHARED=shared)
    rows = x.reshape(-1, block).astype(np.float64)
    want = [(np.abs(rows[0] * (p + 1)) * rows[0] * (p + 1)).sum() if shared else (np.abs(rows[p]) * rows[p]).sum()
            for p in range(programs)]
    np.testing.assert_allclose(out, want, rtol=1e-4)
    path = _block_norms.last_launch["path"]
    assert path.startswith("lockstep (8 programs at a time: a value of") and "for 64 programs in lockstep" in path
    _block_norms[(programs,)](x, out, 0 if shared else block, BLOCK=block, SHARED=shared)
    assert _block_norms.last_launch["path"].startswith("lockstep (8 programs at a time, as the last launch")


@mt.jit
def _persistent_norms(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        v = tl.load(x_ptr + r * BLOCK + cols)
        tl.store(out_ptr + r, tl.sum(v * v))


def test_a_persistent_loop_too_big_as_lanes_runs_trip_by_trip(monkeypatch):
    """A persistent loop's trips run side by side as rows (lanes.py): one program walking 256
    rows makes values of 256 blocks.  Over the budget even for one program, its loop runs trip by
    trip instead of the launch failing; four programs' 64 trips each fit, a program at a time."""
    import minitriton.tensor as tensor_module
    monkeypatch.setattr(tensor_module, "LOCKSTEP_VALUE_BYTES", 1 << 20)     # 1 MB: 64 blocks of 16 KB
    rows, block = 256, 1 << 12
    x = np.random.default_rng(1).standard_normal(rows * block).astype(np.float32)
    for programs, laned in ((1, 0), (4, 4)):
        out = np.zeros(rows, np.float32)
        _persistent_norms[(programs,)](x, out, rows, BLOCK=block)
        np.testing.assert_allclose(out, (x.reshape(rows, block).astype(np.float64) ** 2).sum(1), rtol=1e-4)
        launch = _persistent_norms.last_launch
        assert launch["laned"] == laned and launch["path"].startswith("lockstep (1 programs at a time: a value of")


# ---------------------------------------------------------------- watching a tuning
def test_progress_is_shown_when_asked_and_quiet_off_a_terminal(tmp_path, capsys, monkeypatch):
    _run(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path / "a", progress=True)(scale_kernel))
    err = capsys.readouterr().err
    assert f"{len(CONFIGS)}/{len(CONFIGS)}" in err and "best" in err and "simulated" in err and "refused" in err
    _run(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path / "b")(scale_kernel))
    assert capsys.readouterr().err == ""              # stderr is not a terminal here: no bar by default
    monkeypatch.setenv("MINITRITON_PROGRESS", "1")
    _run(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path / "c")(scale_kernel))
    assert "best" in capsys.readouterr().err


def test_show_draws_the_tuning(tmp_path):
    pytest.importorskip("matplotlib")
    from autotune.cli import main
    _run(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(scale_kernel))
    key = TuningCache(tmp_path).entries()[0]["key"]
    assert main(["show", key[:8], "--cache-dir", str(tmp_path), "--plot", str(tmp_path / "t.png"),
                 "--knobs", "BLOCK_M", "BLOCK_N"]) == 0
    assert (tmp_path / "t.png").stat().st_size > 1000


# ---------------------------------------------------------------- Triton's names
def test_tritons_names_for_tuning_and_benchmarking(tmp_path, capsys):
    import minitriton as triton
    k = triton.autotune(configs=[triton.Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=4)], key=["M", "N"],
                        warmup=5, rep=20, use_cuda_graph=True, do_bench=None, cache_results=False,
                        cache_dir=tmp_path)(scale_kernel)
    _run(k, 100)
    assert TuningCache(tmp_path).entries() == []      # cache_results=False: nothing on disk
    x = np.zeros((100, 256), np.float32)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK_M"):
        k[(1, 1)](x, x, 100, 256, BLOCK_M=16)
    h = triton.heuristics({"BLOCK_N": lambda args: 64})(scale_kernel)
    assert h is not None
    assert triton.OutOfResources is triton.runtime.OutOfResources       # `except triton.OutOfResources:`

    def bench(M):
        y = np.zeros((M, 256), np.float32)
        return triton.testing.do_bench(lambda: scale_kernel[(mt.cdiv(M, 16), 8)](y, y, M, 256, BLOCK_M=16,
                                                                                BLOCK_N=32))
    small, large = bench(256), bench(4096)
    assert 0 < small < large                          # milliseconds on HypoGPU, growing with the work
    q = triton.testing.do_bench(lambda: scale_kernel[(1, 1)](x, x, 100, 256, BLOCK_M=16, BLOCK_N=32),
                                quantiles=[0.5, 0.2, 0.8])
    assert len(q) == 3 and q[1] <= q[0] <= q[2]

    @triton.testing.perf_report(triton.testing.Benchmark(
        x_names=["M"], x_vals=[256, 1024], line_arg="provider", line_vals=["mt"], line_names=["minitriton"],
        plot_name="scale", args={}, ylabel="ms"))
    def report(M, provider):
        return bench(M)
    report.run(print_data=True)
    out = capsys.readouterr().out
    assert "scale:" in out and "minitriton" in out and "1024" in out


def test_check_configs_failures_say_how_far_against_which_bound_and_what_would_accept():
    from minitriton.testing import check_configs
    outputs = {1: np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), 2: np.array([[1.0, 2.0], [3.0, 4.5]], np.float32)}
    with pytest.raises(AssertionError) as e:
        check_configs(lambda c: outputs[c], [1, 2], abs_tol=0.01)
    text = str(e.value)
    assert "worst at index (1, 1)" in text and "np." not in text       # plain ints
    assert "0.5 apart > allowed" in text and "ulps=1" in text and "ulps >= " in text and "abs_tol >= 0.5" in text


# ---------------------------------------------------------------- set-up
def test_setup_installs_once_and_again_only_when_the_project_changes(tmp_path):
    import shutil
    for name in ("setup.cfg", "pyproject.toml"):
        shutil.copy(os.path.join(ROOT, name), tmp_path / name)
    (tmp_path / "bin").mkdir()
    shutil.copy(os.path.join(ROOT, "bin", "setup-env"), tmp_path / "bin" / "setup-env")
    fake = tmp_path / ".venv" / "bin" / "python"     # a stand-in interpreter that logs what it is asked
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls.log'}\n")
    fake.chmod(0o755)

    def setup():
        subprocess.run(["bash", "-c", "source bin/setup-env"], cwd=tmp_path, check=True, timeout=60)
        return (tmp_path / "calls.log").read_text().count("pip install") if (tmp_path / "calls.log").exists() else 0
    assert setup() == 1
    assert setup() == 1                               # the second run installs nothing
    with open(tmp_path / "setup.cfg", "a") as f:
        f.write("\n# a changed dependency list\n")
    assert setup() == 2


# ---------------------------------------------------------------- checked answers
@mt.jit
def strided_scale(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Right only when BLOCK_N == N: it strides rows by BLOCK_N (a bug some configs hide)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * BLOCK_N + cols[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def _strided(k, M=64, N=128):
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    y = np.zeros_like(x)
    k[lambda meta: (mt.cdiv(M, meta["BLOCK_M"]), mt.cdiv(N, meta["BLOCK_N"]))](x, y, M, N)
    return x, y


def test_verify_drops_configs_whose_numbers_are_wrong(tmp_path):
    configs = [Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=4, num_stages=1)
               for bm in (16, 32) for bn in (32, 64, 128)]
    k = autotune(configs=configs, key=["M", "N"], cache_dir=tmp_path, verify=lambda a: {"y_ptr": 2 * a["x_ptr"]},
                 verify_top=len(configs))(strided_scale)
    with pytest.warns(RuntimeWarning, match="computes different numbers") as caught:
        x, y = _strided(k)
    np.testing.assert_array_equal(y, 2 * x)
    assert k.best_config.kwargs["BLOCK_N"] == 128
    assert sorted(c.kwargs["BLOCK_N"] for c, _ in k.dropped) == [32, 32, 64, 64]
    assert any("'y_ptr' at index (" in str(w.message) for w in caught)
    entry = TuningCache(tmp_path).entries()[0]
    assert len(entry["dropped"]) == 4 and entry["config"]["kwargs"]["BLOCK_N"] == 128


def test_verify_without_a_reference_trusts_the_majority(tmp_path):
    configs = [Config({"BLOCK_M": bm, "BLOCK_N": 128}, num_warps=4, num_stages=1) for bm in (16, 32, 64)]
    configs.append(Config({"BLOCK_M": 16, "BLOCK_N": 32}, num_warps=4, num_stages=1))
    k = autotune(configs=configs, key=["M", "N"], cache_dir=tmp_path, verify=True, verify_top=4)(strided_scale)
    with pytest.warns(RuntimeWarning, match="BLOCK_N: 32"):
        x, y = _strided(k)
    np.testing.assert_array_equal(y, 2 * x)
    assert [c.kwargs["BLOCK_N"] for c, _ in k.dropped] == [32]
