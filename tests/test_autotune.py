"""@autotune: lazy tuning per key, bucketing, the disk cache and records, Triton's options."""
import multiprocessing
import warnings

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
import autotune.driver as driver
from autotune import autotune, heuristics, Config, NoValidConfig, RecordLog
from autotune.cache import TuningCache


@mt.jit
def scale_kernel(x_ptr, y_ptr, M, N, alpha, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


CONFIGS = [Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=1)
           for bm in (16, 64) for bn in (32, 128) for w in (2, 8)]


def _grid(M, N):
    return lambda meta: (mt.cdiv(M, meta["BLOCK_M"]), mt.cdiv(N, meta["BLOCK_N"]))


def _call(kernel, M, N=256, dtype=np.float32):
    x = np.arange(M * N, dtype=np.float32).reshape(M, N).astype(dtype)
    y = np.zeros_like(x)
    kernel[_grid(M, N)](x, y, M, N, 2.0)
    np.testing.assert_array_equal(y, x * dtype(2))
    return y


@pytest.fixture
def tunings(monkeypatch):
    calls = []
    real = driver.tune

    def counting(task, *a, **kw):
        result = real(task, *a, **kw)
        calls.append((task.name, result.measured))
        return result
    monkeypatch.setattr("autotune.autotuner.tune", counting)
    return calls


def make(tmp_path, **kw):
    kw.setdefault("configs", CONFIGS)
    kw.setdefault("key", ["M", "N"])
    return autotune(cache_dir=tmp_path, **kw)(scale_kernel)


def test_tunes_once_per_key_then_launches_the_best(tmp_path, tunings):
    k = make(tmp_path, bucket=False)
    _call(k, 100)
    assert len(tunings) == 1 and tunings[0][1] == len(CONFIGS)
    assert k.best_config in CONFIGS
    _call(k, 100)
    assert len(tunings) == 1                      # same key: straight to the launch
    _call(k, 100, dtype=np.float16)               # the dtype of array arguments is part of the key
    _call(k, 300)
    assert len(tunings) == 3


def test_m_is_bucketed_to_powers_of_two(tmp_path, tunings):
    k = make(tmp_path)
    for m in (100, 120, 128):                     # all in the 128 bucket; launched at their real M
        _call(k, m)
    assert len(tunings) == 1 and "(128, 256" in tunings[0][0]
    _call(k, 129)
    assert len(tunings) == 2
    exact = make(tmp_path / "exact", bucket=False)
    for m in (100, 120):
        _call(exact, m)
    custom = make(tmp_path / "custom", bucket={"N": lambda n: 1024})
    _call(custom, 100, N=200)
    _call(custom, 100, N=300)
    assert len(tunings) == 2 + 2 + 1


def test_results_persist_on_disk_for_a_new_process(tmp_path, tunings):
    _call(make(tmp_path), 100)
    first = make(tmp_path)                        # a new decorator: what a new process would build
    _call(first, 100)
    assert len(tunings) == 1
    entries = TuningCache(tmp_path).entries()
    assert len(entries) == 1 and entries[0]["measured"] == len(CONFIGS)
    everything = RecordLog(tmp_path / "records.jsonl").read()
    log = [r for r in everything if not r.again]                   # the search's; the rest settled the choice
    assert len(log) == len(CONFIGS) and {r.config for r in log} == set(CONFIGS) and len(everything) > len(log)
    assert all(r.samples and r.kernel.startswith("scale_kernel") for r in log)


def test_cache_key_covers_source_tuner_and_configs(tmp_path, tunings):
    _call(make(tmp_path), 100)
    _call(make(tmp_path, tuner="random", budget=3), 100)
    _call(make(tmp_path, configs=CONFIGS[:4]), 100)
    assert len(tunings) == 3
    namespace = {}
    src = scale_kernel.src.replace("* alpha", "* alpha * 1.0")   # an edited kernel re-tunes
    exec(compile("import minitriton as mt\nimport minitriton.language as tl\n" + src.replace("@mt.jit\n", ""),
                 "edited", "exec"), namespace)
    edited = mt.jit(namespace["scale_kernel"])
    edited.__dict__["src"] = src
    _call(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(edited), 100)
    assert len(tunings) == 4


def test_a_new_version_of_the_code_tunes_afresh(tmp_path, tunings, monkeypatch):
    """The cache key holds a hash of minitriton's and autotune's source (Triton's holds its
    compiler's): results of an older executor, its failures included, are not served or resumed."""
    import autotune.cache as cache
    assert cache.code_key() == cache.code_key() and len(cache.code_key()) == 16
    _call(make(tmp_path), 100)
    _call(make(tmp_path), 100)
    assert [m for _, m in tunings] == [len(CONFIGS)]
    monkeypatch.setattr(cache, "code_key", lambda: "another version")
    _call(make(tmp_path), 100)
    assert [m for _, m in tunings] == [len(CONFIGS), len(CONFIGS)]     # measured again, nothing resumed


def test_environment_skips_or_refreshes_the_cache(tmp_path, tunings, monkeypatch):
    _call(make(tmp_path), 100)
    monkeypatch.setenv("MINITRITON_AUTOTUNE_REFRESH", "1")
    _call(make(tmp_path), 100)
    monkeypatch.delenv("MINITRITON_AUTOTUNE_REFRESH")
    monkeypatch.setenv("MINITRITON_AUTOTUNE_CACHE", "0")
    _call(make(tmp_path / "unused"), 100)
    assert len(tunings) == 3 and not (tmp_path / "unused").exists()


def test_unreadable_cache_entry_is_ignored_and_rewritten(tmp_path, tunings):
    k = make(tmp_path)
    _call(k, 100)
    cache = TuningCache(tmp_path)
    key = cache.entries()[0]["key"]
    cache.db.set("result:" + key, '{"version": 999, "junk": true}')
    cache.close()
    _call(make(tmp_path), 100)
    assert len(tunings) == 2
    assert TuningCache(tmp_path).get(key)["version"] == 2


def test_interrupted_tuning_resumes_from_its_records(tmp_path, monkeypatch):
    from minitriton.hypogpu import Measurer
    real = Measurer.measure
    state = {"n": 0}

    def flaky(self, *a, **kw):
        state["n"] += not kw.get("compiled")     # the search's measurements (re-timing settles the choice)
        if state["n"] == 4:
            raise KeyboardInterrupt
        return real(self, *a, **kw)
    monkeypatch.setattr(Measurer, "measure", flaky)
    with pytest.raises(KeyboardInterrupt):      # measured in-process: one config at a time
        _call(make(tmp_path, parallel=1), 100)
    assert len([r for r in RecordLog(tmp_path / "records.jsonl").read() if not r.again]) == 3
    state["n"] = -100
    k = make(tmp_path, parallel=1)
    _call(k, 100)
    assert state["n"] == -100 + len(CONFIGS) - 3          # only the 5 not yet measured
    assert len([r for r in RecordLog(tmp_path / "records.jsonl").read() if not r.again]) == len(CONFIGS)


def _tune_in_process(path, queue):
    k = autotune(configs=CONFIGS, key=["M", "N"], cache_dir=path)(scale_kernel)
    _call(k, 100)
    queue.put(repr(k.best_config))


def test_two_processes_tuning_the_same_key_agree(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_tune_in_process, args=(str(tmp_path), queue)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    answers = {queue.get(timeout=5) for _ in procs}
    assert all(p.exitcode == 0 for p in procs) and len(answers) == 1
    assert len(TuningCache(tmp_path).entries()) == 1
    assert len([r for r in RecordLog(tmp_path / "records.jsonl").read() if not r.again]) == len(CONFIGS)   # measured once, not twice


def test_all_illegal_configs_raise_naming_kernel_key_and_reason(tmp_path):
    @mt.jit
    def mm(a_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr):
        a = tl.load(a_ptr + tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :])
        tl.store(c_ptr + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :], tl.dot(a, tl.trans(a)))
    huge = [Config({"BM": 256, "BK": 256}, num_warps=4, num_stages=s) for s in (2, 3)]
    k = autotune(configs=huge, key=[], cache_dir=tmp_path)(mm)
    a, c = np.zeros((256, 256), np.float16), np.zeros((256, 256), np.float32)
    with pytest.raises(NoValidConfig, match=r"mm.*shared memory"):
        k[(1,)](a, c)


def test_prune_configs_by_and_heuristics(tmp_path, tunings):
    seen = {}

    def early(configs, nargs):
        seen["M"] = nargs["M"]
        return [c for c in configs if c.kwargs["BLOCK_M"] == 64]
    k = make(tmp_path, prune_configs_by={"early_config_prune": early,
                                         "perf_model": lambda **kw: -kw["BLOCK_N"], "top_k": 0.5})
    _call(k, 100)
    assert seen["M"] == 128                                 # pruning sees the bucket's value
    assert tunings[0][1] == 2 and k.best_config.kwargs == {"BLOCK_M": 64, "BLOCK_N": 128}

    @heuristics({"BLOCK_N": lambda args: 32 if args["N"] < 64 else 128})
    @mt.jit
    def hk(x_ptr, y_ptr, M, N, alpha, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        scale_kernel(x_ptr, y_ptr, M, N, alpha, BLOCK_M, BLOCK_N)
    tuned = autotune(configs=[Config({"BLOCK_M": 16}), Config({"BLOCK_M": 64})], key=["M"], cache_dir=tmp_path)(hk)
    _call(tuned, 40, N=50)
    assert tuned.best_config.kwargs["BLOCK_M"] in (16, 64)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="key names \\['Q'\\]"):
        autotune(configs=CONFIGS, key=["Q"])(scale_kernel)
    with pytest.raises(ValueError, match="configs=.*space="):
        autotune(key=["M"])(scale_kernel)
    with pytest.raises(ValueError, match="reset_to_zero names \\['z'\\]"):
        autotune(configs=CONFIGS, key=["M"], reset_to_zero=["z"])(scale_kernel)
    with pytest.raises(ValueError, match="budget"):
        autotune(configs=CONFIGS, key=["M"], budget=0)(scale_kernel)
    with pytest.raises(TypeError, match="jit"):
        autotune(configs=CONFIGS, key=["M"])(lambda x: x)


@pytest.mark.parametrize("variable", ["MINITRITON_PRINT_AUTOTUNING", "TRITON_PRINT_AUTOTUNING"])
def test_print_autotuning(tmp_path, monkeypatch, capsys, variable):
    """Triton's variable works too; the line counts refused configs apart; a cache hit says so."""
    monkeypatch.setenv(variable, "1")
    _call(make(tmp_path, configs=CONFIGS + [Config({"BLOCK_M": 4096, "BLOCK_N": 4096})]), 100)
    out = capsys.readouterr().out
    assert "autotuning for scale_kernel" in out and "best config selected" in out
    assert f"{len(CONFIGS) + 1} configs measured: {len(CONFIGS)} ran, 1 refused" in out
    _call(make(tmp_path, configs=CONFIGS + [Config({"BLOCK_M": 4096, "BLOCK_N": 4096})]), 100)   # a new process's view
    assert "best config loaded from the cache" in capsys.readouterr().out


def test_kernels_without_a_source_file_get_a_stable_fingerprint(tmp_path, tunings):
    src = scale_kernel.src.replace("@mt.jit\n", "")
    made = []
    for _ in range(2):
        ns = {}
        exec(compile("import minitriton as mt\nimport minitriton.language as tl\n" + src, "<typed>", "exec"), ns)
        made.append(mt.jit(ns["scale_kernel"]))
    assert made[0].src.startswith("<no source") and made[0].src == made[1].src
    for k in made:   # the same code, defined twice: one tuning
        _call(autotune(configs=CONFIGS, key=["M", "N"], cache_dir=tmp_path)(k), 100)
    assert len(tunings) == 1


def test_search_over_a_space_with_a_tuner_object(tmp_path, tunings):
    from autotune import Space
    from autotune.tuners import RandomTuner
    space = Space(BLOCK_M=[16, 32, 64], BLOCK_N=[32, 64, 128], num_warps=[2, 4, 8], num_stages=[1])
    k = autotune(space=space, key=["M", "N"], tuner=RandomTuner(seed=3), budget=5, cache_dir=tmp_path)(scale_kernel)
    _call(k, 100)
    _call(k, 300)        # the same tuner object serves a second key, starting afresh
    assert [n for _, n in tunings] == [5, 5]
    assert k.best_config in space
    default = autotune(space=space, key=["M"], cache_dir=tmp_path / "d")(scale_kernel)
    assert default.tuner == "ansor" and default.budget == 128        # a space: Ansor by default (issue 10)


def test_a_damaged_results_database_is_set_aside(tmp_path, tunings):
    _call(make(tmp_path), 100)
    db = tmp_path / "results" / "cache.db"
    db.write_bytes(b"this is not sqlite" * 100)
    _call(make(tmp_path), 100)           # no crash: the database starts afresh and the key is tuned again
    assert len(tunings) == 2
    assert any(p.name.startswith("results.damaged-") for p in tmp_path.iterdir())
    assert len(TuningCache(tmp_path).entries()) == 1


@mt.jit
def unmasked_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)     # no mask: BLOCK must divide n


def test_a_config_whose_real_launch_fails_is_recorded_and_the_next_best_used(tmp_path):
    """HypoGPU times BLOCK 2048 fastest, but at n = 2**20 - 16 its unmasked load runs off the
    end on the CPU: the call warns, runs BLOCK 16, and the failure is recorded (records, cache
    entry, `show`), so the next process launches BLOCK 16 without trying 2048 again."""
    from autotune import report
    from autotune.cache import TuningCache

    def make_it():
        return autotune(configs=[Config({"BLOCK": 16}), Config({"BLOCK": 2048})], key=["n"],
                        cache_dir=tmp_path)(unmasked_kernel)
    n = 2 ** 20 - 16
    x = np.arange(n, dtype=np.float32)
    y = np.zeros_like(x)
    k = make_it()
    with pytest.warns(RuntimeWarning, match=r"BLOCK: 2048.*dropped.*OutOfBoundsError.*using Config\(\{BLOCK: 16\}"):
        k[lambda m: (mt.cdiv(n, m["BLOCK"]),)](x, y, n)
    assert np.array_equal(y, 2 * x) and k.best_config.kwargs == {"BLOCK": 16}
    cache = TuningCache(tmp_path)
    entry, = cache.entries()
    assert entry["config"]["kwargs"] == {"BLOCK": 16} and "OutOfBoundsError" in entry["failed_on_cpu"][0][1]
    shown = report.show(entry, cache.log.read(entry["key"]))
    assert "dropped   Config({BLOCK: 2048}" in shown and "ERROR its real launch on the CPU failed" in shown
    again = make_it()
    y[:] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again[lambda m: (mt.cdiv(n, m["BLOCK"]),)](x, y, n)
    assert again.best_config.kwargs == {"BLOCK": 16} and np.array_equal(y, 2 * x)


def test_a_fault_of_the_call_itself_is_raised_and_records_nothing(tmp_path):
    """When the runner-up fails too, the call is at fault: its error is raised, nothing recorded."""
    from autotune.cache import TuningCache
    k = autotune(configs=[Config({"BLOCK": 64}), Config({"BLOCK": 128})], key=["n"], cache_dir=tmp_path)(unmasked_kernel)
    x = np.zeros(1000, np.float32)
    with pytest.raises(IndexError, match="out of bounds") as e:
        k[lambda m: (mt.cdiv(1000, m["BLOCK"]) + 1,)](x, np.zeros_like(x), 1000)
    assert "failed as well" in "".join(getattr(e.value, "__notes__", []))
    entry, = TuningCache(tmp_path).entries()
    assert "failed_on_cpu" not in entry


def test_an_argument_no_launch_can_take_is_refused_before_tuning(tmp_path):
    k = autotune(configs=[Config({"BLOCK": 16})], key=["n"], cache_dir=tmp_path)(unmasked_kernel)
    with pytest.raises(TypeError, match="argument 'x_ptr' has unsupported type list"):
        k[(1,)]([1.0] * 16, np.zeros(16, np.float32), 16)
    assert k.last_tuning is None


def test_bad_sizes_configs_and_keys_are_refused_naming_them(tmp_path):
    import kernels
    from autotune import Task
    for M, err, match in ((-5, ValueError, "M must be a positive size, got M=-5"),
                          (0, ValueError, "M=0 \\(an empty operand has nothing to tune\\)"),
                          (64.5, TypeError, "M must be an int \\(a size\\), got 64.5"),
                          (True, TypeError, "M must be an int")):
        with pytest.raises(err, match=match):
            Task(kernels.matmul, M=M, N=64, K=64)
    assert Task(kernels.matmul, M=np.int64(64), N=64, K=64).shape["M"] == 64
    with pytest.raises(ValueError, match="num_warps must be a power of 2"):
        Config({"BLOCK": 16}, num_warps=3)
    with pytest.raises(ValueError, match="num_stages must be an int >= 0"):
        Config({"BLOCK": 16}, num_stages=-1)
    a, b = np.ones((32, 32), np.float16), np.ones((32, 32), np.float16)
    with pytest.raises(ValueError, match=r"matmul: config must give every one of .*lacks \['BLOCK_N', 'BLOCK_K'"):
        kernels.matmul(a, b, config={"BLOCK_M": 64})
    with pytest.raises(ValueError, match=r"has unknown \['BLOCK'\]"):
        kernels.matmul(a, b, config={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 1, "SPLIT_K": 1,
                                     "BLOCK": 2})
    assert kernels.matmul(np.ones((0, 32), np.float16), b).shape == (0, 32)   # an empty product: no launch
    with pytest.raises(ValueError, match="num_warps must be a power of 2"):
        unmasked_kernel[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), 16, BLOCK=16, num_warps=3)
    k = autotune(configs=[Config({"BLOCK": 16})], key=["n"], cache_dir=tmp_path)(unmasked_kernel)
    x = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="key argument 'n' is -16"):
        k[(1,)](x, x.copy(), -16)
    with pytest.raises(ValueError, match="key argument 'n' is NaN"):
        k[(1,)](x, x.copy(), float("nan"))
    assert k.last_tuning is None


@mt.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_a_do_bench_of_the_callers_own_times_the_configs_and_hooks_wrap_each_run(tmp_path, tunings):
    """Triton's contract: do_bench(kernel_call, quantiles) is the judge.  This one runs the kernel
    on the CPU and makes the config HypoGPU would never pick win; restore_value puts the array
    back after each benchmarked run, so only the real launch's +1 remains."""
    timed, last_block = [], [None]

    def do_bench(kernel_call, quantiles):
        kernel_call()
        timed.append(last_block[0])
        return [1.0 if last_block[0] == 16 else 2.0, 0.0, 0.0]

    configs = [Config({"BLOCK": b}, pre_hook=lambda nargs: last_block.__setitem__(0, nargs["BLOCK"]))
               for b in (16, 128, 1024)]
    k = autotune(configs=configs, key=["n"], restore_value=["x_ptr"], do_bench=do_bench, cache_dir=tmp_path)(
        add_one_kernel)
    x = np.zeros(1000, np.float32)
    k[lambda m: (mt.cdiv(1000, m["BLOCK"]),)](x, 1000)
    assert timed == [16, 128, 1024] and tunings == []           # do_bench timed each, HypoGPU none
    assert k.best_config == configs[0] and k.configs_timings[configs[0]] == 1.0
    np.testing.assert_array_equal(x, np.ones(1000, np.float32))  # three benchmarked runs undone

    calls = []
    hooked = autotune(configs=configs, key=["n"], restore_value=["x_ptr"], do_bench=do_bench, cache_dir=tmp_path,
                      pre_hook=lambda nargs, reset_only=False: calls.append(("pre", reset_only)),
                      post_hook=lambda nargs, exception: calls.append(("post", exception)))(add_one_kernel)
    y = np.zeros(1000, np.float32)
    hooked[lambda m: (mt.cdiv(1000, m["BLOCK"]),)](y, 1000)
    assert calls == [("pre", False), ("post", None)] * 3 + [("pre", True)]
    np.testing.assert_array_equal(y, np.full(1000, 4, np.float32))   # a user's hooks replace the restoring ones


def test_a_do_bench_returning_nan_or_junk(tmp_path):
    configs = [Config({"BLOCK": b}) for b in (16, 128)]
    times = iter([float("nan"), 3.0])
    k = autotune(configs=configs, key=["n"], do_bench=lambda call, quantiles: [next(times)], cache_dir=tmp_path)(
        add_one_kernel)
    x = np.zeros(100, np.float32)
    k[lambda m: (mt.cdiv(100, m["BLOCK"]),)](x, 100)
    assert k.best_config == configs[1]                     # the NaN time never wins
    bad = autotune(configs=configs, key=["n"], do_bench=lambda call, quantiles: "fast", cache_dir=tmp_path)(
        add_one_kernel)
    with pytest.raises(TypeError, match="do_bench must return a time"):
        bad[lambda m: (mt.cdiv(100, m["BLOCK"]),)](x, 100)


def test_a_config_loaded_from_the_disk_cache_runs_its_pre_hook(tmp_path, tunings):
    """A config's pre_hook is a function: the disk cache and the records hold only its knobs.
    The config loaded from them is the list's own, hook included (tutorial 09's hook sets the
    host descriptors' block shapes, without which the launch cannot run)."""
    ran = []
    configs = [Config({"BLOCK": b}, pre_hook=lambda nargs: ran.append(nargs["BLOCK"])) for b in (64, 256)]
    x = np.zeros(1000, np.float32)
    first = autotune(configs=configs, key=["n"], cache_dir=tmp_path)(add_one_kernel)
    first[lambda m: (mt.cdiv(1000, m["BLOCK"]),)](x, 1000)
    assert len(tunings) == 1 and ran and ran[-1] == first.best_config.kwargs["BLOCK"]
    ran.clear()
    again = autotune(configs=configs, key=["n"], cache_dir=tmp_path)(add_one_kernel)   # another process's view
    again[lambda m: (mt.cdiv(1000, m["BLOCK"]),)](x, 1000)
    assert len(tunings) == 1, "the second one loads the cached config, it does not tune"
    assert ran == [again.best_config.kwargs["BLOCK"]] and again.best_config.pre_hook is not None
    np.testing.assert_array_equal(x, np.full(1000, 2, np.float32))
