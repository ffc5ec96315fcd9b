"""HypoGPU's performance model: one generic function from a launch profile to a time.

Per program (thread block) and main-loop trip, on an SM holding `c` resident blocks:
  tensor cores   c·F / (512 FLOP/clk · active sub-partitions), a block with w < 4 warps
                 drives only w of the 4 sub-partitions, and warps whose tile slice is smaller
                 than one MMA (16x8) waste the rest;
  shared memory  c · (operand bytes each warp reads) / 128 B/clk;
  L2             c · bytes loaded (and spilled) / the SM's 48 B/clk share;
  latency        a load takes ~500 clk plus its transfer; with S pipeline stages S-1 loads are
                 in flight (Little's law), with S = 1 load and compute serialise;
combined by a soft maximum (they overlap, not perfectly).  Occupancy c comes from shared
memory, registers (spills beyond the per-thread cap cost L2 traffic), threads and the block
limit; blocks run in waves of 108·c (the last wave partial: wave quantization).  DRAM bytes come
from the profile's L2 reuse model (which tiles a wave shares, e.g. through GROUP_M).  Then
launch overhead, follow-on launches (split-K reduction, unfused epilogue) and a deterministic
config-dependent slowdown in [1, 1 + unexplained_max] stand for what nobody modelled.
"""
from __future__ import annotations

import numpy as np

from .spec import Spec, A100
from .profile import Profile

OK, SMEM, REGS, THREADS = 0, 1, 2, 3
REASONS = {SMEM: "shared memory", REGS: "registers", THREADS: "threads"}


def _f(x):
    return np.asarray(x, np.float64)


def _soft_max(*terms, p=3.0):
    return sum(np.power(np.maximum(t, 0.0), p) for t in terms) ** (1.0 / p)


def resources(p: Profile, spec: Spec = A100):
    """(blocks per SM, reason code, registers allocated, spilled registers) per config."""
    warps = _f(p.num_warps)
    threads = 32.0 * warps
    smem = _f(p.num_stages) * _f(p.smem_stage)
    regs = _f(p.regs)
    reg_cap = np.minimum(spec.max_regs_per_thread, np.floor(spec.regs_per_sm / threads / 8.0) * 8.0)
    alloc = np.minimum(np.ceil(regs / 8.0) * 8.0, reg_cap)
    spilled = np.maximum(regs - reg_cap, 0.0)
    reason = np.where(threads > spec.max_threads_per_block, THREADS,
                      np.where(smem > spec.smem_per_block, SMEM,
                               np.where(regs > 2.0 * reg_cap, REGS, OK)))
    by_smem = np.where(smem > 0, np.floor(spec.smem_per_sm / np.maximum(smem, 1.0)), np.inf)
    # (np.minimum pairwise, not .reduce over a list: the limits may be arrays of different
    # shapes, e.g. a follow-on launch with scalar warps but per-config registers)
    blocks = np.minimum(np.minimum(float(spec.max_blocks_per_sm), np.floor(spec.max_threads_per_sm / threads)),
                        np.minimum(np.floor(spec.regs_per_sm / (alloc * threads)), by_smem))
    return np.maximum(blocks, 1.0), reason, alloc, spilled


def _trip_cycles(p: Profile, c, spec: Spec, spilled):
    """Cycles per main-loop trip when c blocks share an SM."""
    warps = _f(p.num_warps)
    stages = _f(p.num_stages)
    tm, tn, tk = (_f(x) for x in p.tile)
    has_dot = tm > 0
    # warps tile the block's output as wm x wn; a slice below one 16x8 MMA wastes the rest
    wm = np.exp2(np.ceil(np.log2(warps) / 2.0))
    wn = warps / wm
    waste = np.where(has_dot, np.maximum(1.0, 16.0 * wm / np.maximum(tm, 1.0)) *
                     np.maximum(1.0, 8.0 * wn / np.maximum(tn, 1.0)), 1.0)
    flops = _f(p.tc_flops_step) * waste
    active = np.minimum(float(spec.subpartitions), c * np.minimum(warps, float(spec.subpartitions)))
    t_tc = c * flops / (spec.tc_flops_per_clk_subpartition * active)
    smem_reads = np.where(has_dot, 2.0 * (tm * tk * wn + tk * tn * wm), 0.0)
    t_smem = c * smem_reads / spec.smem_bytes_per_clk_sm
    loaded = _f(p.load_bytes_step) + spilled * 4.0 * 32.0 * warps  # spills go out and back each trip
    t_l2 = c * loaded / spec.l2_bytes_per_clk_sm
    transfer = loaded / spec.l2_bytes_per_clk_sm
    own_tc = flops / (spec.tc_flops_per_clk_subpartition * np.minimum(warps, float(spec.subpartitions)))
    t_lat = np.where(stages > 1, (spec.load_latency_clk + transfer) / np.maximum(stages - 1.0, 1.0),
                     spec.load_latency_clk + transfer + own_tc)
    t_lat = np.where(loaded > 0, t_lat, 0.0)
    alu = _f(p.alu_flops) / np.maximum(_f(p.k_steps), 1.0)
    t_alu = c * alu / (spec.fp32_flops_per_clk_sm * np.minimum(1.0, c * warps / 4.0))
    return _soft_max(t_tc, t_smem, t_l2, t_lat, t_alu, p=4.0) + 20.0


def _block_cycles(p: Profile, c, spec, spilled):
    steps = _f(p.k_steps)
    first = spec.load_latency_clk + _f(p.load_bytes_step) / spec.l2_bytes_per_clk_sm
    store = c * _f(p.store_bytes) / spec.l2_bytes_per_clk_sm + np.where(_f(p.store_bytes) > 0,
                                                                         spec.load_latency_clk / 2, 0.0)
    return steps * _trip_cycles(p, c, spec, spilled) + first + store + 8.0 * _f(p.atomics)


def unexplained(key, spec: Spec = A100):
    """A deterministic slowdown in [1, 1 + unexplained_max], mostly small, from the config's hash."""
    u = (np.asarray(key, np.uint64) >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return 1.0 + spec.unexplained_max * u * u


def launch_time(p: Profile, spec: Spec = A100):
    """(seconds, reason code) per config for one launch plus its follow-on launches."""
    c, reason, _, spilled = resources(p, spec)
    grid = _f(p.grid)
    slots = spec.sms * c
    full = np.floor(grid / slots)
    rest = grid - full * slots
    c_tail = np.minimum(c, np.ceil(rest / spec.sms))
    cycles = full * _block_cycles(p, c, spec, spilled) + \
        np.where(rest > 0, _block_cycles(p, np.maximum(c_tail, 1.0), spec, spilled), 0.0)
    t_sm = cycles / spec.clock_hz
    loads = p.dram_bytes(slots) if p.dram_bytes is not None else _f(p.loaded_bytes)
    t_dram = (loads + grid * _f(p.store_bytes)) / spec.dram_bytes_per_s
    t = _soft_max(t_sm, t_dram, p=4.0) * unexplained(p.key, spec) + spec.launch_overhead_s
    for e in p.extra:
        te, re = launch_time(e, spec)
        on = np.asarray(e.enabled, bool)
        t = t + np.where(on, te, 0.0)
        reason = np.where(on & (reason == OK), re, reason)
    return np.where(reason == OK, t, np.inf), reason
