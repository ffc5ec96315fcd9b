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
                           "samples": self.samples, "error": self.error, "cost": self.cost}, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        d = json.loads(line)
        c = d["config"]
        return cls(Config(c["kwargs"], num_warps=c["num_warps"], num_stages=c["num_stages"]), list(d["samples"]),
                   d.get("error"), float(d.get("cost", 0.0)), d.get("kernel", ""), d.get("key", ""),
                   d.get("device", ""))


class RecordLog:
    """An append-only JSON-lines file.  Each record is one write of one line, flushed at once,
    so an interrupt loses at most the measurement in flight, and concurrent writers (O_APPEND)
    never interleave within a line."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def append(self, record: Record):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = (record.to_json() + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
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
