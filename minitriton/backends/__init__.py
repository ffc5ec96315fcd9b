"""`triton.backends`: where code written for Triton takes the compile target's type from
(`from triton.backends.compiler import GPUTarget`, to pass `triton.compile(src, target=...)`).
minitriton has one backend, the GPU HypoGPU models (language/target_info.py)."""
from . import compiler  # noqa: F401
