"""Where the tuning cache lives and whether it is used, read from the environment.

The cache directory is the `cache_dir` argument, else $MINITRITON_CACHE_DIR, else
$XDG_CACHE_HOME/minitriton (~/.cache/minitriton).  $MINITRITON_AUTOTUNE_CACHE=0 skips the disk
cache (tune every process); $MINITRITON_AUTOTUNE_REFRESH=1 tunes again and overwrites.

Apart from the cache itself (cache.py) because searches read this too (AutoTVM's tuner learns from
the records kept in the default directory) and never the database.
"""
from __future__ import annotations

import os
import pathlib


def default_dir() -> pathlib.Path:
    if os.environ.get("MINITRITON_CACHE_DIR"):
        return pathlib.Path(os.environ["MINITRITON_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "minitriton"


def enabled() -> bool:
    return os.environ.get("MINITRITON_AUTOTUNE_CACHE", "1") != "0"


def refresh() -> bool:
    return os.environ.get("MINITRITON_AUTOTUNE_REFRESH", "0") == "1"
