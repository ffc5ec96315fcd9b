"""Tuning results on disk (diskcache), shared by processes, robust to crashes and junk.

Where: the `cache_dir` argument, else $MINITRITON_CACHE_DIR, else $XDG_CACHE_HOME/minitriton
(~/.cache/minitriton).  $MINITRITON_AUTOTUNE_CACHE=0 skips the disk cache (tune every
process); $MINITRITON_AUTOTUNE_REFRESH=1 tunes again and overwrites.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import time

import diskcache

from .records import RecordLog

VERSION = 1


def default_dir() -> pathlib.Path:
    if os.environ.get("MINITRITON_CACHE_DIR"):
        return pathlib.Path(os.environ["MINITRITON_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "minitriton"


def enabled() -> bool:
    return os.environ.get("MINITRITON_AUTOTUNE_CACHE", "1") != "0"


def refresh() -> bool:
    return os.environ.get("MINITRITON_AUTOTUNE_REFRESH", "0") == "1"


def digest(*parts) -> str:
    """A stable key for everything that decides a tuning's answer."""
    return hashlib.sha256(json.dumps([VERSION, *parts], sort_keys=True, default=repr).encode()).hexdigest()[:32]


class TuningCache:
    def __init__(self, directory=None):
        self.dir = pathlib.Path(directory) if directory is not None else default_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.db = self._open(self.dir / "results")
        self.log = RecordLog(self.dir / "records.jsonl")

    @staticmethod
    def _open(path: pathlib.Path):
        """Open the results database; one too damaged to open is set aside and started afresh
        (the records log, which holds the measurements, is separate and kept)."""
        try:
            return diskcache.Cache(str(path))
        except Exception:
            path.rename(path.with_name(f"{path.name}.damaged-{int(time.time())}"))
            return diskcache.Cache(str(path))

    def get(self, key: str) -> dict | None:
        """The stored entry, or None if absent, unreadable or from another format version."""
        try:
            entry = self.db.get("result:" + key)
        except Exception:  # a damaged entry is a miss, not a crash; it will be rewritten
            return None
        if not isinstance(entry, dict) or entry.get("version") != VERSION or not isinstance(entry.get("config"), dict):
            return None
        return entry

    def put(self, key: str, entry: dict):
        self.db.set("result:" + key, dict(entry, version=VERSION, key=key, created=time.time()))

    def lock(self, key: str):
        """Held while one process tunes `key`; others wait, then read its answer.  A holder that
        dies releases it after `expire` seconds."""
        return diskcache.Lock(self.db, "lock:" + key, expire=3600)

    def entries(self) -> list[dict]:
        out = []
        for k in self.db.iterkeys():
            if isinstance(k, str) and k.startswith("result:"):
                e = self.get(k[len("result:"):])
                if e is not None:
                    out.append(e)
        return sorted(out, key=lambda e: e.get("created", 0))

    def find(self, prefix: str) -> list[dict]:
        return [e for e in self.entries() if e["key"].startswith(prefix)]

    def delete(self, key: str) -> bool:
        return bool(self.db.delete("result:" + key))

    def clear(self) -> int:
        n = len(self.entries())
        self.db.clear()
        if self.log.path.exists():
            self.log.path.unlink()
        return n

    def close(self):
        self.db.close()
