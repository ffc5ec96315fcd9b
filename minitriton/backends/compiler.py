"""`triton.backends.compiler`: the compile target's type, `GPUTarget(backend, arch, warp_size)`,
the same class `triton.runtime.driver.active.get_current_target()` returns."""
from ..language.target_info import GPUTarget  # noqa: F401

__all__ = ["GPUTarget"]
