"""Launch profiles: what one kernel launch asks of the GPU, per program.

Every numeric field may be a scalar or an array over configs (the oracle evaluates a whole
search space at once); `extra` holds follow-on launches (the split-K reduction, an unfused
epilogue) with an `enabled` mask for configs that do not make them.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np


@dataclasses.dataclass
class Profile:
    name: str
    grid: object                  # programs in the launch
    num_warps: object
    num_stages: object
    k_steps: object               # main-loop trips per program
    tc_flops_step: object = 0     # tensor-core FLOPs per program per trip (padded tiles count)
    load_bytes_step: object = 0   # global-memory bytes loaded per program per trip
    tile: tuple = (0, 0, 0)       # the dot's (m, n, k) per trip, for warp tiling and shared-memory reads
    smem_stage: object = 0        # shared memory per pipeline stage (dot operand tiles)
    regs: object = 32             # registers per thread the kernel wants
    alu_flops: object = 0         # non-tensor FLOPs per program, all trips together
    store_bytes: object = 0       # bytes stored per program
    atomics: object = 0           # atomic operations per program
    dram_bytes: Callable | None = None   # slots (programs resident at once) -> DRAM bytes of the loads
    key: object = 0               # per-config hash: seeds the unexplained slowdown
    enabled: object = True        # for a follow-on launch: whether the config makes it
    extra: list = dataclasses.field(default_factory=list)

    @property
    def loaded_bytes(self):
        return np.asarray(self.grid) * np.asarray(self.k_steps) * np.asarray(self.load_bytes_step)

    @property
    def flops(self):
        return np.asarray(self.grid) * np.asarray(self.k_steps) * np.asarray(self.tc_flops_step)


def tiles_per_wave_bytes(order_ids: dict, bytes_per_program: dict, grid: int):
    """DRAM bytes of the loads for traced launches: programs resident together (a wave of
    `slots` consecutive program ids) read each distinct tile once; L2 serves the rest.

    `order_ids[arg]` gives, per program in launch order, an id of the tile it reads from that
    argument (programs with the same id share the tile)."""
    def dram(slots):
        shape = np.shape(slots)
        slots = np.atleast_1d(np.asarray(slots, np.int64))
        out = np.zeros(slots.shape, np.float64)
        for i, s in enumerate(slots):
            wave = np.arange(grid) // max(int(s), 1)
            total = 0.0
            for arg, ids in order_ids.items():
                pairs = np.unique(np.stack([wave, ids]), axis=1).shape[1]
                total += pairs * bytes_per_program[arg]
            out[i] = total
        return out.reshape(shape)
    return dram


def register_estimate(tile_m, tile_n, num_warps, max_block=0):
    """Registers per thread: fp32 accumulators and MMA operand fragments of the dot tile (or the
    largest block the kernel holds), plus ~32 for addresses and indices."""
    w = np.asarray(num_warps, np.float64)
    tm, tn = np.asarray(tile_m, np.float64), np.asarray(tile_n, np.float64)
    dot = tm * tn / (32.0 * w) + (tm + tn) * 16.0 / (32.0 * w)
    return 32.0 + np.where(tm > 0, dot, np.asarray(max_block, np.float64) / (32.0 * w))


def meta_key(kernel: str, meta: dict) -> np.ndarray:
    """The unexplained-slowdown key of a launch: its kernel and integer meta-parameters."""
    knobs = {k: v for k, v in meta.items()
             if isinstance(v, (bool, int, np.integer, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype.kind in "biu")}
    return config_key(kernel, knobs)


def config_key(name: str, knobs: dict) -> np.ndarray:
    """A 64-bit hash per config (vectorized over knob arrays); the same config always gets the
    same key, whichever way its profile was made."""
    h = np.uint64(abs(hash_str(name)))
    out = None
    with np.errstate(over="ignore"):
        for k in sorted(knobs):
            v = np.asarray(knobs[k]).astype(np.int64).astype(np.uint64)
            x = (v + np.uint64(hash_str(k) & 0xFFFFFFFF)) * np.uint64(0x9E3779B97F4A7C15)
            out = x if out is None else _mix(out ^ x)
        out = _mix((out if out is not None else np.uint64(0)) ^ h)
    return out


def _mix(x):
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def hash_str(s: str) -> int:
    """A stable string hash (Python's hash() changes between processes)."""
    h = 1469598103934665603
    for ch in s.encode():
        h = ((h ^ ch) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h
