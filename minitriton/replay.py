"""Replay: a GPU that answers from a Kernel Tuner cache file (a brute-forced space measured on a
real GPU), so tuners are judged on landscapes nobody here designed.

    task = Replay("pnpoly_RTX_2080_Ti.json.gz").task()   # the file's kernel and space
    result = tune(task, tuner="ansor", budget=100, seed=0)
    truth = oracle(task)                                   # the recorded mean times

A config of the space is a point of the file's `tune_params` that the file holds (an absent
one broke the kernel's restrictions); the space lists them (`Space.listed`), so a file that
keeps a few per cent of a large product counts, samples and tunes as the small space it is.
Measuring it returns recorded repeat times, drawn with the measurement seed, so the noise is
the real GPU's; the simulated clock advances by the recorded compile and benchmark times.  A
failed config (`time` a string such as "RuntimeFailedConfig", or older versions' 1e20) is a
failed measurement.  The oracle is the recorded mean `time` (or the objective, below).

The objective is the file's `objective` unless the caller names one (`Replay(path, objective=
"GFLOP/s")`); rates and scores are maximised (`higher_is_better` to say otherwise).  Tuners
minimise a time, so a maximised rate is replayed as its inverse and a score that can be negative
as exp(best - score): the same ranking, and ratios of rates keep their meaning.

Files are read the way Kernel Tuner reads them: one left open by a run that stopped (or is
still going) is closed, without a last entry cut short, and an entry without its parameter
values is placed by its key.

Some files' objective is not the kernel time alone (pnpoly's `time` includes host work and is
about 100-1000x the mean of its `times`): there the repeats are scaled so that they average to
`time`, keeping their relative spread, and measuring and the oracle agree on one objective.

`export_cache` writes our records, or HypoGPU's exact landscape of a task, in the same format,
so Kernel Tuner and the autotuning-methodology tools can replay our landscapes.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import pathlib
import warnings
import zlib

import numpy as np

from .configs import Config, Space, as_config
from .datafiles import open_regular
from .hypogpu.measure import Measurement
from .hypogpu.oracle import OracleResult
from .hypogpu import oracle

FORMAT_KEYS = ("tune_params_keys", "tune_params", "cache")
VALUE_TYPES = (bool, int, float, str, type(None))


class ReplayFileError(ValueError):
    """A cache file that cannot be replayed (it says which file and what is wrong)."""


MAX_FILE_BYTES = 1 << 30   # a landscape's JSON (after gunzip): about a million recorded configs
MAX_PARSE_BYTES = 8 << 30  # what parsing it may take at most, judged before parsing (_parse_cost)
VALUE_BYTES = 72           # the most one JSON value costs once parsed: an empty dict and the slot holding it
MAX_PRODUCT = 1 << 62     # configs a space's parameters may span: its positions are int64


def _load(path: pathlib.Path) -> dict:
    try:
        with open_regular(path) as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ReplayFileError(f"Replay: cannot read {path}: {e.strerror or e}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ReplayFileError(f"Replay: {path} is over {MAX_FILE_BYTES >> 20} MiB: not read")
    try:
        data = _gunzip(raw, path) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, EOFError, zlib.error) as e:
        raise ReplayFileError(f"Replay: {path} is not a Kernel Tuner cache file (gzipped or plain JSON): {e}") \
            from None
    del raw
    if _parse_cost(data) > MAX_PARSE_BYTES:
        raise ReplayFileError(f"Replay: {path} holds so many JSON values that parsing it would take over "
                              f"{MAX_PARSE_BYTES >> 20:,} MiB of memory: not read")
    text = data.decode(errors="replace")
    del data
    try:
        return _parse(text)
    except RecursionError:
        raise ReplayFileError(f"Replay: {path} nests its JSON too deeply to be a Kernel Tuner cache file") from None
    except json.JSONDecodeError as e:
        try:
            closed = _close(text)
        except RecursionError:
            closed = None
        if closed is None:
            raise ReplayFileError(f"Replay: {path} is not a Kernel Tuner cache file (gzipped or plain JSON): {e}") \
                from None
        return closed


def _parse(text: str):
    """json.loads, but an integer too long for Python's int() (4,300 digits or more: it refuses
    them) is read as the float it rounds to, infinity: a time or a value written so makes one
    bad entry, not an unreadable file.  Parsed twice only when the first parse meets one, since
    a hook called for every integer would slow every file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        return json.loads(text, parse_int=lambda digits: int(digits) if len(digits) < 4000 else float(digits))


def _parse_cost(data: bytes) -> int:
    """An upper bound on the memory json.loads would take for `data`: its bytes, and VALUE_BYTES
    for every value or key (each follows one of `,:[{`).  A real file's entries cost about
    four times their text; one of nothing but `[],` costs twenty times (60 MB took 1.6 GB)."""
    return len(data) + VALUE_BYTES * sum(data.count(c) for c in (b",", b":", b"[", b"{"))


def _gunzip(raw: bytes, path) -> bytes:
    """The gzipped bytes, or as many as there are: a file copied while Kernel Tuner was still
    writing it ends mid-stream, and what came before is still good.  Expanded in bounded steps:
    a small file that would expand past MAX_FILE_BYTES (a gzip bomb) is refused before it does."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out, size, data = [], 0, raw
    while data:
        chunk = d.decompress(data, 64 << 20)
        size += len(chunk)
        if size > MAX_FILE_BYTES:
            raise ReplayFileError(f"Replay: {path} expands past {MAX_FILE_BYTES >> 20} MiB when decompressed: "
                                  f"not a landscape this process reads")
        out.append(chunk)
        data = d.unconsumed_tail
        if not chunk and not data:
            break
    return b"".join(out)


def _close(text: str):
    """The cache of a file Kernel Tuner left open, or None.  Kernel Tuner writes the header, then
    appends one entry per line ("key": {...},) and closes the two braces only when tuning ends;
    a run that was stopped, or is still going, leaves the file open (Kernel Tuner itself closes
    it on reading).  A last line cut short by a crash is dropped."""
    body = text.rstrip()
    for _ in range(2):
        trial = body[:-1] if body.endswith(",") else body
        try:
            data = _parse(trial + "}\n}")
        except json.JSONDecodeError:
            body = body[:body.rfind("\n")].rstrip() if "\n" in body else ""
            continue
        return data if isinstance(data, dict) and "cache" in data else None
    return None


class Replay:
    def __init__(self, path, objective: str | None = None, higher_is_better: bool | None = None):
        self.path = pathlib.Path(path)
        data = _load(self.path)
        if isinstance(data, dict) and "results" in data and "cache" not in data:
            raise ReplayFileError(f"Replay: {self.path} is a T4 results file (the autotuning-methodology format), "
                                  "not a Kernel Tuner cache file: use the cache file it was made from")
        if not isinstance(data, dict) or any(k not in data for k in FORMAT_KEYS):
            missing = [k for k in FORMAT_KEYS if not isinstance(data, dict) or k not in data]
            raise ReplayFileError(f"Replay: {self.path} lacks {', '.join(missing)} (Kernel Tuner's cache format)")
        keys, params, cache = data["tune_params_keys"], data["tune_params"], data["cache"]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise ReplayFileError(f"Replay: {self.path}: tune_params_keys must be a list of parameter names, got "
                                  f"{str(keys)[:120]}")
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ReplayFileError(f"Replay: {self.path}: tune_params_keys names {', '.join(map(repr, twice))} more "
                                  f"than once: {keys!r}")
        if not isinstance(params, dict) or set(keys) != set(params):
            raise ReplayFileError(f"Replay: {self.path}: tune_params_keys {keys!r} and tune_params "
                                  f"{sorted(params) if isinstance(params, dict) else str(params)[:120]} do not match")
        for k in keys:
            vals = params[k]
            if not isinstance(vals, list) or not vals or not all(isinstance(v, VALUE_TYPES) for v in vals):
                raise ReplayFileError(f"Replay: {self.path}: tune_params[{k!r}] must be a list of values (numbers, "
                                      f"strings, booleans), got {str(vals)[:120]}")
        if not isinstance(cache, dict) or not cache:
            raise ReplayFileError(f"Replay: {self.path} has an empty cache: nothing was measured")
        self.params = list(keys)
        self.values = {k: list(params[k]) for k in keys}
        self.kernel_name = str(data.get("kernel_name", self.path.name.split(".")[0]))
        self.device_name = str(data.get("device_name", "unknown GPU"))
        self.objective = objective or str(data.get("objective") or "time")
        if not isinstance(self.objective, str):
            raise ValueError(f"Replay: objective must be a metric's name (a str), got {objective!r}")
        if higher_is_better is None:
            higher_is_better = data.get("objective_higher_is_better")
        self.higher_is_better = bool(_higher_is_better(self.objective) if higher_is_better is None
                                     else higher_is_better)
        # a malformed entry costs only itself: it is skipped (said in a warning and kept in
        # `skipped`), and the file is refused only when no entry is usable
        self.records, self.skipped = {}, []
        for key, entry in cache.items():
            try:
                point = self._point(key, entry)
                if any(v not in self.values[k] for k, v in zip(keys, point)):
                    raise ReplayFileError(f"Replay: {self.path}: the entry {point} has a value outside tune_params "
                                          f"{self.values}")
            except ReplayFileError as e:
                self.skipped.append(str(e))
                continue
            self.records[point] = entry
        if not self.records:
            raise ReplayFileError(f"Replay: {self.path}: no usable cache entry ({len(self.skipped)} malformed; the "
                                  f"first: {self.skipped[0]})")
        if self.skipped:
            warnings.warn(f"Replay: {self.path}: {len(self.skipped)} of {len(cache)} cache entries skipped as "
                          f"malformed (the first: {self.skipped[0][:300]})", stacklevel=2)
        if not any(self.objective in e for e in self.records.values()):
            raise ReplayFileError(f"Replay: {self.path}: no entry records the objective {self.objective!r}")
        ran = [v for v in map(self._value, self.records.values()) if v is not None]
        if not ran:
            raise ReplayFileError(f"Replay: {self.path}: no config ran (every {self.objective} is a failure)")
        self._to_cost = _cost_scale(self.objective, self.higher_is_better, min(ran), max(ran))
        product = math.prod(len(v) for v in self.values.values())
        if product > MAX_PRODUCT:
            raise ReplayFileError(f"Replay: {self.path}: tune_params span {product:.3g} configs, more than minitriton "
                                  f"indexes ({MAX_PRODUCT:.3g}, a config's position must fit 62 bits)")
        try:
            self.space = Space.listed(self.values, list(self.records))
        except ValueError:
            stray = next((p for p in self.records if any(v not in self.values[k] for k, v in zip(keys, p))), None)
            raise ReplayFileError(f"Replay: {self.path}: the entry {stray} has a value outside tune_params "
                                  f"{self.values}" if stray is not None else
                                  f"Replay: {self.path}: its entries do not index tune_params {self.values}") from None
        self._digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]

    def _point(self, key, entry) -> tuple:
        """The entry's parameter values: its own fields, or else its key (the values joined by
        commas, as Kernel Tuner writes them), read back through tune_params."""
        if not isinstance(entry, dict):
            raise ReplayFileError(f"Replay: {self.path}: the cache entry {key!r} is not a record: {str(entry)[:120]}")
        if all(k in entry for k in self.params):
            point = tuple(entry[k] for k in self.params)
            if not all(isinstance(v, VALUE_TYPES) for v in point):
                raise ReplayFileError(f"Replay: {self.path}: the cache entry {str(key)[:60]!r} has a parameter value "
                                      f"that is not a number, string or boolean: {str(point)[:120]}")
            return point
        pieces = str(key).split(",")
        if len(pieces) == len(self.params):
            lookup = [{str(v): v for v in self.values[k]} for k in self.params]
            if all(p.strip() in names for p, names in zip(pieces, lookup)):
                return tuple(names[p.strip()] for p, names in zip(pieces, lookup))
        raise ReplayFileError(f"Replay: {self.path}: the cache entry {key!r} lacks a parameter of {self.params} "
                              f"and its key does not name one value of each: {str(entry)[:120]}")

    def __repr__(self):
        return f"Replay({self.path.name}: {self.kernel_name} on {self.device_name})"

    @property
    def fingerprint(self) -> str:
        goal = "" if self.objective == "time" and not self.higher_is_better else \
            f", {'max' if self.higher_is_better else 'min'} {self.objective}"
        return f"Replay({self.path.name}, {self._digest}{goal})"

    def task(self) -> "ReplayTask":
        return ReplayTask(self)

    def measurer(self, seed: int = 0) -> "ReplayMeasurer":
        return ReplayMeasurer(self, seed)

    # -- the recorded numbers ---------------------------------------------------------------------
    def entry(self, config):
        kw = as_config(config).all_kwargs()
        try:
            return self.records.get(tuple(kw[k] for k in self.params))
        except KeyError:
            return None

    def _value(self, entry):
        """The entry's objective as a float, or None where the config failed: a failure string
        or 1e20 in its time or its objective, or no number recorded."""
        t = entry.get("time")
        if isinstance(t, str) or (_number(t) and t >= FAILED_TIME):
            return None
        v = entry.get(self.objective)
        if not _number(v) or abs(v) >= FAILED_TIME or (self.objective == "time" and v <= 0):
            return None
        return float(v)

    def cost(self, entry) -> float | None:
        """What the tuners minimise for this entry (seconds for the time objective), or None."""
        v = self._value(entry)
        return None if v is None else float(self._to_cost(v))

    def samples(self, entry) -> np.ndarray:
        """The entry's recorded repeats (`times`, or the objective's plural such as `scores`),
        scaled to average to its recorded value (see above), as costs."""
        v = self._value(entry)
        reps = entry.get("times" if self.objective == "time" else self.objective + "s")
        reps = np.asarray([float(x) for x in reps if _number(x)] if isinstance(reps, list) else [], np.float64)
        c = float(self._to_cost(v))
        if reps.size == 0 or not np.all(reps > 0):
            return np.array([c])
        reps = np.asarray(self._to_cost(reps), np.float64)
        mean = reps.mean()
        return reps if abs(mean - c) <= 1e-3 * c else reps * (c / mean)

    def oracle(self, task) -> OracleResult:
        space = task.space
        times = np.full(space.size, np.inf)
        reasons = np.ones(space.size, np.int8)
        index = {k: {v: i for i, v in enumerate(space.knobs[k])} for k in space.names}
        for point, e in self.records.items():
            c = self.cost(e)
            if c is not None:
                flat = np.ravel_multi_index(tuple(index[k][v] for k, v in zip(self.params, point)), space.sizes)
                times[flat] = c
                reasons[flat] = 0
        return OracleResult(space, times, reasons)


FAILED_TIME = 1e20   # what older Kernel Tuner versions recorded as the time of a failed config
HIGHER_IS_BETTER = ("/s", "flop", "score", "throughput", "bandwidth", "speedup", "/w")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def _higher_is_better(objective: str) -> bool:
    """Kernel Tuner leaves the direction to the caller; a file seldom records it.  Rates, scores
    and speedups (GFLOP/s, GB/s, GFLOPS/W, score) are maximised, times and energies minimised."""
    name = objective.lower()
    return any(part in name for part in HIGHER_IS_BETTER)


def _cost_scale(objective, higher, lowest, highest):
    """The objective turned into a positive cost that ranks the configs the same way, since
    every tuner minimises a time: milliseconds to seconds; a positive rate to its inverse (a
    time per unit of work, so ratios keep their meaning); any other value to exp(+-(v - best)),
    positive and in the same order (a score that can be negative)."""
    if objective == "time" and not higher:
        return lambda v: np.asarray(v) / 1e3
    if lowest > 0:
        return (lambda v: 1.0 / np.asarray(v)) if higher else (lambda v: np.asarray(v, np.float64))
    return (lambda v: np.exp(highest - np.asarray(v))) if higher else (lambda v: np.exp(np.asarray(v) - lowest))


def _failure(entry, objective) -> str:
    for v in (entry.get("time"), entry.get(objective)):
        if isinstance(v, str):
            return v
    return f"FailedConfig (recorded {objective} {entry.get(objective, entry.get('time'))!r})"


class ReplayTask:
    """A Replay file's kernel and space, tuned like any Task (knob features: no launch profile)."""

    def __init__(self, device: Replay):
        self.device, self.space, self.kernel = device, device.space, None
        self.shape: dict = {}
        self.name = f"{device.kernel_name}[{device.path.name}]"

    def __repr__(self):
        return f"ReplayTask({self.name})"


class ReplayMeasurer:
    """Answers a measurement with recorded repeats drawn by the seed; charges the recorded
    compile and benchmark time to the simulated clock."""

    def __init__(self, device: Replay, seed: int = 0):
        self.device = device
        self.rng = np.random.default_rng(seed)
        self.clock = 0.0
        self.count = 0

    def replay(self, samples):
        for _ in samples:
            self.rng.random()

    def measure(self, task, config, repeats: int = 1, compiled: bool = False) -> Measurement:
        """`compiled`: re-timing a config measured before charges its benchmark time only."""
        if repeats < 1:
            raise ValueError(f"measure: repeats must be >= 1, got {repeats}")
        self.count += 1
        e = self.device.entry(config)
        if e is None:
            return Measurement(config, [], "OutsideSpace: the cache file holds no such config", 0.0)
        compile_s = 0.0 if compiled else _seconds(e.get("compile_time"))
        if self.device.cost(e) is None:
            self.clock += compile_s
            return Measurement(config, [], _failure(e, self.device.objective), compile_s)
        pool = self.device.samples(e)
        picks = [float(pool[int(self.rng.random() * pool.size)]) for _ in range(repeats)]
        cost = compile_s + repeats * _seconds(e.get("benchmark_time"))
        self.clock += cost
        return Measurement(config, picks, None, cost)


def _seconds(ms) -> float:
    return float(ms) / 1e3 if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms > 0 else 0.0


# ---------------------------------------------------------------- export
# significant digits of an exported oracle time: numpy's vectorised exp and log differ in the last
# bits between CPUs (with AVX-512 or without), so the full float made the same landscape a
# different file on another machine; nine digits are far below any measurement and the same everywhere
EXPORT_DIGITS = 9


def export_cache(path, task=None, records=(), device_name="HypoGPU", kernel_name=None):
    """Write a Kernel Tuner cache file: the given records (their samples as `times`, in ms), or,
    with no records, HypoGPU's exact landscape of `task` (every legal point's oracle time; points
    the model refuses as "CompilationFailedConfig").  Written to a temporary file and renamed, so
    a failure leaves no half-written file."""
    path = pathlib.Path(path)
    if task is None and not records:
        raise ValueError("export_cache: give a task (its exact landscape) or records")
    cache = {}
    if records:
        if task is not None:   # the task's parameters in its order, every value of its space
            names, params = list(task.space.names), {k: list(v) for k, v in task.space.knobs.items()}
        else:
            names = _record_params(records)
            params = {k: sorted({r.config.all_kwargs().get(k) for r in records}, key=_value_order) for k in names}
        for r in records:
            kw = r.config.all_kwargs()
            key = ",".join(str(kw.get(k)) for k in names)
            entry = {k: kw.get(k) for k in names}
            if r.ok:
                ms = [s * 1e3 for s in r.samples]
                entry.update(time=float(np.mean(ms)), times=ms)
            else:
                entry.update(time="RuntimeFailedConfig", times=[])
            entry.update(compile_time=0.0, benchmark_time=float(r.cost) * 1e3)
            cache[key] = entry
        kernel_name = kernel_name or records[0].kernel
    else:
        truth = oracle(task)
        space = task.space
        names = list(space.names)
        params = {k: list(v) for k, v in space.knobs.items()}
        arrays = space.arrays()
        for i in range(space.size):
            entry = {k: _plain(arrays[k][i]) for k in names}
            key = ",".join(str(entry[k]) for k in names)
            ms = float(f"{truth.times[i] * 1e3:.{EXPORT_DIGITS}g}")
            entry.update(time=ms if np.isfinite(ms) else "CompilationFailedConfig",
                         times=[ms] if np.isfinite(ms) else [], compile_time=1000.0,
                         benchmark_time=ms * 100 if np.isfinite(ms) else 0.0)
            cache[key] = entry
        kernel_name = kernel_name or getattr(task, "name", "kernel")
    doc = {"device_name": device_name, "kernel_name": kernel_name, "problem_size": getattr(task, "shape", {}) or 0,
           "tune_params_keys": names, "tune_params": params, "objective": "time", "cache": cache}
    text = json.dumps(doc).encode()
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        tmp.write_bytes(gzip.compress(text) if path.suffix == ".gz" else text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _record_params(records) -> list:
    """The records' parameters in the order their configs name them; the launch options
    (num_warps, num_stages) only where some record sets them away from Config's defaults, since
    every Config carries them and a recorded GPU's file (Replay) has no such parameters."""
    names = list(dict.fromkeys(k for r in records for k in r.config.kwargs))
    default = Config({})
    for option in ("num_warps", "num_stages"):
        if option not in names and any(getattr(r.config, option) != getattr(default, option) for r in records):
            names.append(option)
    return names


def _value_order(v):
    """Numbers by value, then anything else by its text (a parameter's values can mix types)."""
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    return (0, v, "") if number else (1, 0, repr(v))


def _plain(v):
    return v.item() if hasattr(v, "item") else v
