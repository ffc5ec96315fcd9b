"""Records: every measurement, kept.  Later tuners (cost models, transfer learning) learn
from them, and an interrupted tuning resumes from them."""
from __future__ import annotations

import dataclasses
import errno
import json
import math
import os
import warnings
import pathlib

from minitriton.datafiles import open_regular, regular_stat

from .space import Config


@dataclasses.dataclass
class Record:
    config: Config
    samples: list                 # seconds, one per repeat (empty if the config failed)
    error: str | None = None
    cost: float = 0.0             # simulated seconds the measurement took
    kernel: str = ""
    key: str = ""                 # the (bucketed) tuning key, as text
    device: str = ""
    shape: dict = dataclasses.field(default_factory=dict)  # the task's shape (transfer learning needs it)
    again: bool = False           # a re-measurement of a config the search measured (settling the choice)

    @property
    def time(self) -> float:
        if not self.samples:
            return float("inf")
        s = sorted(self.samples)
        n = len(s)
        return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples)

    def to_json(self) -> str:
        c = self.config
        d = {"kernel": self.kernel, "key": self.key, "device": self.device,
             "config": {"kwargs": c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages},
             "samples": self.samples, "error": self.error, "cost": self.cost, "shape": self.shape}
        if self.again:
            d["again"] = True
        return json.dumps(d, sort_keys=True, default=str)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        """A record from its line, checked field by field: the records file is data anyone with
        the directory can write, and a bad line (ValueError) must cost only itself."""
        if len(line) > MAX_LINE:
            raise ValueError(f"a line of {len(line)} characters")
        try:
            d = json.loads(line)
        except RecursionError:
            raise ValueError("nested too deeply") from None
        if not isinstance(d, dict) or not isinstance(d.get("config"), dict):
            raise ValueError("not a record (no config object)")
        c = d["config"]
        kwargs = c.get("kwargs")
        if not isinstance(kwargs, dict) or not all(isinstance(v, SCALARS) for v in kwargs.values()):
            raise ValueError("config kwargs must map names to numbers, strings or booleans")
        samples = d.get("samples")
        if not isinstance(samples, list) or not all(_a_time(t) for t in samples):
            raise ValueError(f"samples must be a list of positive finite seconds, got {str(samples)[:60]}")
        error, cost = d.get("error"), d.get("cost", 0.0)
        if error is not None and not isinstance(error, str):
            raise ValueError("error must be text or null")
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            raise ValueError(f"cost must be finite seconds >= 0, got {cost!r}")
        text = {k: d.get(k, "") for k in ("kernel", "key", "device")}
        if not all(isinstance(v, str) for v in text.values()):
            raise ValueError("kernel, key and device must be text")
        shape = d.get("shape") or {}
        if not isinstance(shape, dict) or not all(isinstance(v, SCALARS) for v in shape.values()):
            raise ValueError("shape must map names to numbers")
        again = d.get("again", False)
        if not isinstance(again, bool):
            raise ValueError("again must be true or false")
        return cls(Config(kwargs, num_warps=c.get("num_warps", 4), num_stages=c.get("num_stages", 3)),
                   [float(t) for t in samples], error, float(cost), text["kernel"], text["key"], text["device"],
                   dict(shape), again)


MAX_LINE = 1 << 20            # a record is a few hundred bytes; a longer line is junk, skipped unread
# of a records file, only the last this many bytes are read: a runaway or planted log of gigabytes
# would otherwise cost as much memory and minutes of parsing; resuming and learning use the latest
MAX_READ_BYTES = 64 << 20
SCALARS = (bool, int, float, str, type(None))
_WARNED: set = set()


def _a_time(t) -> bool:
    return not isinstance(t, bool) and isinstance(t, (int, float)) and math.isfinite(t) and t > 0


def _lines(f):
    """The file's lines, each cut short past MAX_LINE (its rest skipped): memory stays bounded."""
    while True:
        raw = f.readline(MAX_LINE + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while True:   # the rest of an over-long line
                more = f.readline(MAX_LINE)
                if not more or more.endswith(b"\n"):
                    break
            raw = b"x" * (MAX_LINE + 1)   # still counted as one bad line
        yield raw


def _warn_records(path, what):
    if (str(path), what.split(" (first")[0]) not in _WARNED:
        _WARNED.add((str(path), what.split(" (first")[0]))
        warnings.warn(f"minitriton: the records file {path} {what}", RuntimeWarning, stacklevel=4)


def latest_per_config(records) -> list:
    """One record per config, its latest, in the order the configs were first measured: a
    config measured again (an interrupted refresh) counts once toward a budget.  The search's
    own records only: re-measurements that settled a choice (`again`) are not the search's."""
    records = [r for r in records if not r.again]
    last = {}
    for r in records:
        last[r.config] = r
    seen, out = set(), []
    for r in records:
        if r.config not in seen:
            seen.add(r.config)
            out.append(last[r.config])
    return out


class RecordLog:
    """An append-only JSON-lines file.  Each record is one write of one line, flushed at once,
    so an interrupt loses at most the measurement in flight, and concurrent writers (O_APPEND)
    never interleave within a line.  A line torn by a crash is closed before the next record,
    so it costs only itself.  A symbolic link at the path is never followed (one planted in a
    shared cache directory would have the log appended to whatever file it points to, and
    read from it): it is an error like a read-only directory, and no records.  `on_error(exc)`: called when the file cannot be
    written (full disk, read-only directory, a link); the tuning goes on without the record on disk."""

    def __init__(self, path, on_error=None):
        self.path = pathlib.Path(path)
        self.on_error = on_error

    def append(self, record: Record):
        data = (record.to_json() + "\n").encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                e = OSError(errno.ELOOP, "a symbolic link, not followed",
                            str(self.path))
            if self.on_error is None:
                raise
            self.on_error(e)
            return
        try:
            size = regular_stat(fd, self.path).st_size   # a FIFO would take the line, then wait for a reader
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # the last record was torn: end it before this one
            os.write(fd, data)
        except OSError as e:
            if self.on_error is None:
                raise
            self.on_error(e)
        finally:
            os.close(fd)

    def read(self, key: str | None = None) -> list[Record]:
        """Records (of one key, if given).  A line that is not a valid record (a torn last line,
        junk, a time that cannot be: NaN, infinite, zero or negative) is skipped and counted,
        with one warning per file; a file that cannot be read is no records, with a warning."""
        try:
            f = open_regular(self.path, follow_links=False)
        except FileNotFoundError:
            return []
        except OSError as e:
            why = "a symbolic link, not followed" if e.errno == errno.ELOOP else e.strerror or e
            _warn_records(self.path, f"cannot be read ({why}): no records from it")
            return []
        out, bad, first = [], 0, None
        with f:
            size = os.fstat(f.fileno()).st_size
            lines = _lines(f)
            if size > MAX_READ_BYTES:
                f.seek(size - MAX_READ_BYTES - 1)
                if f.read(1) != b"\n":
                    next(lines, None)           # the part of a line the cut fell in
                _warn_records(self.path, f"is {size / 2**20:.0f} MB: only its last {MAX_READ_BYTES >> 20} MB are read "
                                         f"(older records are not used to resume or learn from)")
            for number, raw in enumerate(lines, 1):
                if not raw.strip():
                    continue
                try:
                    r = Record.from_json(raw.decode("utf-8", errors="replace"))
                except (ValueError, KeyError, TypeError) as e:
                    bad += 1
                    first = first or f"line {number}: {e}"
                    continue
                if key is None or r.key == key:
                    out.append(r)
        if bad:
            _warn_records(self.path, f"has {bad} line(s) that are not valid records, skipped (first: {first})")
        return out
