"""Records: every measurement, kept.  Later tuners (cost models, transfer learning) learn
from them, and an interrupted tuning resumes from them."""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib

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
        return json.dumps({"kernel": self.kernel, "key": self.key, "device": self.device,
                           "config": {"kwargs": c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages},
                           "samples": self.samples, "error": self.error, "cost": self.cost, "shape": self.shape},
                          sort_keys=True, default=str)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        d = json.loads(line)
        c = d["config"]
        return cls(Config(c["kwargs"], num_warps=c["num_warps"], num_stages=c["num_stages"]), list(d["samples"]),
                   d.get("error"), float(d.get("cost", 0.0)), d.get("kernel", ""), d.get("key", ""),
                   d.get("device", ""), dict(d.get("shape") or {}))


def latest_per_config(records) -> list:
    """One record per config, its latest, in the order the configs were first measured: a
    config measured again (an interrupted refresh) counts once toward a budget."""
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
    so it costs only itself.  `on_error(exc)`: called when the file cannot be written (full
    disk, read-only directory); the tuning goes on without the record on disk."""

    def __init__(self, path, on_error=None):
        self.path = pathlib.Path(path)
        self.on_error = on_error

    def append(self, record: Record):
        data = (record.to_json() + "\n").encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            if self.on_error is None:
                raise
            self.on_error(e)
            return
        try:
            size = os.fstat(fd).st_size
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
        """Records (of one key, if given); lines that do not parse (a torn last line) are skipped."""
        if not self.path.exists():
            return []
        out = []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    r = Record.from_json(line)
                except (ValueError, KeyError, TypeError):
                    continue
                if key is None or r.key == key:
                    out.append(r)
        return out
