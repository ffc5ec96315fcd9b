"""The one driver loop: ask the tuner, measure, record, repeat, within the budget.

Tuners only propose configs and learn from results; this loop owns the Measurer (noise and
simulated time), the budget, the records log, resuming from earlier records, the progress
display and the error when nothing could run.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
import os
import sys
import time

import numpy as np
from tqdm import tqdm

from minitriton.hypogpu import Measurer

from .pools import InProcess, make_pool, makespan
from .records import Record, RecordLog, latest_per_config
from .space import as_config
from .transfer import read_sources
from .tuners import default_tuner, make_tuner
from .tuners.transfer import TransferTuner


class NoValidConfig(RuntimeError):
    """Every config the tuner tried failed (e.g. all out of resources)."""


@dataclasses.dataclass
class TuneResult:
    best_config: object
    best_time: float            # the measured (noisy) time of the best config
    history: list               # Records in measurement order (resumed ones first)
    simulated_seconds: float    # measuring cost of this run (compile + timed runs)
    wall_seconds: float

    remeasured: dict = dataclasses.field(default_factory=dict)   # what settling the choice did (Tuning.settle)
    again: list = dataclasses.field(default_factory=list)        # its re-measurements (Records flagged `again`)

    @property
    def measured(self) -> int:
        """The search's measurements (what the budget counts; re-measurements are apart, in `again`)."""
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

    LABEL = 36   # characters of the task's name: the counts after it must fit a terminal line

    def __init__(self, total, label, enabled):
        self.refused = 0
        label = label if len(label) <= self.LABEL else label[:self.LABEL - 3] + "..."
        self.bar = tqdm(total=total, desc=label, unit="cfg", file=sys.stderr, dynamic_ncols=True, leave=True,
                        disable=None if enabled is None else not enabled, delay=2.0 if enabled is None else 0.0)

    def update(self, record, best, simulated):
        self.refused += not record.ok
        self.bar.set_postfix_str(f"best {best * 1e6:.1f} µs, {simulated:.1f} s simulated, {self.refused} refused",
                                 refresh=False)
        self.bar.update(1)

    def close(self):
        self.bar.close()


def _retime(measurer, task, config, repeats):
    """A measurement of a config built before: without its compile where the measurer knows how."""
    try:
        return measurer.measure(task, config, repeats=repeats, compiled=True)
    except TypeError:   # a measurer of the caller's that has no `compiled`
        return measurer.measure(task, config, repeats=repeats)


def tune(task, tuner=None, budget: int | None = None, seed: int = 0, measurer=None, configs=None,
         batch_size: int = 16, repeats: int = 1, log: RecordLog | None = None, key: str = "", resume=(),
         progress: bool | None = None, remeasure="auto", parallel=None, devices: int = 1,
         transfer=None) -> TuneResult:
    """Tune `task` (a Task) and return the best config found.

    `tuner`: a name of tuners.TUNERS ("ansor", "autotvm", "bayes", "tpe", "bayes_tpe", ...) or a
    Tuner; by default (tuners.default_tuner) exhaustive for a config list, Ansor for a kernel that
    states its launch profile or a space too large for a GP, bayes_tpe for a space known only by its knobs; `budget`: most measurements (default: everything the tuner proposes); `log`: records
    are appended here as they are measured; `resume`: records of an earlier, interrupted run:
    when the tuner proposes a config they hold, the record stands in for measuring it (the
    noise stream advanced as measuring did), so a resumed tuning takes exactly the steps an
    uninterrupted one takes, and a config recorded twice counts once.  `remeasure`: how the
    choice is settled once the search ends.  The fastest single noisy time is biased low (the
    winner's curse), so by default ("auto") the two fastest configs are timed again to measure
    the noise, every config the noise cannot separate from the best is timed again too, and the
    median of the new times chooses (Tuning.settle); `(k, r)` re-times the k fastest r times
    each; False keeps the fastest single time.  `parallel`: where
    measurements run (autotune.pools: None picks, 1 in-process, n local processes, "ray" or a
    Ray address); `devices`: how many identical simulated GPUs measure at once (the simulated
    clock advances by the busiest one's share of each batch; batches hold at least 8 configs
    per device).  `transfer`: measurements of the same kernel on other GPUs (Kernel Tuner cache
    files' paths, Replay devices, records: autotune/transfer.py); they propose configs for as long
    as they predict this GPU (tuners/transfer.py)."""
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1):
        raise ValueError(f"tune: budget must be a positive int (a number of measurements), got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"tune: seed must be an int >= 0, got {seed!r}")
    if parallel is not None and parallel is not False and (isinstance(parallel, bool) or not isinstance(
            parallel, (numbers.Integral, str)) or isinstance(parallel, numbers.Integral) and parallel < 1):
        raise ValueError(f"tune: parallel must be None, a positive int, 'ray' or a Ray address, got {parallel!r}")
    budget = None if budget is None else int(budget)
    run = Tuning(task, tuner, seed, measurer, configs, batch_size, repeats, log, key, resume, progress, budget,
                 parallel, devices, transfer)
    try:
        run.step(run.limit)
    finally:
        run.close()
    run.settle(remeasure)
    return run.result()


class Tuning:
    """One task's tuning, advanced a step at a time: tune() runs one to its budget, and
    tune_network interleaves many (each keeps its tuner's model and population between steps).
    It owns the Measurer (noise and simulated time), the records log, resuming from earlier
    records, and the progress display."""

    def __init__(self, task, tuner=None, seed=0, measurer=None, configs=None, batch_size=16, repeats=1, log=None,
                 key="", resume=(), progress=None, budget=None, parallel=None, devices=1, transfer=None):
        if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
            raise ValueError(f"tune: devices must be a positive int (simulated GPUs measuring at once), got {devices!r}")
        if tuner is None:
            tuner = default_tuner(task, task.space, configs)
        if measurer is None and hasattr(task.device, "measurer"):
            measurer = task.device.measurer(seed)  # a device that answers from records (minitriton.replay)
        if measurer is None:
            measurer = Measurer(task.device, seed=seed)
        self.task, self.measurer, self.configs, self.batch_size = task, measurer, configs, batch_size
        self.repeats, self.log, self.key = repeats, log, key
        self.search = make_tuner(tuner, space=task.space, configs=configs, seed=seed, task=task)
        names = list(task.space.names) if task.space is not None else \
            sorted({k for c in configs for k in as_config(c).kwargs})
        sources = read_sources(transfer, names)
        if sources:
            self.search = TransferTuner(self.search, sources, names, seed)
            self.search.task = task
        self.pending = {r.config: r for r in latest_per_config(list(resume))}   # (the search's own records)
        self.history: list = []
        self.remeasured: dict = {}      # config -> Record of its re-measurement
        self.again: list = []           # every re-measurement, in order (the history is the search's)
        self.settled: dict = {}         # what settling the choice did
        self.limit = budget if budget is not None else (len(configs) if configs is not None else task.space.size)
        self.exhausted = False
        self.bar = Progress(self.limit, f"tuning {task.name}", progress_enabled(progress))
        self.start_clock, self.start = measurer.clock, time.perf_counter()
        self.best = float("inf")
        self.parallel, self.devices, self.pool = parallel, devices, None
        # a farm of N GPUs gets batches of at least 8N configs: with one config per device, each
        # batch would wait for its slowest measurement while the other devices sit idle
        self.batch_size = max(batch_size, 8 * devices) if devices > 1 else batch_size

    def step(self, n: int) -> int:
        """Measure up to n more configs (fewer at the budget or when the tuner has none left)."""
        done_here = 0
        while done_here < n and len(self.history) < self.limit and not self.exhausted:
            batch = self.search.next_batch(min(self.batch_size, n - done_here, self.limit - len(self.history)))
            if not batch:
                self.exhausted = True
                break
            done = self._measure_batch([as_config(cfg) for cfg in batch])
            done_here += len(done)
            self.search.update(done)
        return done_here

    def _measure_batch(self, configs) -> list:
        """Records of a batch in its order: the configs not resumed from records are measured by
        the pool, then noise and clock are applied in order (the same records whatever the pool)."""
        new = [c for c in configs if c not in self.pending]
        outcomes = {}
        if new and hasattr(self.measurer, "finish"):
            if self.pool is None:
                self.pool = make_pool(self.parallel, self.measurer.device, self.task)
            if not isinstance(self.pool, InProcess):   # in-process: each config measured as its turn comes
                outcomes = dict(zip(new, self.pool.outcomes(self.measurer.device, self.task, new)))
        clock, costs, out = self.measurer.clock, [], []
        for cfg in configs:
            r = self.pending.pop(cfg, None)
            if r is not None:
                getattr(self.measurer, "replay", lambda samples: None)(r.samples)
            else:
                r = self._record(cfg, self.repeats, outcomes.get(cfg))
                costs.append(r.cost)
            self.history.append(r)
            self.best = min(self.best, r.time)
            self.bar.update(r, self.best, self.measurer.clock - self.start_clock)
            out.append(r)
        if self.devices > 1 and costs:
            self.measurer.clock = clock + makespan(costs, self.devices)
        return out

    def _record(self, cfg, repeats, outcome=None, again=False):
        if outcome is not None:
            m = self.measurer.finish(cfg, outcome, repeats)
        elif again:
            m = _retime(self.measurer, self.task, cfg, repeats)
        else:
            m = self.measurer.measure(self.task, cfg, repeats=repeats)
        samples, error = list(m.samples), m.error
        impossible = [t for t in samples if not (isinstance(t, (int, float)) and not isinstance(t, bool)
                                                 and math.isfinite(t) and t > 0)]
        if impossible and error is None:   # a broken device or measurer: never a winner
            samples, error = [], f"impossible time from the device: {impossible[0]!r} s (a time must be finite and > 0)"
        cost = m.cost if isinstance(m.cost, (int, float)) and math.isfinite(m.cost) and m.cost >= 0 else 0.0
        r = Record(cfg, samples, error, cost, kernel=self.task.name, key=self.key,
                   device=repr(self.task.device), shape=dict(getattr(self.task, "shape", {}) or {}), again=again)
        if self.log is not None:
            self.log.append(r)
        return r

    @property
    def done(self) -> bool:
        return self.exhausted or len(self.history) >= self.limit

    def close(self):
        self.bar.close()
        self.release()

    def release(self):
        """End the measuring pool (its worker processes); the next step starts a new one."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def ranked(self) -> list:
        """Records of the configs that ran, fastest first; after re-measuring, the re-measured
        ones (by their new medians) come first: another config's single time, biased low by the
        same curse, must not win back the choice."""
        good = [r for r in latest_per_config(self.history) if r.ok]
        again = sorted((self.remeasured[r.config] for r in good if r.config in self.remeasured), key=lambda r: r.time)
        rest = sorted((r for r in good if r.config not in self.remeasured), key=lambda r: r.time)
        return again + rest

    def remeasure(self, k: int = 5, r: int = 5) -> dict:
        """Measure the k fastest configs r more times each; rank them by the median of the new
        times.  Returns what changed: the choice before and after, and their times."""
        if k < 1 or r < 1:
            raise ValueError(f"remeasure: k and r must be positive ints, got k={k!r}, r={r!r}")
        before = self.ranked()[:k]
        if not before:
            return {}
        self._again([rec.config for rec in before], r)
        winner = min((self.remeasured.get(x.config, x) for x in before), key=lambda x: x.time)
        return {"before": before[0].config, "before_time": before[0].time, "after": winner.config,
                "after_time": winner.time, "changed": winner.config != before[0].config,
                "top": [x.config for x in before]}

    def _again(self, configs, repeats, merge=False) -> float:
        """Time measured configs again (kept in `again` and the records, flagged; the budget does
        not count them); their new medians rank them from now on (with `merge`, together with
        their earlier re-timings).  Returns what it cost."""
        cost = 0.0
        for config in configs:
            again = self._record(config, repeats, again=True)
            self.again.append(again)
            cost += again.cost
            if again.ok:
                earlier = self.remeasured.get(config) if merge else None
                self.remeasured[config] = again if earlier is None else \
                    dataclasses.replace(again, samples=earlier.samples + again.samples)
        return cost

    def settle(self, how="auto") -> dict:
        """Settle the choice after the search (see `tune`'s `remeasure`); what it did is kept
        (`self.settled`, the result's `remeasured`)."""
        if how is None or how is False:
            return {}
        if how != "auto" and not (isinstance(how, tuple) and len(how) == 2):
            raise ValueError(f"tune: remeasure must be 'auto', False or (k, r) positive ints, got {how!r}")
        start, first = self.measurer.clock, len(self.again)
        self.settled = self.settle_by_noise() if how == "auto" else self.remeasure(*how)
        if self.devices > 1 and len(self.again) > first:   # the re-timings shared out over the devices
            self.measurer.clock = start + makespan([r.cost for r in self.again[first:]], self.devices)
            if self.settled:
                self.settled["seconds"] = self.measurer.clock - start
        return self.settled

    def settle_by_noise(self, probe: int = 5, more: int = 10, z: float = 2.0, share: float = 0.03,
                        races: int = 6) -> dict:
        """The winner's curse, answered from the measured spread, within `share` of the search's
        simulated time.  The two fastest configs are timed `probe` more times; the spread of
        those times (the pooled standard deviation of their logs) is the noise.  Every other
        config whose single time lies within z noise widths of the best's new median (its own
        uncertainty included) could be the truly fastest: it is timed `probe` more times too,
        fastest first, as long as the allowance lasts.  Then a race of up to `races` rounds: those
        whose median is still within z widths of the leader's (the width shrinking as their times
        add up) are timed up to `more` times again, and the medians of all their new times choose.  Re-timing a built config charges its timed runs, not a compile."""
        ranked = self.ranked()
        if len(ranked) < 2:
            return {}
        start = self.measurer.clock
        allowance = share * sum(r.cost for r in self.history)   # (resumed records count what they cost then)
        first, second = ranked[0], ranked[1]
        spent = self._again([first.config, second.config], probe)
        good = [self.remeasured[r.config] for r in (first, second) if r.config in self.remeasured]
        if not good:
            return {}
        per_time = max(p.cost for p in good) / probe / max(p.time for p in good)   # seconds charged per second timed
        logs = [np.log(p.samples) for p in good if len(p.samples) > 1]
        sigma = float(np.sqrt(np.mean([np.var(x, ddof=1) for x in logs]))) if logs else 0.0
        best_now = min(p.time for p in good)
        band = z * sigma * math.sqrt(1.0 + 1.0 / probe)
        contenders = []
        for r in ranked[2:]:
            if math.log(r.time) > math.log(best_now) + band:
                break
            if per_time > 0 and spent + probe * per_time * r.time > allowance:
                break
            spent += self._again([r.config], probe)
            contenders.append(r)
        samples, rounds, finalists = probe, 0, []
        while rounds < races:   # a race: the configs still within the noise of the leader get more times
            timed = sorted(self.remeasured.values(), key=lambda r: r.time)
            close = z * sigma * 1.25 * math.sqrt(2.0 / samples)   # two medians of `samples` times apart
            finalists = [r for r in timed if math.log(r.time) <= math.log(timed[0].time) + close]
            left = allowance - spent
            cost = per_time * sum(r.time for r in finalists)
            n = more if cost <= 0 else min(more, int(left / cost)) if left > 0 else 0
            if len(finalists) < 2 or n < 2:
                break
            spent += self._again([r.config for r in finalists], n, merge=True)
            samples, rounds = samples + n, rounds + 1
        winner = self.ranked()[0]
        return {"before": first.config, "before_time": first.time, "after": winner.config,
                "after_time": winner.time, "changed": winner.config != first.config, "noise": sigma,
                "contenders": 2 + len(contenders), "finalists": len(finalists), "races": rounds,
                "top": [first.config, second.config] + [r.config for r in contenders],
                "seconds": self.measurer.clock - start}

    def result(self) -> TuneResult:
        ranked = self.ranked()
        if not ranked:
            by_reason = {}
            for r in self.history:
                if r.error:
                    by_reason.setdefault(r.error, r.config)
            reasons = [f"{c} -> {e}" for e, c in list(by_reason.items())[:5]]
            raise NoValidConfig(f"no config of {self.task.name} could run (key {self.key or '-'}; "
                                f"{len(self.history)} tried): " + "; ".join(reasons))
        winner = ranked[0]
        return TuneResult(winner.config, winner.time, self.history, self.measurer.clock - self.start_clock,
                          time.perf_counter() - self.start, dict(self.settled), list(self.again))
