"""A look inside one tuning (`python -m autotune show KEY`): every config measured, its samples
and error, the best-so-far curve, and whether the winner stands out of the noise."""
from __future__ import annotations

import statistics

import numpy as np

from .records import latest_per_config

NOISE_FLOOR = 0.03  # relative gap under which two single-sample timings cannot be told apart


def _us(t: float) -> str:
    return "-" if t == float("inf") else f"{t * 1e6:.2f}"


def best_so_far(records) -> list:
    """(measurement number, best time so far) at every improvement."""
    out, best = [], float("inf")
    for i, r in enumerate(records, 1):
        if r.time < best:
            best = r.time
            out.append((i, best))
    return out


def noise(records) -> float:
    """The relative spread of repeated samples (their relative standard deviation), or the
    floor when no config was timed more than once."""
    spreads = [statistics.stdev(r.samples) / statistics.fmean(r.samples)
               for r in records if len(r.samples) > 1 and statistics.fmean(r.samples) > 0]
    return max(statistics.median(spreads) if spreads else 0.0, NOISE_FLOOR / 2)


def verdict(records) -> str:
    """Whether the winner is faster than the runner-up by more than the noise (judged by the
    re-timed configs' new medians when the choice was settled by re-timing)."""
    timed = {}
    for r in records:
        if r.again and r.ok:
            timed.setdefault(r.config, []).extend(r.samples)
    if len(timed) >= 2:
        (m0, c0), (m1, _) = sorted(((statistics.median(v), c) for c, v in timed.items()), key=lambda x: x[0])[:2]
        return (f"settled by re-timing the {len(timed)} configs closest to the fastest: {c0} won by its median, "
                f"{m1 / m0 - 1:.1%} ahead of the runner-up")
    good = sorted((r for r in latest_per_config(records) if r.ok), key=lambda r: r.time)
    if len(good) < 2:
        return "only one config ran: nothing to compare"
    first, second = good[0], good[1]
    gap = second.time / first.time - 1
    band = 2 * noise(records)
    if gap > band:
        return f"the winner stands out: {gap:.1%} ahead of the runner-up, noise about {band / 2:.1%}"
    close = [r for r in good if r.time / first.time - 1 <= band]
    return (f"the winner does not stand out of the noise: {len(close)} configs within {band:.1%} of it "
            f"(runner-up {gap:.1%} behind); measure the top {len(close)} again with more repeats "
            f"(repeats=5) before trusting the choice")


def show(entry: dict, records: list, plot: str | None = None, knobs=None) -> str:
    c = entry["config"]
    lines = [f"key       {entry['key']}",
             f"kernel    {entry.get('kernel', '?')}{entry.get('args', '')}",
             f"device    {entry.get('device', '?')}",
             f"settings  {entry.get('settings')}",
             f"chosen    {c['kwargs']} num_warps={c['num_warps']} num_stages={c['num_stages']}  "
             f"{_us(entry.get('time', float('nan')))} µs",
             f"measured  {entry.get('measured', '?')} configs, {entry.get('simulated_seconds', 0):.1f} s simulated"]
    lines += [f"dropped   {cfg}: {why}" for cfg, why in entry.get("failed_on_cpu", [])]
    settled = entry.get("remeasured") or {}
    if settled.get("contenders"):
        lines.append(f"settled   {settled['contenders']} configs the noise ({100 * settled.get('noise', 0):.1f} %) could "
                     f"not separate from the fastest were timed again ({settled.get('seconds', 0):.2f} s simulated); "
                     + (f"their new medians chose {settled['after']} over {settled['before']}" if settled.get("changed")
                        else "the fastest single time stood"))
    lines.append("")
    if not records:
        lines.append("no measurement records for this key (cleared with --records, or tuned elsewhere)")
        return "\n".join(lines)
    lines.append(f"{'#':>4}  {'median µs':>10}  {'samples':>7}  {'spread':>7}  config / error")
    for i, r in enumerate(records, 1):
        spread = f"{(max(r.samples) - min(r.samples)) / r.time:.1%}" if len(r.samples) > 1 else "-"
        what = f"{r.config}" + (f"  ERROR {r.error}" if r.error else "") + ("  (timed again)" if r.again else "")
        lines.append(f"{i:>4}  {_us(r.time):>10}  {len(r.samples):>7}  {spread:>7}  {what}")
    curve = best_so_far([r for r in records if not r.again])
    lines += ["", "best so far: " + "  ".join(f"#{n}: {_us(t)} µs" for n, t in curve), "", verdict(records)]
    if plot:
        lines.append(draw(records, plot, knobs))
    return "\n".join(lines)


def _in_order(value):
    """Knob values sorted as values (256 before 1024), anything else after them as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, str(value))


def draw(records, path: str, knobs=None) -> str:
    """The best-so-far curve and a heatmap of the best time over two knobs, into `path`."""
    ok = [r for r in records if r.ok]
    names = sorted({k for r in ok for k in r.config.all_kwargs()})
    if knobs is None:
        varied = [k for k in names if len({r.config.all_kwargs().get(k) for r in ok}) > 1]
        knobs = (varied + names)[:2]
    else:
        unknown = [k for k in knobs if k not in names]
        if unknown:
            raise ValueError(f"--knobs {' '.join(knobs)}: no config has {', '.join(map(repr, unknown))}; "
                             f"the knobs are {', '.join(names)}")
    try:   # (the plot extra: matplotlib is optional)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install -e '.[plot]'") from None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    steps = list(range(1, len(records) + 1))
    best, b = [], float("inf")
    for r in records:
        b = min(b, r.time)
        best.append(b * 1e6)
    left.plot(steps, best, drawstyle="steps-post")
    left.set(xlabel="measurements", ylabel="best time so far (µs)", title="best so far")
    if len(knobs) == 2 and ok:
        xs = sorted({r.config.all_kwargs().get(knobs[0]) for r in ok}, key=_in_order)
        ys = sorted({r.config.all_kwargs().get(knobs[1]) for r in ok}, key=_in_order)
        grid = np.full((len(ys), len(xs)), np.nan)
        for r in ok:
            kw = r.config.all_kwargs()
            i, j = ys.index(kw.get(knobs[1])), xs.index(kw.get(knobs[0]))
            grid[i, j] = np.nanmin([grid[i, j], r.time * 1e6])
        im = right.imshow(grid, origin="lower", aspect="auto")
        right.set_xticks(range(len(xs)), labels=[str(x) for x in xs])   # a label per value, in value order
        right.set_yticks(range(len(ys)), labels=[str(y) for y in ys])
        right.set(xlabel=knobs[0], ylabel=knobs[1], title="best µs")
        fig.colorbar(im, ax=right)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return f"plot written to {path}"
