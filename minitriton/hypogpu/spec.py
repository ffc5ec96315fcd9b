"""The hardware numbers of HypoGPU, in one place.

Magnitudes follow an A100 (SXM, 40 GB): 108 SMs at 1.41 GHz, 312 TFLOP/s of fp16 tensor-core
work (2048 FLOP per clock per SM, 512 per sub-partition), 2 TB/s of DRAM, a 40 MB L2.  The
model built on them is designed to give a landscape with structure, interactions and noise;
it does not predict any real GPU.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str = "HypoGPU (A100-class)"
    sms: int = 108
    clock_hz: float = 1.41e9
    subpartitions: int = 4                  # tensor-core sub-partitions per SM; one warp drives one
    tc_flops_per_clk_subpartition: int = 512  # fp16 dense: 4 x 512 x 108 x 1.41e9 = 312 TFLOP/s
    fp32_flops_per_clk_sm: int = 128        # non-tensor arithmetic (softmax, epilogues)
    dram_bytes_per_s: float = 2.0e12
    mem_bus_width_bits: int = 5120          # HBM2e's; with the clock below, 2 TB/s at two transfers a clock
    l2_bytes: int = 40 << 20
    l2_bytes_per_clk_sm: float = 32.0       # each SM's share of L2 bandwidth (~4.9 TB/s in all)
    smem_bytes_per_clk_sm: float = 128.0
    smem_per_sm: int = 164 * 1024
    smem_per_block: int = 163 * 1024
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    max_threads_per_sm: int = 2048
    max_threads_per_block: int = 1024
    max_blocks_per_sm: int = 32
    load_latency_clk: float = 500.0         # a global load's latency before its bytes arrive
    launch_overhead_s: float = 4e-6
    unexplained_max: float = 0.06           # the deterministic config-dependent slowdown: 1 .. 1.06

    @property
    def tc_peak_flops(self) -> float:
        return self.sms * self.subpartitions * self.tc_flops_per_clk_subpartition * self.clock_hz

    @property
    def mem_clock_hz(self) -> float:
        return self.dram_bytes_per_s * 8 / (2 * self.mem_bus_width_bits)

    @property
    def ridge_flops_per_byte(self) -> float:
        return self.tc_peak_flops / self.dram_bytes_per_s


A100 = Spec()
