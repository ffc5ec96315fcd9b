"""Launch profiles derived by tracing: any minitriton kernel can be timed.

The launch runs in trace mode (see minitriton.counting): programs execute abstractly enough
to count, per program, tensor-core FLOPs, bytes loaded and stored, atomics, elementwise work,
loop trips and which tile of each argument it reads first.  The counts become the same kind
of Profile a library kernel states by formula.
"""
from __future__ import annotations

import math

import numpy as np

from minitriton import counting
from .profile import Profile, meta_key, register_estimate, tiles_per_wave_bytes


def profile_from_record(rec: counting.LaunchRecord) -> Profile:
    grid = math.prod(rec.grid)
    dots = rec.per_program("dots")
    trips = max(c.trips for c in rec.counts)
    steps = max(float(dots.max()), 1.0) if dots.max() > 0 else max(float(trips), 1.0)
    tile = next((c.tile for c in rec.counts if c.tile[0]), (0, 0, 0))
    itemsize = next((c.tile_itemsize for c in rec.counts if c.tile[0]), 0)
    max_block = max(c.max_block for c in rec.counts)
    warps, stages = rec.meta.get("num_warps", 4), rec.meta.get("num_stages", 3)
    loaded = rec.per_program("loaded").mean()
    dram = None
    if not rec.sampled:
        args = sorted({a for c in rec.counts for a in c.origins})
        ids, per_arg = {}, {}
        for a in args:
            origins = np.concatenate([c.origins.get(a, np.full(c.pids.shape[0], -1.0)) for c in rec.counts])
            ids[a] = np.unique(origins, return_inverse=True)[1]
            per_arg[a] = float(np.mean(np.concatenate([np.broadcast_to(c.arg_loaded.get(a, 0.0), c.pids.shape[:1])
                                                       for c in rec.counts])))
        dram = tiles_per_wave_bytes(ids, per_arg, grid)
    m, n, k = tile
    return Profile(rec.kernel, grid=grid, num_warps=warps, num_stages=stages, k_steps=steps,
                   tc_flops_step=rec.per_program("tc_flops").mean() / steps, load_bytes_step=loaded / steps,
                   tile=tile, smem_stage=(m * k + k * n) * itemsize, regs=register_estimate(m, n, warps, max_block),
                   alu_flops=rec.per_program("alu").mean(), store_bytes=rec.per_program("stored").mean(),
                   atomics=rec.per_program("atomics").mean(), dram_bytes=dram, key=meta_key(rec.kernel, rec.meta))


def trace(fn, *args, **kwargs) -> list[Profile]:
    """Profiles of every launch `fn(*args, **kwargs)` makes (a wrapper, or `lambda: k[grid](...)`)."""
    with counting.recording() as rec:
        fn(*args, **kwargs)
    return [profile_from_record(r) for r in rec.launches]
