"""`triton.runtime.driver`: the device Triton's tutorials and tests ask about, answered for the
GPU minitriton models (HypoGPU, A100-class: minitriton/hypogpu/spec.py).  Tutorial 02 sizes its
persistent grid from `driver.active.utils.get_device_properties(...)` and the target's warp
size; arrays live on the host, so the active device is the CPU's (index 0)."""
from __future__ import annotations

import dataclasses

from ..hypogpu import A100
from ..language.target_info import TARGET, GPUTarget
from ..testing import do_bench

WARP_SIZE = TARGET.warp_size


@dataclasses.dataclass(frozen=True)
class Device:
    """What `get_active_torch_device()` gives (torch's device has a type and an index)."""
    type: str = "cpu"
    index: int = 0

    def __str__(self):
        return self.type


class _Utils:
    @staticmethod
    def get_device_properties(device=0) -> dict:
        return {"multiprocessor_count": A100.sms, "max_shared_mem": A100.smem_per_block,
                "max_num_regs": A100.regs_per_sm, "warpSize": WARP_SIZE,
                "sm_clock_rate": int(A100.clock_hz / 1e3), "max_threads_per_block": A100.max_threads_per_block}


class ActiveDriver:
    utils = _Utils()

    def get_current_target(self) -> GPUTarget:
        return TARGET

    def get_active_torch_device(self) -> Device:
        return Device()

    def get_current_device(self) -> int:
        return 0

    def get_benchmarker(self):
        return do_bench

    def is_active(self) -> bool:
        return True


class DriverConfig:
    """`triton.runtime.driver`: `.active` is the one device there is."""
    active = ActiveDriver()


driver = DriverConfig()
