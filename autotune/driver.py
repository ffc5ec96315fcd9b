"""The one driver loop: ask the tuner, measure, record, repeat, within the budget.

Tuners only propose configs and learn from results; this loop owns the Measurer (noise and
simulated time), the budget, the records log, resuming from earlier records, the progress
display and the error when nothing could run.
"""
from __future__ import annotations

import dataclasses
import os
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


def progress_enabled(progress) -> bool | None:
    """True (always show), False (never), or None (show when stderr is a terminal): the
    argument if given, else $MINITRITON_PROGRESS (0 or 1), else None."""
    if progress is not None:
        return bool(progress)
    env = os.environ.get("MINITRITON_PROGRESS")
    return None if env is None else env not in ("0", "", "false", "no")


class Progress:
    """A tuning's live line on stderr (tqdm): measured / budget, best so far, simulated time
    spent, configs refused, elapsed and remaining wall time.  By default it appears only on a
    terminal and only once a tuning has taken 2 s."""

    def __init__(self, total, label, enabled):
        from tqdm import tqdm
        self.refused = 0
        self.bar = tqdm(total=total, desc=label, unit="cfg", file=sys.stderr, dynamic_ncols=True, leave=True,
                        disable=None if enabled is None else not enabled, delay=2.0 if enabled is None else 0.0)

    def update(self, record, best, simulated):
        self.refused += not record.ok
        self.bar.set_postfix_str(f"best {best * 1e6:.1f} µs, {simulated:.1f} s simulated, {self.refused} refused",
                                 refresh=False)
        self.bar.update(1)

    def close(self):
        self.bar.close()


def tune(task, tuner=None, budget: int | None = None, seed: int = 0, measurer=None, configs=None,
         batch_size: int = 16, repeats: int = 1, log: RecordLog | None = None, key: str = "", resume=(),
         progress: bool | None = None) -> TuneResult:
    """Tune `task` (a Task) and return the best config found.

    `tuner`: "ansor" (the default for a space), "autotvm", "exhaustive" (the default for a
    config list; walks the whole space otherwise), "random", "grid", or a Tuner; `budget`: most measurements (default: everything the tuner proposes); `log`: records
    are appended here as they are measured; `resume`: records of an earlier, interrupted run:
    when the tuner proposes a config they hold, the record stands in for measuring it (the
    noise stream advanced as measuring did), so a resumed tuning takes exactly the steps an
    uninterrupted one takes, and a config recorded twice counts once."""
    if budget is not None and budget < 1:
        raise ValueError(f"tune: budget must be a positive number of measurements, got {budget}")
    if tuner is None:
        tuner = "exhaustive" if configs is not None else "ansor"
    if measurer is None and hasattr(task.device, "measurer"):
        measurer = task.device.measurer(seed)  # a device that answers from records (minitriton.replay)
    if measurer is None:
        from minitriton.hypogpu import Measurer
        measurer = Measurer(task.device, seed=seed)
    search = make_tuner(tuner, space=task.space, configs=configs, seed=seed, task=task)
    pending = {r.config: r for r in latest_per_config(list(resume))}
    history = []
    limit = budget if budget is not None else (len(configs) if configs is not None else task.space.size)
    bar = Progress(limit, f"tuning {task.name}", progress_enabled(progress))
    start_clock, start = measurer.clock, time.perf_counter()
    best = min((r.time for r in history), default=float("inf"))
    try:
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
                    r = Record(cfg, m.samples, m.error, m.cost, kernel=task.name, key=key, device=repr(task.device),
                               shape=dict(getattr(task, "shape", {}) or {}))
                    if log is not None:
                        log.append(r)
                done.append(r)
                history.append(r)
                best = min(best, r.time)
                bar.update(r, best, measurer.clock - start_clock)
            search.update(done)
    finally:
        bar.close()
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
