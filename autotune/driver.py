"""The one driver loop: ask the tuner, measure, record, repeat, within the budget.

Tuners only propose configs and learn from results; this loop owns the Measurer (noise and
simulated time), the budget, the records log, resuming from earlier records, the progress
display and the error when nothing could run.
"""
from __future__ import annotations

import dataclasses
import sys
import time

from .records import Record, RecordLog, latest_per_config
from .space import as_config
from .tuners import make_tuner


class NoValidConfig(RuntimeError):
    """Every config the tuner tried failed (e.g. all out of resources)."""


@dataclasses.dataclass
class TuneResult:
    best_config: object
    best_time: float            # the measured (noisy) time of the best config
    history: list               # Records in measurement order (resumed ones first)
    simulated_seconds: float    # measuring cost of this run (compile + timed runs)
    wall_seconds: float

    @property
    def measured(self) -> int:
        return len(self.history)


class Progress:
    """A one-line progress bar on stderr (for long tunings; off by default in the decorator)."""

    def __init__(self, total, label, enabled):
        self.total, self.label, self.enabled, self.last = total, label, enabled, 0.0

    def update(self, done, best):
        if not self.enabled or (time.monotonic() - self.last < 0.2 and done < self.total):
            return
        self.last = time.monotonic()
        width = 30
        filled = int(width * done / max(self.total, 1))
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}"
                         f" best {best * 1e6:.1f} µs")
        if done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def tune(task, tuner="random", budget: int | None = None, seed: int = 0, measurer=None, configs=None,
         batch_size: int = 16, repeats: int = 1, log: RecordLog | None = None, key: str = "", resume=(),
         progress: bool = False) -> TuneResult:
    """Tune `task` (a Task) and return the best config found.

    `tuner`: "exhaustive" (needs `configs` or walks the whole space), "random", "grid", or a
    Tuner; `budget`: most measurements (default: everything the tuner proposes); `log`: records
    are appended here as they are measured; `resume`: records of an earlier, interrupted run:
    when the tuner proposes a config they hold, the record stands in for measuring it (the
    noise stream advanced as measuring did), so a resumed tuning takes exactly the steps an
    uninterrupted one takes, and a config recorded twice counts once."""
    if budget is not None and budget < 1:
        raise ValueError(f"tune: budget must be a positive number of measurements, got {budget}")
    if measurer is None:
        from minitriton.hypogpu import Measurer
        measurer = Measurer(task.device, seed=seed)
    search = make_tuner(tuner, space=task.space, configs=configs, seed=seed)
    pending = {r.config: r for r in latest_per_config(list(resume))}
    history = []
    limit = budget if budget is not None else (len(configs) if configs is not None else task.space.size)
    bar = Progress(limit, f"tuning {task.name}", progress)
    start_clock, start = measurer.clock, time.perf_counter()
    best = min((r.time for r in history), default=float("inf"))
    while len(history) < limit:
        batch = search.next_batch(min(batch_size, limit - len(history)))
        if not batch:
            break
        done = []
        for cfg in batch:
            cfg = as_config(cfg)
            r = pending.pop(cfg, None)
            if r is not None:
                getattr(measurer, "replay", lambda samples: None)(r.samples)
            else:
                m = measurer.measure(task, cfg, repeats=repeats)
                r = Record(cfg, m.samples, m.error, m.cost, kernel=task.name, key=key, device=repr(task.device))
                if log is not None:
                    log.append(r)
            done.append(r)
            history.append(r)
            best = min(best, r.time)
            bar.update(len(history), best)
        search.update(done)
    good = [r for r in history if r.ok]
    if not good:
        by_reason = {}
        for r in history:
            if r.error:
                by_reason.setdefault(r.error, r.config)
        reasons = [f"{c} -> {e}" for e, c in list(by_reason.items())[:5]]
        raise NoValidConfig(f"no config of {task.name} could run (key {key or '-'}; {len(history)} tried): "
                            + "; ".join(reasons))
    winner = min(good, key=lambda r: r.time)
    return TuneResult(winner.config, winner.time, history, measurer.clock - start_clock,
                      time.perf_counter() - start)
