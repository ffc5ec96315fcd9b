"""Triton's python/test/unit/runtime/test_jit.py, ported to minitriton: a pre-run hook added to a
kernel sees every launch's arguments and can refuse the launch.

Source: triton-lang/triton (MIT licence), the stored copy at commit
0b057fca1b9988afcfecd535b67d36ce92c0a5e9.  Kernel unchanged; host code ours on numpy (the
torch.Tensor subclass is a numpy.ndarray subclass).
"""
import itertools

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


def test_pre_call_hooks(device):

    @triton.jit
    def add_kernel(
        in_ptr0,
        in_ptr1,
        out_ptr,
        n_elements,
        BLOCK_SIZE: "tl.constexpr",
    ):
        pid = tl.program_id(axis=0)
        block_start = pid * BLOCK_SIZE
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(in_ptr0 + offsets, mask=mask)
        y = tl.load(in_ptr1 + offsets, mask=mask)
        output = x + y
        tl.store(out_ptr + offsets, output, mask=mask)

    class MyTensor(np.ndarray):
        pass

    def my_hook(*args, **kwargs):
        for arg in itertools.chain(args, kwargs.values()):
            if isinstance(arg, MyTensor):
                raise Exception("MyTensor is not allowed")

    add_kernel.add_pre_run_hook(my_hook)

    x = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    y = x.view(MyTensor)
    out = np.zeros_like(x)
    with pytest.raises(Exception):
        add_kernel[(4, )](x, y, out, 4, 4)
    # (ours) the hook lets other launches through, and refuses what is not callable
    add_kernel[(4, )](x, x, out, 4, 4)
    np.testing.assert_array_equal(out, x + x)
    with pytest.raises(TypeError, match="add_pre_run_hook needs a callable"):
        add_kernel.add_pre_run_hook("not a function")
