"""One-call numerical checks for kernels run under several configs.

A config changes how a kernel computes (tiling, summation order), never what it computes
(lecture §2.1).  So every config's output must (1) match a float64 reference to within the
output dtype's rounding plus the fp32 accumulation error, and (2) agree with every other
config to within `ulps` units in the last place, except where fp32 summation order dominates
(near zero), which `abs_tol` bounds.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from typing import Callable, Sequence

import numpy as np

from . import dtypes as D
from .hypogpu import A100, HypoGPU

FP32_UNIT_ROUNDOFF = 2.0 ** -24

__all__ = ["FP32_UNIT_ROUNDOFF", "accumulation_bound", "assert_dot_close", "assert_close", "ConfigCheck",
           "check_configs", "do_bench", "Benchmark", "Mark", "perf_report", "get_dram_gbps",
           "get_max_tensorcore_tflops", "get_max_simd_tflops", "nvsmi", "set_gpu_clock"]


def __dir__():
    """What the module offers, not the modules it imports (numpy, dataclasses, typing)."""
    return list(__all__)


def accumulation_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise bound on fp32 summation error of a @ b: K · 2⁻²⁴ · Σ_k |a_ik| |b_kj|.

    The classic bound for recursive summation of K terms in a precision with unit roundoff u
    is γ_K·Σ|terms| ≈ K·u·Σ|terms|; it holds for any summation order, so it covers every
    BLOCK_K and SPLIT_K.
    """
    K = a.shape[-1]
    return K * FP32_UNIT_ROUNDOFF * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def assert_dot_close(got: np.ndarray, want: np.ndarray, a: np.ndarray, b: np.ndarray, *, err_msg: str = "") -> None:
    """Assert that two evaluations of a @ b agree as far as fp32 accumulation lets them.

    Each is one fp32 sum over K rounded to the output dtype, but BLAS chooses the order of that
    sum by CPU, call shape and threads: the executor multiplies a grid of tiles as one GEMM
    where one program alone multiplies its own tile, so the two may differ in the last bits.
    Allowed: each side's accumulation bound plus one output ulp (each side rounds once).
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{err_msg}shapes differ: {got.shape} and {want.shape}")
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    bound = accumulation_bound(a, b)
    unit = np.maximum(_spacing(g64, got.dtype), _spacing(w64, got.dtype))
    _assert_within(np.abs(g64 - w64), 2 * bound + unit, err_msg or "dot products", g64, w64,
                   "allowed: 2 x accumulation_bound(a, b) + one output ulp")


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Triton's `testing.assert_close`: x and y agree within `atol` (default 1e-2; may be a
    function of x's dtype) plus `rtol` (default 0) times |y|, NaNs equal to NaNs."""
    x, y = np.asarray(x), np.asarray(y)
    atol = 1e-2 if atol is None else (atol(x.dtype) if callable(atol) else atol)
    rtol = 0.0 if rtol is None else (rtol(x.dtype) if callable(rtol) else rtol)
    if x.dtype == np.bool_ or y.dtype == np.bool_:   # compare truth values exactly, as Triton does
        np.testing.assert_array_equal(x, y, err_msg=err_msg)
        return
    x64 = x.astype(np.float64) if x.dtype.kind != "c" else x
    y64 = y.astype(np.float64) if y.dtype.kind != "c" else y
    np.testing.assert_allclose(x64, y64, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)


def _spacing(x: np.ndarray, dtype) -> np.ndarray:
    """One ulp of |x| in `dtype` (the output precision), as float64."""
    return np.spacing(np.abs(np.asarray(x, np.float64)).astype(dtype)).astype(np.float64)


@dataclasses.dataclass
class ConfigCheck:
    configs: list
    max_abs_error: list          # per config, against the reference (None without one)
    max_ulps_apart: float        # worst disagreement with the first config, in output ulps
    outputs: list

    def table(self) -> str:
        rows = ["| config | max abs error vs float64 |", "|---|---|"]
        for cfg, err in zip(self.configs, self.max_abs_error):
            rows.append(f"| {cfg} | {'-' if err is None else f'{err:.3g}'} |")
        return "\n".join(rows)


def check_configs(run: Callable, configs: Sequence, reference: np.ndarray | None = None, *,
                  abs_tol=0.0, ulps: float = 1.0) -> ConfigCheck:
    """Run `run(config)` for every config and assert the outputs are numerically equivalent.

    `reference`: float64 exact-ish result; `abs_tol`: elementwise accumulation bound (e.g.
    `accumulation_bound(a, b)`); `ulps`: allowed disagreement between configs in units of the
    output dtype.  Raises AssertionError naming the first offending config and element.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("check_configs: 'configs' is empty")
    outputs, errors = [], []
    abs_tol = np.asarray(abs_tol, np.float64)
    for cfg in configs:
        out = np.asarray(run(cfg))
        outputs.append(out)
        if reference is not None:
            if out.shape != reference.shape:
                raise AssertionError(f"config {cfg}: output shape {out.shape} != reference shape {reference.shape}")
            o64 = out.astype(np.float64)
            err = np.abs(o64 - reference)
            allowed = abs_tol + 0.5 * np.maximum(_spacing(o64, out.dtype), _spacing(reference, out.dtype))
            _assert_within(err, allowed, f"config {cfg} vs float64 reference", o64, reference,
                           f"abs_tol (now {_describe(abs_tol)}) is the accumulation bound added to half an ulp")
            errors.append(float(err.max()) if err.size else 0.0)
        else:
            errors.append(None)
    first = outputs[0].astype(np.float64)
    worst = 0.0
    for cfg, out in zip(configs[1:], outputs[1:]):
        o64 = out.astype(np.float64)
        unit = np.maximum(_spacing(o64, out.dtype), _spacing(first, out.dtype))
        diff = np.abs(o64 - first)
        _assert_within(diff, ulps * unit + 2 * abs_tol, f"config {cfg} vs config {configs[0]}", o64, first,
                       f"allowed: ulps={ulps} output ulps + 2*abs_tol (now {_describe(abs_tol)})", unit, ulps)
        if diff.size:
            worst = max(worst, float(np.max(np.where(diff > 2 * abs_tol, diff / unit, 0.0))))
    return ConfigCheck(configs, errors, worst, outputs)


def _describe(tol) -> str:
    tol = np.asarray(tol)
    return f"{float(tol.reshape(-1)[0]):.3g}" if tol.size == 1 else f"up to {float(tol.max()):.3g}"


def _assert_within(err, allowed, what, got, want, rule, unit=None, ulps=None):
    """Fail naming the worst element: its index (plain ints), both values, how far apart they
    are against the bound, and the tolerance argument that would accept it."""
    allowed = np.broadcast_to(allowed, err.shape)
    bad = ~(err <= allowed)
    if not bad.any():
        return
    excess = np.where(bad, err - allowed, -np.inf)
    flat = int(np.argmax(excess))
    idx = tuple(int(i) for i in np.unravel_index(flat, err.shape))
    e, a = float(err[idx]), float(allowed[idx])
    hint = f"abs_tol >= {e:.3g} at that element would accept it"
    if unit is not None and float(unit[idx]) > 0:
        hint = f"ulps >= {e / float(unit[idx]):.1f} or " + hint
    raise AssertionError(f"{what}: {int(bad.sum())} element(s) out of tolerance; worst at index {idx}: "
                         f"got {float(got[idx])!r}, expected {float(want[idx])!r}, {e:.3g} apart > allowed {a:.3g} "
                         f"({rule}); {hint}")


# ---------------------------------------------------------------- Triton's benchmarking helpers
def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean", device=None):
    """Triton's `do_bench_cudagraph`: as do_bench, with `fn`'s launches replayed from one CUDA
    graph, so HypoGPU charges none of their launch overheads (the few microseconds each launch
    costs the host); a `fn` that launches no minitriton kernel is timed on the CPU as do_bench
    times it."""
    return do_bench(fn, warmup=0, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                    return_mode=return_mode, device=device, graph=True)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean", device=None,
             n_warmup=None, n_repeat=None, graph=False):
    """Triton's `do_bench`: milliseconds a call of `fn` takes.  The minitriton launches `fn` makes
    are traced (nothing runs on the CPU) and timed on HypoGPU, `rep` milliseconds' worth of runs
    (or `n_repeat`) with its measurement noise.  A `fn` that launches no minitriton kernel is
    timed as it runs on this CPU, as Triton times whatever `fn` does: one call to estimate, then
    `n_warmup` and `n_repeat` calls (by default as many as `warmup` and `rep` milliseconds
    hold).  `grad_to_none` is accepted for ported code; `quantiles` (e.g. [0.5, 0.2, 0.8]) and
    `return_mode` ("min", "max", "mean", "median", "all") choose what is returned, as in Triton;
    `graph`: the launches replayed from a CUDA graph (do_bench_cudagraph)."""
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"do_bench: return_mode must be min, max, mean, median or all, got {return_mode!r}")
    for name, n in (("n_warmup", n_warmup), ("n_repeat", n_repeat)):
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise ValueError(f"do_bench: {name} must be a count of calls (an int >= 0), got {n!r}")
    device = device or HypoGPU()
    start = time.perf_counter()
    profiles = device.trace(fn)
    if profiles:
        ms = device.time(profiles) * 1e3
        if graph:
            ms -= len(profiles) * device.spec.launch_overhead_s * 1e3
        runs = n_repeat or max(1, min(1000, int(rep / max(ms, 1e-6))))
        rng = np.random.default_rng(0)
        times = ms * np.exp(0.015 * rng.standard_normal(runs))
    else:
        estimate = max((time.perf_counter() - start) * 1e3, 1e-6)
        for _ in range(max(1, int(warmup / estimate)) if n_warmup is None else n_warmup):
            fn()
        times = []
        for _ in range(max(1, min(10_000, int(rep / estimate))) if n_repeat is None else n_repeat):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
        times = np.array(times or [estimate])
    if quantiles is not None:
        out = [float(q) for q in np.quantile(times, quantiles)]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times.tolist()
    return float(getattr(np, return_mode)(times))


@dataclasses.dataclass
class Benchmark:
    """Triton's `triton.testing.Benchmark`: one table (and plot) of a function over x values
    and lines."""
    x_names: list
    x_vals: list
    line_arg: str
    line_vals: list
    line_names: list
    plot_name: str
    args: dict
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    styles: list | None = None


class Mark:
    """What `@perf_report` makes: `.run(print_data=True, show_plots=False, save_path=None)`."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks if isinstance(benchmarks, (list, tuple)) else [benchmarks]

    def _table(self, bench: Benchmark):
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            point = dict(zip(bench.x_names, xs))
            row = list(xs)
            for line in bench.line_vals:
                out = self.fn(**point, **{bench.line_arg: line}, **bench.args)
                row.append(out[0] if isinstance(out, (list, tuple)) else out)
            rows.append(row)
        return [*bench.x_names, *bench.line_names], rows

    def run(self, print_data=False, show_plots=False, save_path=None, return_df=False):
        tables = []
        for bench in self.benchmarks:
            header, rows = self._table(bench)
            tables.append((header, rows))
            text = bench.plot_name + ":\n" + "\n".join(
                ["  ".join(f"{h:>14}" for h in header)] +
                ["  ".join(f"{v:>14.4g}" if isinstance(v, float) else f"{v!s:>14}" for v in r) for r in rows])
            if print_data:
                print(text)
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w") as f:
                    f.write(",".join(map(str, header)) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
            if show_plots or save_path:
                _plot(bench, header, rows, save_path, show_plots)
        return tables if return_df else None


def _plot(bench, header, rows, save_path, show):
    try:
        import matplotlib
        if not show:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return  # tables only without matplotlib (an optional extra)
    fig, ax = plt.subplots()
    xs = [r[0] for r in rows]
    for j, name in enumerate(bench.line_names):
        style = bench.styles[j] if bench.styles else None
        ax.plot(xs, [r[len(bench.x_names) + j] for r in rows], label=name,
                color=style[0] if style else None, linestyle=style[1] if style else None)
    ax.set(xlabel=bench.xlabel or bench.x_names[0], ylabel=bench.ylabel, title=bench.plot_name)
    if bench.x_log:
        ax.set_xscale("log")
    if bench.y_log:
        ax.set_yscale("log")
    ax.legend()
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show:
        plt.show()
    plt.close(fig)


def perf_report(benchmarks):
    """Triton's `@triton.testing.perf_report(Benchmark(...))`."""
    return lambda fn: Mark(fn, benchmarks)


# ---------------------------------------------------------------- Triton's device figures
# Performance models written for Triton (its old matmul_perf_model, libraries' early_config_prune)
# read the GPU's peaks from these; here they are HypoGPU's (hypogpu/spec.py), by Triton's formulas.
_TENSOR_CORE_OPS = {"fp32": 256, "int32": 256, "fp16": 512, "bf16": 512, "int16": 512, "int8": 1024,
                    "fp8e4nv": 1024, "fp8e4b15": 1024, "fp8e5": 1024}     # per clock and sub-core
_SIMD_OPS = {"fp32": 32, "fp16": 64, "bf16": 64}


def _type_name(dtype, what) -> str:
    """A tl dtype, a numpy type or a name ("float16", "fp16") as the tl dtype's name."""
    dtype = D.constexpr_value(dtype)
    if isinstance(dtype, D.dtype):
        return dtype.name
    named = D.annotated_type(dtype) if isinstance(dtype, str) else None
    if named is not None:
        return named.name
    try:
        return D.from_numpy(dtype).name
    except TypeError:
        raise TypeError(f"{what}: dtype must be a tl dtype, a numpy type or a type name, got {dtype!r}") from None


def _peak(table, dtype, clock_rate, what) -> float:
    name = _type_name(dtype, what)
    if name not in table:
        raise RuntimeError(f"{what}: dtype not supported: {name} (supported: {', '.join(table)})")
    return A100.sms * A100.subpartitions * float(clock_rate) * table[name] * 1e-9


def get_max_tensorcore_tflops(dtype, clock_rate, device=None) -> float:
    """Tensor-core TFLOP/s at `clock_rate` kHz (HypoGPU's 1.41e6 gives 312 for fp16)."""
    return _peak(_TENSOR_CORE_OPS, dtype, clock_rate, "get_max_tensorcore_tflops")


def get_max_simd_tflops(dtype, clock_rate, device=None) -> float:
    """TFLOP/s of ordinary (non-tensor-core) arithmetic at `clock_rate` kHz."""
    return _peak(_SIMD_OPS, dtype, clock_rate, "get_max_simd_tflops")


def get_dram_gbps(device=None) -> float:
    """DRAM bandwidth in GB/s, from the memory clock and bus width as Triton computes it."""
    return A100.mem_clock_hz / 1e3 * A100.mem_bus_width_bits * 2 / 1e6 / 8


_NVSMI = {"clocks.max.sm": A100.clock_hz / 1e6, "clocks.sm": A100.clock_hz / 1e6,
          "clocks.current.sm": A100.clock_hz / 1e6, "clocks.applications.graphics": A100.clock_hz / 1e6,
          "clocks.max.mem": A100.mem_clock_hz / 1e6, "clocks.max.memory": A100.mem_clock_hz / 1e6,
          "clocks.mem": A100.mem_clock_hz / 1e6, "clocks.current.memory": A100.mem_clock_hz / 1e6,
          "clocks.applications.memory": A100.mem_clock_hz / 1e6}


def nvsmi(attrs) -> list:
    """What `nvidia-smi --query-gpu=...` says of HypoGPU's clocks, in MHz, one int per attribute."""
    unknown = [a for a in attrs if a not in _NVSMI]
    if unknown:
        raise ValueError(f"nvsmi: {unknown[0]!r} is not known here; known: {', '.join(_NVSMI)}")
    return [int(_NVSMI[a]) for a in attrs]


@contextlib.contextmanager
def set_gpu_clock(ref_sm_clock=1350, ref_mem_clock=1215):
    """Triton locks the GPU's clocks for a benchmark and yields its peaks at them (TFLOP/s of
    fp32-accumulated tensor-core work, GB/s); HypoGPU's clocks never move, so nothing is locked."""
    yield (1e-6 * 2 * A100.sms * A100.subpartitions * 256 * ref_sm_clock,
           A100.mem_bus_width_bits / 8 * 2 * ref_mem_clock * 1e-3)
