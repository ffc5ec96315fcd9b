"""Counting what a launch does, per program: the raw material of traced launch profiles.

Inside `with recording() as rec:`, every launch runs in *trace mode*: programs execute as
usual (in lockstep where they can) but float data is not read (loads give zeros; integer
loads, which may be indices, are real), dot products are not computed, stores write nothing,
float loads and stores are not bounds-checked (so a launch can be traced at a size its arrays
do not have, e.g. a bucketed M), and each program's tensor-core FLOPs,
bytes loaded and stored (masked-off lanes excluded), atomics, elementwise FLOPs, loop trips
and the origin of the first block it reads from each argument are counted.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading

import numpy as np

_local = threading.local()


@dataclasses.dataclass
class Counts:
    """Counters for a group of programs running together (one row per program)."""
    pids: np.ndarray
    tc_flops: np.ndarray
    dots: np.ndarray
    loaded: np.ndarray
    stored: np.ndarray
    atomics: np.ndarray
    alu: np.ndarray
    trips: int = 0
    arg_loaded: dict = dataclasses.field(default_factory=dict)
    origins: dict = dataclasses.field(default_factory=dict)
    tile: tuple = (0, 0, 0)
    tile_itemsize: int = 0
    max_block: int = 0

    @classmethod
    def for_programs(cls, pids):
        z = lambda: np.zeros(pids.shape[0], np.float64)
        return cls(pids, z(), z(), z(), z(), z(), z())


@dataclasses.dataclass
class LaunchRecord:
    kernel: str
    grid: tuple
    meta: dict            # constexpr arguments and launch options (num_warps, num_stages)
    scalars: dict         # the other scalar arguments (sizes, strides)
    counts: list          # Counts, one per group of programs, in launch order
    sampled: bool = False # programs were sampled (control flow diverged); counters are representative

    def per_program(self, field):
        return np.concatenate([getattr(c, field) for c in self.counts])


class Recorder:
    def __init__(self, max_sequential=64):
        self.launches: list[LaunchRecord] = []
        self.max_sequential = max_sequential


def active() -> Recorder | None:
    return getattr(_local, "recorder", None)


@contextlib.contextmanager
def recording(max_sequential=64):
    """Trace every launch made inside the block instead of executing it for real."""
    prev = active()
    rec = _local.recorder = Recorder(max_sequential)
    try:
        yield rec
    finally:
        _local.recorder = prev


def lanes(mask, shape, rows):
    """Active lanes per program for a block access (mask: None or bool array (rows|1, ...),
    possibly with broadcast dimensions of size 1, which are counted without expanding them)."""
    n = int(np.prod(shape)) if shape else 1
    if mask is None:
        return np.full(rows, float(n))
    per_row = mask.reshape(mask.shape[0], -1).sum(1).astype(np.float64)
    per_row *= n / max(int(np.prod(mask.shape[1:])), 1)
    return np.broadcast_to(per_row, (max(rows, mask.shape[0]),)).copy()
