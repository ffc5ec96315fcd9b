"""`triton.runtime.driver`: the device Triton's tutorials and tests ask about, answered for the
GPU minitriton models (HypoGPU, A100-class: minitriton/hypogpu/spec.py).  Tutorial 02 sizes its
persistent grid from `driver.active.utils.get_device_properties(...)` and the target's warp
size; arrays live on the host, so the active device is the CPU's (index 0)."""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..hypogpu import A100
from ..language.target_info import TARGET, GPUTarget
from ..testing import do_bench
from ..addresses import registered_array
from ..tools import experimental_descriptor as tma

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
                "sm_clock_rate": int(A100.clock_hz / 1e3), "max_threads_per_block": A100.max_threads_per_block,
                "mem_clock_rate": int(A100.mem_clock_hz / 1e3), "mem_bus_width": A100.mem_bus_width_bits}

    # Triton 3.0-3.3's host-side TMA descriptors: `desc` is a numpy array of bytes (3.0) or the
    # address of one (3.1 on: an address from minitriton.data_ptr)
    @staticmethod
    def fill_1d_tma_descriptor(ptr, dim, block_dim, element_size, desc):
        tma.fill(_descriptor_bytes(desc, "fill_1d_tma_descriptor"), ptr, [dim], [block_dim], element_size,
                 "fill_1d_tma_descriptor")

    @staticmethod
    def fill_2d_tma_descriptor(ptr, dim1, dim0, block_dim1, block_dim0, element_size, desc):
        tma.fill(_descriptor_bytes(desc, "fill_2d_tma_descriptor"), ptr, [dim1, dim0], [block_dim1, block_dim0],
                 element_size, "fill_2d_tma_descriptor")


def _descriptor_bytes(desc, what) -> np.ndarray:
    if isinstance(desc, np.ndarray):
        return desc
    if isinstance(desc, (int, np.integer)) and not isinstance(desc, bool):
        found = registered_array(int(desc))
        if found is None:
            raise ValueError(f"{what}: desc={int(desc):#x} is the address of no array minitriton knows: pass the "
                             f"numpy array itself, or an address from minitriton.data_ptr(array)")
        return found
    raise TypeError(f"{what}: desc must be a numpy array of bytes or its address, got {type(desc).__name__}")


class _Event:
    """A timing event on the host clock (torch.cuda.Event's record / elapsed_time, in ms)."""

    def __init__(self, enable_timing: bool = False, **_):
        self.enable_timing, self.t = enable_timing, None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end: "_Event") -> float:
        if self.t is None or end.t is None:
            raise RuntimeError("elapsed_time: both events must have been recorded")
        return (end.t - self.t) * 1e3


class _DeviceInterface:
    """What `driver.active.get_device_interface()` gives (torch.cuda on a GPU), for benchmarking
    code of one's own: launches here finish before they return, so there is nothing to wait for,
    and events read the host's clock."""
    Event = _Event

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def set_device(device):
        if device not in (0, "cpu"):
            raise ValueError(f"set_device: there is one device (0), got {device!r}")


# what `get_empty_cache_for_benchmark` gives for `clear_cache` to overwrite between timings: Triton
# takes 256 MB, several times a GPU's L2; a CPU's last-level cache is tens of MB, so 64 MB flushes it
FLUSH_BYTES = 64 << 20


class ActiveDriver:
    utils = _Utils()

    def get_current_stream(self, device=None) -> int:
        """The stream launches go to: there is one, and it is 0."""
        return 0

    def get_device_interface(self):
        return _DeviceInterface()

    def get_empty_cache_for_benchmark(self) -> np.ndarray:
        return np.empty(FLUSH_BYTES // 4, np.int32)

    def clear_cache(self, cache: np.ndarray):
        cache.fill(0)

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
    """`triton.runtime.driver`: `.default` is the one device there is, and `.active` too unless
    `set_active` names another object to answer for it (a test's stand-in, as Triton's tests swap
    drivers); launches run on HypoGPU whatever `.active` is.  `reset_active` goes back."""

    def __init__(self):
        self.default = ActiveDriver()
        self._active = None

    @property
    def active(self):
        return self.default if self._active is None else self._active

    def set_active(self, driver):
        if driver is None:
            raise TypeError("set_active: expected a driver object, got None (reset_active() restores the default)")
        self._active = driver

    def reset_active(self):
        self._active = None


driver = DriverConfig()
