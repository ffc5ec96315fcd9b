"""What a tuning's cache entry is keyed on, besides the call's own values: the kernel's code, the
tuner by its settings, and the rounding (bucketing) of the key arguments."""
from __future__ import annotations

import math

import numpy as np

import minitriton as mt
from .kernel_source import source_of


def kernel_key(fn) -> str:
    """What identifies the kernel's code: its source and its dependencies (jitted helpers it
    calls, global constants it reads), through @heuristics wrappers."""
    while not hasattr(fn, "cache_key") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn.cache_key() if hasattr(fn, "cache_key") else source_of(fn)


def tuner_key(tuner):
    """A tuner by its settings (its class and what it was given), never by its memory address."""
    if isinstance(tuner, str):
        return tuner
    if isinstance(tuner, type):
        return f"{tuner.__module__}.{tuner.__qualname__}"
    settings = tuner.settings() if hasattr(tuner, "settings") else {
        k: v for k, v in sorted(vars(tuner).items()) if isinstance(v, (bool, int, float, str, type(None)))}
    return {"class": f"{type(tuner).__module__}.{type(tuner).__qualname__}", "settings": settings}


def buckets(bucket, key):
    """Per key argument, the function that rounds its value for the cache key."""
    if bucket is None:
        return {"M": mt.next_power_of_2} if "M" in key else {}
    if bucket is False:
        return {}
    if callable(bucket):
        if "M" not in key:
            raise ValueError(f"autotune: bucket=<function> rounds M, but M is not in key={key}; "
                             f"give bucket={{name: function}} for another key argument")
        return {"M": bucket}
    if isinstance(bucket, dict) and all(callable(f) for f in bucket.values()):
        unknown = sorted(set(bucket) - set(key))
        if unknown:
            raise ValueError(f"autotune: bucket= names {unknown}, which are not in key={key}")
        return dict(bucket)
    raise TypeError(f"autotune: bucket= must be None, False, a callable (for M) or a dict of callables, got {bucket!r}")


def check_key_values(name: str, keys, all_args: dict):
    """The key's numbers are the tuning task's shape: a negative one is no size, and a NaN
    never equals itself, so it would be tuned again on every call."""
    for k in keys:
        v = all_args.get(k)
        if hasattr(v, "shape") and hasattr(v, "dtype") and getattr(v, "ndim", 0) > 0:
            raise TypeError(f"autotune({name}): key argument '{k}' is an array; a key is made of "
                            f"numbers and strings (pass its size as an int argument and key on that; array "
                            f"dtypes are in the key already)")
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            continue
        if isinstance(v, (float, np.floating)) and math.isnan(v):
            raise ValueError(f"autotune({name}): key argument '{k}' is NaN, which matches no cache "
                             f"entry (not even its own); pass a number or leave '{k}' out of key=")
        if v < 0:
            raise ValueError(f"autotune({name}): key argument '{k}' is {v}; key values are the sizes "
                             f"the tuning runs at and must be >= 0 (leave a signed argument out of key=)")
