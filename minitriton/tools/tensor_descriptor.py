"""`triton.tools.tensor_descriptor.TensorDescriptor`: a tensor descriptor built on the host and
passed to a kernel as an argument, where it arrives as `tl.make_tensor_descriptor` would have
made it (minitriton/descriptors.py has the semantics).  Strides are in elements, as torch's
`tensor.stride()`; `from_tensor` takes them from a numpy array's byte strides."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["TensorDescriptor"]

MAX_BLOCK_NUMEL = 1 << 20        # Triton's TRITON_MAX_TENSOR_NUMEL


class AlignmentError(ValueError, AssertionError):
    """Memory TMA cannot address (Triton asserts it: an AssertionError there, a ValueError too here)."""


@dataclass
class TensorDescriptor:
    base: np.ndarray
    shape: list
    strides: list
    block_shape: list
    padding: str = field(default="zero")
    round_f32_to_tf32: bool = field(default=False)      # Triton 3.7's option (below)

    def __post_init__(self):
        if not isinstance(self.base, np.ndarray):
            raise TypeError(f"TensorDescriptor: base must be a numpy array, got {type(self.base).__name__}")
        self.shape, self.strides, self.block_shape = list(self.shape), list(self.strides), list(self.block_shape)
        ndim = len(self.shape)
        if not 1 <= ndim <= 5:
            raise ValueError(f"TensorDescriptor: expected 1 to 5 dimensions, got shape {self.shape}")
        if len(self.strides) != ndim:
            raise ValueError(f"TensorDescriptor: expected {ndim} strides, got {self.strides}")
        if len(self.block_shape) != ndim:
            raise ValueError(f"TensorDescriptor: expected block_shape to have {ndim} dimensions, got {self.block_shape}")
        for what in ("shape", "strides", "block_shape"):
            for v in getattr(self, what):
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise TypeError(f"TensorDescriptor: {what} must be integers, got {getattr(self, what)}")
        for i, b in enumerate(self.block_shape):
            if b <= 0 or b & (b - 1):
                raise ValueError(f"TensorDescriptor: Shape element {i} must be a power of 2 (block_shape must be "
                                 f"powers of 2, got {self.block_shape})")
        if int(np.prod(self.block_shape)) > MAX_BLOCK_NUMEL:
            raise ValueError(f"TensorDescriptor: numel ({int(np.prod(self.block_shape))}) exceeds triton maximum "
                             f"tensor numel ({MAX_BLOCK_NUMEL})")
        item = self.base.dtype.itemsize
        if self.base.__array_interface__["data"][0] % 16:
            raise AlignmentError("TensorDescriptor: base must be 16-byte aligned, as TMA needs")
        if any(stride * item % 16 for stride in self.strides[:-1]):
            raise AlignmentError(f"TensorDescriptor: strides must be 16-byte aligned, as TMA needs: strides "
                                 f"{self.strides} of {item}-byte elements")
        if self.strides[-1] != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), got {self.strides}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', got {self.padding!r}")
        if self.round_f32_to_tf32:      # which tie rule TMA's conversion uses is not pinned down here
            raise NotImplementedError("TensorDescriptor(round_f32_to_tf32=True) is not supported by minitriton yet "
                                      "(round in the kernel with tl.extra.cuda.round_f32_to_tf32(x, 'rn' or 'rna'))")

    @staticmethod
    def from_tensor(tensor: np.ndarray, block_shape, padding="zero", round_f32_to_tf32=False) -> "TensorDescriptor":
        """A descriptor of the whole array (its shape and strides)."""
        if not isinstance(tensor, np.ndarray):
            raise TypeError(f"TensorDescriptor.from_tensor: expected a numpy array, got {type(tensor).__name__}")
        if any(s % tensor.itemsize for s in tensor.strides):
            raise ValueError(f"TensorDescriptor.from_tensor: strides {tensor.strides} are not whole elements")
        return TensorDescriptor(tensor, list(tensor.shape), [s // tensor.itemsize for s in tensor.strides],
                                list(block_shape), padding, round_f32_to_tf32)
