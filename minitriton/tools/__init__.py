"""`triton.tools`: host-side helpers of Triton's that kernels' callers use (tensor descriptors, and
Triton 3.1-3.3's TMA descriptors)."""
from . import tensor_descriptor, experimental_descriptor

__all__ = ["tensor_descriptor", "experimental_descriptor"]
