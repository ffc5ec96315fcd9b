"""`triton.language.target_info`: what the kernel is compiled for, asked at compile time
(`if target_info.cuda_capability_geq(9, 0):` guards a path that needs Hopper).  minitriton runs
every kernel as it would run on the GPU it models, HypoGPU, an A100: CUDA, compute capability
8.0, warps of 32 (runtime/driver.py reports the same target)."""
from __future__ import annotations

import dataclasses

from ..aggregates import constexpr_function


@dataclasses.dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: int | str
    warp_size: int


TARGET = GPUTarget("cuda", 80, 32)


def current_target() -> GPUTarget:
    return TARGET


@constexpr_function
def is_cuda():
    return TARGET.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major, minor=0):
    return TARGET.backend == "cuda" and TARGET.arch >= major * 10 + minor


@constexpr_function
def is_hip():
    return TARGET.backend == "hip"


@constexpr_function
def is_hip_cdna3():
    return TARGET.arch == "gfx942"


@constexpr_function
def is_hip_cdna4():
    return TARGET.arch == "gfx950"
