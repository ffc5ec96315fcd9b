"""A cache directory, records and devices in hostile or broken hands (issue 25): whatever is
planted there is data that costs only itself; it never runs code, and nothing impossible is chosen."""
import json
import os
import sqlite3
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


def test_links_planted_as_the_database_or_the_records_write_to_nothing_they_point_to(tmp_path):
    """SQLite and the records log would write through a link in a shared cache: into another
    program's database (dropping its indexes, adding diskcache's tables), or appending to a file
    of the user's.  A link as the results directory, as one of SQLite's files or as the records
    log is never followed: the results are set aside and tuned afresh, the records kept in memory."""
    victim = tmp_path / "app.db"
    con = sqlite3.connect(victim)
    con.execute("CREATE TABLE accounts(id, balance)")
    con.execute("CREATE INDEX accounts_id ON accounts(id)")
    con.commit()
    con.close()
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    before = victim.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "cache.db").write_bytes(before)
    plants = {"cache.db": lambda r: os.symlink(victim, r / "cache.db"),
              "cache.db-wal": lambda r: os.symlink(notes, r / "cache.db-wal"),
              "results": lambda r: (r.rmdir(), os.symlink(elsewhere, r, target_is_directory=True))}
    for i, (name, plant) in enumerate(plants.items()):
        cache_dir = tmp_path / f"cache{i}"
        (cache_dir / "results").mkdir(parents=True)
        plant(cache_dir / "results")
        with pytest.warns(RuntimeWarning, match=f"holds a symbolic link as {name}, which SQLite would write through"):
            _call(make(cache_dir), 100)
        assert victim.read_bytes() == before and (elsewhere / "cache.db").read_bytes() == before
        assert notes.read_text() == "keep me\n"
        assert list(cache_dir.glob("results.damaged-*")) and (cache_dir / "results" / "cache.db").is_file()
        assert _call(make(cache_dir), 100) is not None                 # tuned afresh, then served
    cache_dir = tmp_path / "cache_records"
    cache_dir.mkdir()
    os.symlink(notes, cache_dir / "records.jsonl")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        _call(make(cache_dir), 100)
    said = [str(w.message) for w in said]
    assert any("cannot be read (a symbolic link, not followed)" in m for m in said), said   # not read as records
    assert any("a symbolic link, not followed); serving what it holds" in m for m in said), said   # nor appended to
    assert not any("not valid records" in m for m in said), said
    assert notes.read_text() == "keep me\n"


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


@pytest.mark.parametrize("cut_at_a_line_start", [True, False])
def test_a_records_file_of_gigabytes_is_read_from_its_tail_only(tmp_path, monkeypatch, cut_at_a_line_start):
    """Memory and time stay bounded whatever the file's size: its last MAX_READ_BYTES are read
    (the latest records, which resuming uses), with one warning; no line is read in part."""
    log = RecordLog(tmp_path / "records.jsonl")
    for i in range(200):
        log.append(Record(Config({"BLOCK_M": i}), [1e-6 * (i + 1)], key="k"))
    lines = log.path.read_bytes().splitlines(keepends=True)
    tail = sum(len(line) for line in lines[-50:])
    monkeypatch.setattr("autotune.records.MAX_READ_BYTES", tail if cut_at_a_line_start else tail + 7)
    with pytest.warns(RuntimeWarning, match=r"only its last .* MB are read"):
        got = log.read("k")
    assert [r.config["BLOCK_M"] for r in got] == list(range(150, 200))


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


_FIFOS = """
import os, sys, warnings
from tests.test_autotune import _call, make
from autotune.records import RecordLog
from minitriton.replay import Replay, ReplayFileError
import pathlib
where = pathlib.Path(sys.argv[1])
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    _call(make(where), 100)
    print("records read:", len(RecordLog(where / "records.jsonl").read()))
print("warned:", any("FIFO, not a regular file" in str(w.message) for w in said))
try:
    Replay(where / "landscape.json")
except ReplayFileError as e:
    print("replay:", e)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_fifos_planted_where_data_is_read_never_hang(tmp_path):
    """A FIFO waits for a writer that never comes: planted as the records log, the results
    database or a landscape, it costs a warning or a clear error, never a process that hangs
    (run apart, so that a hang fails the test instead of holding it)."""
    os.mkfifo(tmp_path / "records.jsonl")
    (tmp_path / "results").mkdir()
    os.mkfifo(tmp_path / "results" / "cache.db")
    os.mkfifo(tmp_path / "landscape.json")
    try:
        run = subprocess.run([sys.executable, "-c", _FIFOS, str(tmp_path)], capture_output=True, text=True,
                             timeout=90, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    except subprocess.TimeoutExpired:
        pytest.fail("waited on a planted FIFO: the process would hang")
    assert run.returncode == 0, run.stderr
    assert "records read: 0" in run.stdout and "warned: True" in run.stdout
    assert "landscape.json: a FIFO, not a regular file" in run.stdout
    assert list(tmp_path.glob("results.damaged-*")), "the planted database is set aside"


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


@pytest.mark.parametrize("argument, value, match", [
    ("seed", "a", "seed must be an int >= 0, got 'a'"), ("seed", -1, "seed must be an int >= 0"),
    ("seed", 1.5, "seed must be an int >= 0"), ("seed", True, "seed must be an int >= 0"),
    ("parallel", 0, "parallel must be None, a positive int"), ("parallel", -2, "parallel must be None"),
    ("parallel", 2.5, "parallel must be None"),
])
def test_a_bad_seed_or_pool_is_refused_naming_it_before_anything_is_measured(argument, value, match):
    """(A seed of the wrong kind reached numpy's SeedSequence, whose error named no argument; a
    pool of 0 or -2 processes was ignored wherever no pool was made.)"""
    import kernels
    from kernels.shapes import SHAPES
    with pytest.raises(ValueError, match=f"tune: {match}"):
        tune(Task(kernels.matmul, **SHAPES["small"]), "random", budget=4, **{argument: value})


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
    # its trips repeat exactly, so it is caught at once (cooperative.py), long before the time limit
    with pytest.raises(RuntimeError, match=f"kernel 'forever': programs .* are in the loop at line {line}, whose "
                                           f"trips repeat .* would never end"):
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
    assert len(failed) == 1 and failed[0].config.kwargs == {"BLOCK": 128}
    assert "would never end" in failed[0].error    # caught at once, not at the time limit


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


def _copy_kernel():
    import minitriton as mt
    import minitriton.language as tl

    @mt.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    return copy


@pytest.mark.parametrize("dtype", [object, np.complex64, "U4", [("a", np.int32), ("b", np.float32)]])
def test_arrays_of_unsupported_types_are_refused_naming_the_argument(dtype):
    with pytest.raises(TypeError, match="argument 'x_ptr' is an array of unsupported element type"):
        _copy_kernel()[(1,)](np.zeros(16, dtype=dtype), np.zeros(16, np.float32), 16, BLOCK=16)


def test_a_constexpr_given_as_an_array_is_refused_naming_it():
    with pytest.raises(TypeError, match="constexpr 'BLOCK' got a numpy array of shape \\[\\]"):
        _copy_kernel()[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), 16, BLOCK=np.array(16))


import minitriton as mt  # noqa: E402  (the kernels below live at module level, as users write them)
import minitriton.language as tl  # noqa: E402


@mt.jit
def count_down(x, N: tl.constexpr):
    if N == 0:
        return x
    return count_down(x + 1, N - 1)     # itself, by its global name, down a constexpr


@mt.jit
def use_count_down(x_ptr):
    tl.store(x_ptr, count_down(tl.load(x_ptr), 3))


def test_a_helper_that_calls_itself_down_a_constexpr_runs():
    x = np.zeros(1, np.float32)
    use_count_down[(1,)](x)
    assert x[0] == 3


def test_keys_that_cannot_be_keys_are_refused_naming_them(tmp_path):
    from autotune import autotune
    with pytest.raises(ValueError, match=r"key= names \['BLOCK'\], which the configs set"):
        autotune(configs=[Config({"BLOCK": 16})], key=["BLOCK"])(_copy_kernel())
    k = autotune(configs=[Config({"BLOCK": 16})], key=["x_ptr"], cache_dir=tmp_path)(_copy_kernel())
    with pytest.raises(TypeError, match="key argument 'x_ptr' is an array"):
        k[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), 16)


def test_the_default_tuner_over_a_user_space_without_split_k_drops_the_rfactor_sketch():
    import kernels
    from autotune import Space
    space = Space(BLOCK_M=[64, 128], BLOCK_N=[64, 128], BLOCK_K=[32], GROUP_M=[8], SPLIT_K=[1], num_warps=[4],
                  num_stages=[3])
    task = Task(kernels.matmul, space=space, M=512, N=512, K=32768)    # wgrad: rfactor would apply
    assert [s.name for s in task.sketches] == ["tiled"]
    assert "no value this sketch needs" in str(task.sketches)
    assert tune(task, budget=4, seed=0).best_config in space


def test_max_with_indices_returns_a_value_and_its_own_index():
    import minitriton as mt
    import minitriton.language as tl

    @mt.jit
    def amax(x_ptr, v_ptr, i_ptr, w_ptr, j_ptr):
        x = tl.load(x_ptr + tl.arange(0, 8))
        v, i = tl.max(x, 0, return_indices=True)
        w, j = tl.min(x, 0, return_indices=True)
        tl.store(v_ptr, v)
        tl.store(i_ptr, i)
        tl.store(w_ptr, w)
        tl.store(j_ptr, j)
    x = np.array([1, 5, np.nan, 2, 9, 0, 3, 9], np.float32)
    out = [np.zeros(1, t) for t in (np.float32, np.int32, np.float32, np.int32)]
    amax[(1,)](x, *out)
    assert out[0][0] == 9 and x[out[1][0]] == 9 and out[1][0] == 4            # first of the ties, NaN passed over
    assert out[2][0] == 0 and x[out[3][0]] == 0


def test_editing_a_plain_python_helper_changes_the_kernels_key():
    import minitriton as mt
    import minitriton.language as tl
    ns = {"mt": mt, "tl": tl}
    src = "def helper(b):\n    return b * {}\n"
    exec(src.format(2), ns)
    exec("@mt.jit\ndef k(p, B: tl.constexpr):\n    tl.store(p + tl.arange(0, helper(B)), 1.0)\n", ns)
    before = ns["k"].cache_key()
    exec(src.format(4), ns)
    assert ns["k"].cache_key() != before


def test_verify_does_not_import_a_module_a_planted_entry_names(tmp_path):
    """An entry whose call record names the module `this` (importing it prints the Zen of
    Python): verify finds this.py without importing it, sees no such kernel in it, refuses."""
    _call(make(tmp_path), 100)
    cache = TuningCache(tmp_path)
    entry = cache.entries()[0]
    entry["call"] = dict(entry["call"], module="this", name="scale_kernel", source_sha256="0" * 64)
    cache.put(entry["key"], entry)
    cache.close()
    run = subprocess.run([sys.executable, "-m", "autotune", "--cache-dir", str(tmp_path), "verify", entry["key"]],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "defines no function scale_kernel: not loading it" in run.stderr
    assert "Beautiful is better" not in run.stdout + run.stderr


def _tuned_cache(tmp_path):
    """A cache holding one tuned key, and the connection to its database to plant things in."""
    _call(make(tmp_path), 100)
    key = TuningCache(tmp_path).entries()[0]["key"]
    return key, sqlite3.connect(tmp_path / "results" / "cache.db")


@pytest.mark.parametrize("setting, value, removed", [
    ("disk_evil", 1, True), ("sqlite_evil", "x y", True), ("count", "many", True),
    ("eviction_policy", "nope", False), ("size_limit", "big", False)])
def test_settings_planted_in_the_database_are_never_obeyed(tmp_path, tunings, setting, value, removed):
    """diskcache hands a stored `disk_*` setting to its Disk, runs a stored `sqlite_*` one as a
    PRAGMA and lets stored values of its own settings override its defaults: planted ones crashed
    every launch or turned the cache read-only.  Settings diskcache does not have are removed with
    a warning; its own are given explicitly, so a stored value is never used.  What the cache holds
    is still served."""
    key, con = _tuned_cache(tmp_path)
    con.execute("INSERT OR REPLACE INTO Settings VALUES (?, ?)", (setting, value))
    con.commit()
    con.close()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _call(make(tmp_path), 100)
    said = [str(w.message) for w in seen if "removed: setting" in str(w.message)]
    assert bool(said) == removed and (not removed or setting in said[0])
    assert len(tunings) == 1                                   # served from the cache, not tuned again
    cache = TuningCache(tmp_path)
    assert cache.problem is None and cache.get(key) is not None
    stored = dict(sqlite3.connect(tmp_path / "results" / "cache.db").execute("SELECT key, value FROM Settings"))
    assert stored.get(setting) != value


def test_triggers_and_views_planted_in_the_database_are_dropped(tmp_path, tunings):
    """A trigger would run its SQL on every write (this one for minutes); it is dropped first."""
    key, con = _tuned_cache(tmp_path)
    con.execute("CREATE TRIGGER slow AFTER INSERT ON Cache BEGIN SELECT count(*) FROM (WITH RECURSIVE "
                "r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000000000) SELECT i FROM r); END")
    con.execute("CREATE VIEW everything AS SELECT * FROM Cache")
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="removed: trigger slow, view everything"):
        _call(make(tmp_path), 200)                            # a new key: a write
    assert len(tunings) == 2
    names = {n for (n,) in sqlite3.connect(tmp_path / "results" / "cache.db").execute(
        "SELECT name FROM sqlite_master")}
    assert "slow" not in names and "everything" not in names and "Cache_key_raw" in names


def test_a_value_or_key_too_long_to_read_costs_only_itself(tmp_path, tunings, monkeypatch):
    """SQLite refuses to hand over a value longer than MAX_SQLITE_BYTES (checked from the row's
    header, before reading it), so a planted giant is a miss, not gigabytes in memory; a giant key
    is removed when the database is opened (any lookup would read it whole)."""
    monkeypatch.setattr("autotune.cache.MAX_SQLITE_BYTES", 1 << 16)
    key, con = _tuned_cache(tmp_path)
    _call(make(tmp_path), 200)
    other = [e["key"] for e in TuningCache(tmp_path).entries() if e["key"] != key][0]
    con.execute("UPDATE Cache SET value = ? WHERE key = ?", ("x" * (1 << 20), "result:" + key))
    con.execute("INSERT INTO Cache (key, raw, store_time, access_time, mode, value) VALUES (?, 1, 0, 0, 1, 'x')",
                ("k" * (1 << 20),))
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="a key over 65536 bytes"):
        cache = TuningCache(tmp_path)
    assert cache.get(key) is None and cache.get(other) is not None     # the giant value is a miss, the rest served
    assert [e["key"] for e in cache.entries()] == [other]
    cache.close()
    _call(make(tmp_path), 100)                                       # tuned again, and stored over the giant
    assert len(tunings) == 3 and TuningCache(tmp_path).get(key) is not None


def test_a_database_whose_tables_are_not_diskcache_s_is_set_aside(tmp_path, tunings):
    key, con = _tuned_cache(tmp_path)
    con.execute("ALTER TABLE Cache ADD COLUMN extra")
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="not a database minitriton writes .*set aside"):
        _call(make(tmp_path), 100)
    assert len(tunings) == 2 and list(tmp_path.glob("results.damaged-*"))
    assert TuningCache(tmp_path).get(key) is not None


def test_a_database_diskcache_cannot_open_is_set_aside(tmp_path, tunings):
    """Duplicate keys under a dropped unique index: diskcache's own open (rebuilding the index)
    fails; the launch goes on with a fresh database and a warning."""
    key, con = _tuned_cache(tmp_path)
    con.execute("DROP INDEX Cache_key_raw")
    con.execute("INSERT INTO Cache (key, raw, store_time, access_time, mode, value) "
                "SELECT key, raw, store_time, access_time, mode, value FROM Cache")
    con.commit()
    con.close()
    with pytest.warns(RuntimeWarning, match="not a database minitriton writes .*UNIQUE.*set aside"):
        _call(make(tmp_path), 100)
    assert len(tunings) == 2 and list(tmp_path.glob("results.damaged-*"))


PLANTED_CONFIGS = {
    "not offered": {"kwargs": {"BLOCK_M": 1 << 20, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 2},
    "bad num_warps": {"kwargs": {"BLOCK_M": 16}, "num_warps": 3, "num_stages": 1},
    "kwargs a list": {"kwargs": [1, 2], "num_warps": 2, "num_stages": 1},
    "a value a dict": {"kwargs": {"BLOCK_M": {"x": 1}}, "num_warps": 2, "num_stages": 1},
    "num_warps a word": {"kwargs": {"BLOCK_M": 16}, "num_warps": "four", "num_stages": 1},
    "a field missing": {"kwargs": {"BLOCK_M": 16, "BLOCK_N": 32}, "num_warps": 2},
}


@pytest.mark.parametrize("planted", PLANTED_CONFIGS.values(), ids=list(PLANTED_CONFIGS))
def test_a_cached_config_the_autotuner_does_not_offer_is_never_launched(tmp_path, tunings, planted, monkeypatch):
    """A cache entry is data: one naming a config outside the autotuner's list (or no config at
    all) made the launch run it (or fail); it is ignored with a warning and the key tuned again."""
    _call(make(tmp_path), 100)
    cache = TuningCache(tmp_path)
    entry = cache.entries()[0]
    cache.put(entry["key"], {**{k: v for k, v in entry.items() if k not in ("version", "key", "created")},
                             "config": planted})
    cache.close()
    launched = []
    real = mt.JITFunction.run

    def spy(self, *args, **kwargs):
        launched.append({k: v for k, v in kwargs.items() if k in ("BLOCK_M", "BLOCK_N", "num_warps")})
        return real(self, *args, **kwargs)
    monkeypatch.setattr(mt.JITFunction, "run", spy)
    with pytest.warns(RuntimeWarning, match="names a config it does not offer|entries minitriton did not write"):
        _call(make(tmp_path), 100)
    assert len(tunings) == 2
    offered = [{"BLOCK_M": c.kwargs["BLOCK_M"], "BLOCK_N": c.kwargs["BLOCK_N"], "num_warps": c.num_warps}
               for c in CONFIGS]
    assert launched and all(x in offered for x in launched)


def test_a_generated_operator_ignores_a_cached_config_outside_its_space(tmp_path):
    from autotune import te
    M, N, K = te.var("M"), te.var("N"), te.var("K")
    A, B = te.placeholder((M, K), "float32", name="A"), te.placeholder((K, N), "float32", name="B")
    k = te.reduce_axis(K, name="k")
    op = te.generate(te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C"))
    a, b = np.ones((64, 32), np.float32), np.ones((32, 48), np.float32)
    op.autotuned(budget=4, cache_dir=tmp_path)(a, b)
    cache = TuningCache(tmp_path)
    entry = cache.entries()[0]
    cache.put(entry["key"], {**{k: v for k, v in entry.items() if k not in ("version", "key", "created")},
                             "config": PLANTED_CONFIGS["not offered"]})
    cache.close()
    again = op.autotuned(budget=4, cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="names a config it does not offer"):
        out = again(a, b)
    assert again.last_tuning is not None and np.array_equal(out, a @ b)


@pytest.mark.parametrize("field", [{"settings": "x"}, {"remeasured": "z"}, {"remeasured": {"noise": "loud"}},
                                   {"time": "abc"}, {"measured": None}, {"dropped": [[1, 2, 3]]}, {"kernel": 5}])
def test_an_entry_with_a_field_of_the_wrong_type_is_a_miss_and_the_command_line_reads_on(tmp_path, tunings, field):
    """Each field of an entry is checked against what the writers put there (cache.FIELD_TYPES):
    a planted one of another type crashed `list` or `show`; now the entry is a miss (tuned again)
    and every command runs."""
    _call(make(tmp_path), 100)
    cache = TuningCache(tmp_path)
    entry = cache.entries()[0]
    cache.put(entry["key"], {**{k: v for k, v in entry.items() if k not in ("version", "key", "created")}, **field})
    assert cache.get(entry["key"]) is None
    cache.close()
    for command in (["list"], ["show", entry["key"][:8]], ["export"]):
        done = subprocess.run([sys.executable, "-m", "autotune", "--cache-dir", str(tmp_path), *command],
                              capture_output=True, text=True, timeout=120)
        assert "Traceback" not in done.stderr, (command, done.stderr)
    _call(make(tmp_path), 100)
    assert len(tunings) == 2
