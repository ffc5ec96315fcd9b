"""`triton.runtime.jit`: where code written for Triton imports the JIT from (`from triton.runtime.jit
import JITFunction`, for isinstance checks and decorators of its own)."""
from ..host import reinterpret
from ..addresses import TensorWrapper
from ..interface import KernelInterface
from ..jit import JITFunction, jit

__all__ = ["JITFunction", "KernelInterface", "jit", "reinterpret", "TensorWrapper"]
