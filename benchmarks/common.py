"""Shared benchmark plumbing: timing, markdown tables, and refreshing docs/benchmarks.md and the
README's summary of it."""
from __future__ import annotations

import argparse
import ast
import ctypes
import multiprocessing
import os
import pathlib
import platform
import re
import statistics
import sys
import time
import typing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from autotune import tune
from minitriton.hypogpu import Measurer

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCHMARKS_PAGE = ROOT / "docs" / "benchmarks.md"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run (under a minute)")
    p.add_argument("--update-readme", action="store_true", help="write the table into docs/benchmarks.md (and the README's summary)")
    return p


def main(doc: str, name: str, make_text, argv=None):
    """The command line every benchmark shares: print the text `make_text(quick)` makes, and
    with --update-readme put it in its <!-- bench:name --> block of docs/benchmarks.md."""
    args = parser(doc).parse_args(argv)
    text = make_text(args.quick)
    print(text)
    if args.update_readme:
        update_readme(name, text)


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Median wall time of fn() in seconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def warm_allocator() -> str:
    """Keep freed memory in this process (glibc: arrays up to its limit taken from the heap, no
    heap given back), so that a timing does not depend on what ran before it.  glibc's default maps a large
    array afresh, faulting its pages in, until a free raises its threshold: numpy's baseline of
    one row was then 2x slower or not, depending on the rows before it.  Returns what was done."""
    if platform.system() != "Linux":
        return "allocator as it is"
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return "allocator as it is"
    m_trim_threshold, m_mmap_threshold = -1, -3     # mallopt's parameters (malloc.h)
    largest = 4 * 1024 * 1024 * ctypes.sizeof(ctypes.c_long)    # the mmap threshold's upper limit
    if libc.mallopt(m_mmap_threshold, largest) != 1 or libc.mallopt(m_trim_threshold, 1 << 30) != 1:
        return "allocator as it is"
    return f"glibc keeping freed memory (arrays up to {largest >> 20} MB from the heap, none given back)"


def process_pool():
    """A pool of one worker process per core ($MINITRITON_BENCH_WORKERS: as many as it says),
    started fresh ("spawn"): a forked copy of a process that already runs threads (BLAS, numba,
    a test runner's) can inherit a lock held by a thread that does not exist in the copy, and hang."""
    said = os.environ.get("MINITRITON_BENCH_WORKERS", "")
    if said and not (said.isdigit() and int(said) > 0):
        raise SystemExit(f"MINITRITON_BENCH_WORKERS must be a positive number of processes, got {said!r}")
    workers = int(said) if said else os.cpu_count() or 1
    # one BLAS thread per worker: the workers already fill the cores, and the Gaussian process's
    # small solves ran three to four times slower with BLAS threads contending for them
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def markdown(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


SHIPPED_DATASETS = ROOT / "datasets"


def datasets() -> tuple[list[pathlib.Path], str]:
    """The recorded landscapes to run on, and a sentence saying where they came from.

    $MINITRITON_DATASETS names the folder of the full set; else ../shared/datasets beside the
    clone; else the three files the project ships (datasets/README.md says where the rest are)."""
    named = os.environ.get("MINITRITON_DATASETS")
    if named:
        folder = pathlib.Path(named).expanduser()
        if not folder.is_dir():
            raise SystemExit(f"MINITRITON_DATASETS={named!r} is not a folder")
        where = f"the recorded landscapes in {folder} ($MINITRITON_DATASETS)"
    elif (ROOT.parent / "shared" / "datasets").is_dir():
        folder = ROOT.parent / "shared" / "datasets"
        where = "the recorded landscapes in ../shared/datasets"
    else:
        folder = SHIPPED_DATASETS
        where = (f"only the {len(list(folder.glob('*.json*')))} landscapes shipped in datasets/: for the full set "
                 f"(FAIR Benchmark Hub for Auto-Tuning, DOI 10.5281/zenodo.15364124) set MINITRITON_DATASETS")
    files = sorted(p for p in folder.glob("*.json*") if p.is_file())
    if not files:
        raise SystemExit(f"no recorded landscapes (*.json, *.json.gz) in {folder}")
    return files, where


def machine() -> str:
    """Where a table was measured, BLAS included: BLAS's kernel decides the last bits of a GEMM."""
    return f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}{blas()}"


def blas() -> str:
    """', OpenBLAS 0.3.31 (SkylakeX kernel)' or as much of it as this numpy tells."""
    try:
        import threadpoolctl  # the bench extra: which kernel BLAS picked for this CPU
        libs = [lib for lib in threadpoolctl.threadpool_info() if lib.get("user_api") == "blas"]
        # numpy's own BLAS first (scipy or xgboost may have loaded another)
        libs.sort(key=lambda lib: "numpy" not in (lib.get("filepath") or ""))
        if libs:
            lib = libs[0]
            arch = f" ({lib['architecture']} kernel)" if lib.get("architecture") else ""
            return f", {lib.get('internal_api', 'BLAS')} {lib.get('version') or ''}".rstrip() + arch
    except ImportError:
        pass
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f", {info['name']} {info.get('version', '')}".rstrip()
    except (TypeError, KeyError):
        return ""


def update_readme(name: str, text: str):
    """Put a benchmark's text in its <!-- bench:name --> block of docs/benchmarks.md, then refresh
    the README's summary of every block."""
    src = BENCHMARKS_PAGE.read_text()
    pattern = re.compile(rf"(<!-- bench:{name} -->\n).*?(<!-- /bench:{name} -->)", re.S)
    if not pattern.search(src):
        raise SystemExit(f"docs/benchmarks.md has no <!-- bench:{name} --> block to update")
    BENCHMARKS_PAGE.write_text(pattern.sub(lambda m: m.group(1) + text.rstrip() + "\n" + m.group(2), src))
    refresh_summary()


def refresh_summary():
    """The README's table of every benchmark: what it measures (its docstring's first line) and
    its headline (the first line of its current table's text that states a goal), linked to the
    full table."""
    page = BENCHMARKS_PAGE.read_text()
    rows = []
    for m in re.finditer(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", page, re.S):
        name, body = m.group(1), m.group(2)
        headline = next((line.strip() for line in body.splitlines() if re.match(r"\**Goals?\b", line.strip())), "")
        rows.append((f"[{name}](docs/benchmarks.md#{name})", _purpose(name), headline or "see its table"))
    table = markdown(["benchmark", "what it measures", "headline"], rows)
    readme = README.read_text()
    pattern = re.compile(r"(<!-- summary -->\n).*?(<!-- /summary -->)", re.S)
    if not pattern.search(readme):
        raise SystemExit("README.md has no <!-- summary --> block to update")
    README.write_text(pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), readme))


def _purpose(name: str) -> str:
    """The first sentence of benchmarks/NAME.py's docstring, read without importing it."""
    try:
        doc = ast.get_docstring(ast.parse((ROOT / "benchmarks" / f"{name}.py").read_text())) or ""
    except (OSError, SyntaxError):
        return ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    return re.split(r"(?<=[^.])\.(\s|$)", first)[0]


class Outcome(typing.NamedTuple):
    """One seeded tuning, scored by the oracle: what the search found and what the user gets."""
    curve: object     # the best true time found so far as a share of the optimum, per measurement
    wall: float       # the tuning's wall seconds
    chosen: float     # the chosen config's true share of the optimum (after re-timing settles it)
    found: float      # the best config measured, as a share of the optimum (the curve's last value)
    retime: float     # share of the simulated tuning time spent settling the choice


def share_curve(task, tuner, budget: int, seed: int, truth, **tune_kw) -> Outcome:
    """The best true time found so far as a share of the optimum, after each measurement
    (padded with its last value when the tuner stops early), the tuning's wall seconds, and the
    true share of the config it chose."""
    t = time.perf_counter()
    result = tune(task, tuner, budget=budget, seed=seed, progress=False, **tune_kw)
    wall = time.perf_counter() - t
    times = np.array([truth.time_of(r.config) for r in result.history])
    best = float(np.min(truth.times))
    running = best / np.minimum.accumulate(times)
    curve = np.pad(running, (0, budget - len(running)), mode="edge")
    spent = result.remeasured.get("seconds", 0.0) if result.remeasured else 0.0
    return Outcome(curve, wall, best / truth.time_of(result.best_config), float(curve[-1]),
                   spent / result.simulated_seconds if result.simulated_seconds else 0.0)


def to_reach(curve, share=0.99):
    """Measurements until the curve first reaches `share` of the optimum (None if never)."""
    hit = np.flatnonzero(curve >= share)
    return int(hit[0]) + 1 if hit.size else None


def plot_curves(curves: dict, path: str, ylabel="% of optimum", marks: dict | None = None):
    """curves[(panel, label)] = array over measurements: one panel per task, one line per tuner;
    marks[(panel, label)] = (measurements, shares): points quoted from elsewhere, drawn as markers."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = list(dict.fromkeys(p for p, _ in curves))
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.5), sharey=True)
    for ax, panel in zip(np.atleast_1d(axes), panels):
        for (p, label), curve in curves.items():
            if p == panel:
                ax.plot(np.arange(1, len(curve) + 1), 100 * np.asarray(curve), label=label)
        for (p, label), (xs, ys) in (marks or {}).items():
            if p == panel:
                ax.plot(xs, 100 * np.asarray(ys), "k*", label=label)
        ax.set(xscale="log", title=panel, xlabel="measurements")
    np.atleast_1d(axes)[0].set_ylabel(ylabel)
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def pop_flag(argv, flag: str) -> tuple[bool, list]:
    """(whether `flag` is among the arguments (sys.argv's when argv is None), the others)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return flag in argv, [a for a in argv if a != flag]


def pop_count(argv, option: str) -> tuple[int | None, list]:
    """(the positive int given after `option`, or None if it is absent; the other arguments)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if option not in argv:
        return None, argv
    i = argv.index(option)
    value = argv[i + 1] if i + 1 < len(argv) else ""
    if not (value.isdigit() and int(value) > 0):
        raise SystemExit(f"{option} needs a positive whole number, got {value!r}")
    return int(value), argv[:i] + argv[i + 2:]


def main_with_plot(doc: str, name: str, run, argv=None):
    """`main` for benchmarks that can draw their curves: `--plot FILE.png` goes to run(quick, plot)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    plot = None
    if "--plot" in argv:
        i = argv.index("--plot")
        if i + 1 >= len(argv):
            raise SystemExit("--plot needs a file name (FILE.png)")
        plot = argv[i + 1]
        del argv[i:i + 2]
    main(doc, name, lambda quick: run(quick, plot), argv)


def tuner_cpu(task, tuner, budget: int, seed: int = 0):
    """(the tuner's own CPU seconds per 64 measurements, the tuning's wall seconds): the
    measuring's CPU time is counted apart and subtracted."""

    class Timed(Measurer):
        spent = 0.0

        def measure(self, *a, **kw):
            t = time.process_time()
            m = super().measure(*a, **kw)
            Timed.spent += time.process_time() - t
            return m
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    tune(task, tuner, budget=budget, seed=seed, measurer=Timed(task.device, seed=seed), progress=False)
    cpu, wall = time.process_time() - t_cpu - Timed.spent, time.perf_counter() - t_wall
    return cpu / budget * 64, wall
