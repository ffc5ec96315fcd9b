"""Transfer sources: what the same kernel measured on other GPUs, matched to a task's configs.

A kernel tuned on one GPU is tuned again on the next, and the other GPU's landscape often says a
lot about the new one (within a vendor the rankings of a convolution agree with a Spearman
correlation around 0.9), sometimes nothing or worse (across vendors, 0.1-0.4).  A source is read
once into a table of times by config (the task's parameter values, in its order); whether it
predicts this GPU is for the tuner to find out by measuring (tuners/transfer.py): nothing here
trusts a source.

Sources, each of the same kernel on another GPU:
- a path (str or os.PathLike) to a Kernel Tuner cache file, read as the Replay device reads it
  (data only: a bad file raises ReplayFileError naming it);
- a Replay device (minitriton.replay.Replay);
- records: a RecordLog, or a list of Record (ours, from `tune(..., log=)` or the cache).

Configs are matched by parameter values.  A source whose parameters are not the task's, by name,
is refused with a ValueError naming the parameters it lacks and those the task does not have; a
source value the task's space does not hold (or the reverse) simply matches nothing.  Launch
options our Configs always carry (num_warps, num_stages) count as parameters of a record only
where the task tunes them.
"""
from __future__ import annotations

import dataclasses
import math
import os
import statistics

import numpy as np

from minitriton.configs import LAUNCH_KNOBS, as_config
from minitriton.replay import Replay
from .records import Record, RecordLog


@dataclasses.dataclass
class Source:
    """One other GPU's measurements: `times[point]` in seconds (inf: the config failed there),
    `point` the task's parameter values in task order; `name` says where they came from."""
    name: str
    times: dict

    def ranks(self) -> dict:
        """Each point's place in this source's order, 0 (its fastest) to 1 (its slowest or failed)."""
        order = sorted(self.times, key=lambda p: (self.times[p], str(p)))
        n = max(len(order) - 1, 1)
        return {p: i / n for i, p in enumerate(order)}


def describe_source(source) -> str:
    """A source as text: its path, its device, or how many records (part of a cache key)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, Replay):
        return repr(source)
    path = getattr(source, "path", None)
    if path is not None:
        return str(path)
    return f"{len(source)} records" if isinstance(source, (list, tuple)) else type(source).__name__


def _mismatch(what: str, theirs, ours) -> str | None:
    lacks, extra = [k for k in ours if k not in theirs], [k for k in theirs if k not in ours]
    if not lacks and not extra:
        return None
    said = []
    if lacks:
        said.append(f"lacks the task's {', '.join(lacks)}")
    if extra:
        said.append(f"has {', '.join(extra)}, which the task does not tune")
    return f"transfer: the source {what} {' and '.join(said)} (configs are matched by parameter values)"


def _from_replay(device: Replay, names, what) -> Source:
    problem = _mismatch(what, device.params, names)
    if problem:
        raise ValueError(problem)
    order = [device.params.index(k) for k in names]
    times = {}
    for point, entry in device.records.items():
        cost = device.cost(entry)
        times[tuple(point[i] for i in order)] = math.inf if cost is None else cost
    return Source(what, times)


def _from_records(records, names, what) -> Source:
    records = [r for r in records if not getattr(r, "again", False)]
    if not records:
        raise ValueError(f"transfer: the source {what} holds no records")
    seen = set()
    for r in records:
        c = as_config(r.config)
        seen |= set(c.kwargs) | {k for k in LAUNCH_KNOBS if k in names}
    problem = _mismatch(what, sorted(seen), names)
    if problem:
        raise ValueError(problem)
    samples = {}
    for r in records:
        kw = as_config(r.config).all_kwargs()
        if all(k in kw for k in names):
            samples.setdefault(tuple(kw[k] for k in names), []).append(r.time if r.ok else math.inf)
    return Source(what, {p: statistics.median(ts) for p, ts in samples.items()})


def read_sources(transfer, names) -> list[Source]:
    """`transfer` (a list of sources, see above) read and matched to parameters `names`."""
    if transfer is None:
        return []
    if isinstance(transfer, (str, os.PathLike, Replay, RecordLog)):
        transfer = [transfer]
    try:
        items = list(transfer)
    except TypeError:
        raise ValueError(f"transfer: expected a list of sources (cache file paths, Replay devices or records), "
                         f"got {type(transfer).__name__}") from None
    if items and all(isinstance(r, Record) for r in items):
        items = [items]              # one list of records is one source
    out = []
    names = list(names)
    for item in items:
        what = describe_source(item)
        if isinstance(item, (str, os.PathLike)):
            out.append(_from_replay(Replay(item), names, what))
        elif isinstance(item, Replay):
            out.append(_from_replay(item, names, what))
        elif isinstance(item, RecordLog):
            out.append(_from_records(item.read(), names, what))
        elif isinstance(item, (list, tuple)) and all(isinstance(r, Record) for r in item):
            out.append(_from_records(item, names, what))
        else:
            raise ValueError(f"transfer: a source must be a Kernel Tuner cache file's path, a Replay device, a "
                             f"RecordLog or a list of Record, got {type(item).__name__}: {str(item)[:80]}")
    return out


def spearman(a, b) -> float:
    """Rank correlation of two equal-length sequences (ties get their mean rank); 0 for fewer than 3."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 3:
        return 0.0
    ra, rb = _rank(a), _rank(b)
    sa, sb = ra.std(), rb.std()
    return float(((ra - ra.mean()) * (rb - rb.mean())).mean() / (sa * sb)) if sa > 0 and sb > 0 else 0.0


def _rank(x):
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(x.size)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, ranks)
    return (sums / counts)[inverse]
