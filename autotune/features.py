"""What a cost model sees of a config (AutoTVM, lecture §4.2).

`knob` features are the knob values themselves (log2).  `program` features are what a compiler
can compute from the launch it would make, without any time model: programs, threads, shared
memory, accumulators and warp tile, the work and traffic of one main-loop step and their ratio,
trips, stages, padding, L2 reuse of the tile order, split factor, and the problem's shape.
They come from the kernel's stated launch profile, vectorised over a whole space at once; a
kernel with no stated profile would need a trace per config, far too slow to score a space
with, so it gets knob features instead (and the tuner says so).

Nothing here reads HypoGPU's model or its oracle; the launch profile is what the kernel
asks of a GPU, not how fast the GPU is.
"""
from __future__ import annotations

import numpy as np

NOMINAL_SLOTS = 108  # programs taken to run at once when counting L2 reuse (one per SM of an A100-class part)


def _log2(x):
    return np.log2(np.maximum(np.asarray(x, np.float64), 1e-9))


def knob_matrix(space, index=None) -> np.ndarray:
    """(points, knobs): log2 of each knob value (0/1 for booleans, position for text), for the
    points `index` of the space's product (all of them by default)."""
    arrays = space.arrays()
    if isinstance(arrays, dict) and not getattr(space, "names", None):
        return np.zeros((0, 0))
    cols = []
    for name in space.names:
        v = np.asarray(arrays[name])
        if v.dtype.kind in "iuf":
            cols.append(_log2(np.abs(v.astype(np.float64)) + (v == 0)))
        elif v.dtype.kind == "b":
            cols.append(v.astype(np.float64))
        else:   # text, or values of several types (numpy made them text): by position in the knob's list
            at = space.names.index(name)
            cols.append(np.unravel_index(np.arange(v.size), space.sizes)[at].astype(np.float64))
    out = np.stack(cols, axis=1)
    return out if index is None else out[index]


PROGRAM_FEATURES = ("programs", "threads", "shared_memory", "accumulators_per_thread", "warp_tile",
                    "flops_per_step", "bytes_per_step", "tile_intensity", "trips", "stages", "padding_efficiency",
                    "l2_reuse", "registers", "store_bytes", "follow_on_launches", "alu_flops", "shape_1", "shape_2",
                    "shape_3")


def least_work(task, space) -> float:
    """The fewest tensor-core FLOPs any point of the space computes (padding is measured
    against it)."""
    p = task.vector_profile(space.arrays())
    total = np.asarray(p.grid, np.float64) * np.asarray(p.k_steps, np.float64) * np.asarray(p.tc_flops_step, np.float64)
    total = total[total > 0] if np.ndim(total) else np.array([total])
    return float(total.min()) if total.size else 1.0


def program_matrix(task, space, useful: float | None = None) -> np.ndarray:
    """(points, PROGRAM_FEATURES + knobs) for every point of the space's product, from the
    task's stated launch profile evaluated once over the whole space, followed by the knob
    features (the trees split on both: a quantity tells what a knob does, the knob value
    tells which of the configs that look alike it is).  `useful`: the least work of the whole
    space, when `space` is only some of its points."""
    arrays = space.arrays()
    n = arrays[space.names[0]].shape[0]
    p = task.vector_profile(arrays)

    def full(x):
        return np.broadcast_to(np.asarray(x, np.float64), (n,)).astype(np.float64)
    grid, warps, stages, steps = full(p.grid), full(p.num_warps), full(p.num_stages), full(p.k_steps)
    flops, loaded = full(p.tc_flops_step), full(p.load_bytes_step)
    tm, tn = (full(p.tile[0]), full(p.tile[1])) if len(p.tile) >= 2 else (np.zeros(n), np.zeros(n))
    total = grid * steps * flops
    if useful is None:
        useful = total[total > 0].min() if (total > 0).any() else 1.0   # the least any config computes
    loaded_total = np.maximum(grid * steps * loaded, 1.0)
    dram = full(p.dram_bytes(NOMINAL_SLOTS)) if p.dram_bytes is not None else loaded_total
    follow = np.zeros(n)
    for e in p.extra:
        follow += full(e.enabled)
    shape = [float(v) for v in list(task.shape.values())[:3]]
    shape += [1.0] * (3 - len(shape))
    cols = [_log2(grid), _log2(warps * 32), _log2(full(p.smem_stage) * stages), _log2(tm * tn / (32 * warps) + 1),
            _log2(tm * tn / warps + 1), _log2(flops + 1), _log2(loaded + 1), _log2((flops + 1) / (loaded + 1)),
            _log2(steps), stages, np.where(total > 0, useful / np.maximum(total, 1.0), 1.0),
            _log2(loaded_total / np.maximum(dram, 1.0)), _log2(full(p.regs)), _log2(full(p.store_bytes) + 1), follow,
            _log2(full(p.alu_flops) + 1), *[np.full(n, np.log2(s)) for s in shape]]
    return np.hstack([np.stack(cols, axis=1), knob_matrix(space)])


def can_state(task) -> bool:
    """Whether the task's kernel states its launch profile (program features are cheap)."""
    return hasattr(getattr(task, "kernel", None), "launch_profile") and hasattr(task, "vector_profile")
