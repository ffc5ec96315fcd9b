"""Triton's python/tutorials/11-programmatic-dependent-launch.py, its `validate` ported to
minitriton: vector add under grid dependence control (`tl.extra.cuda.gdc_wait` /
`gdc_launch_dependents`, launched with `launch_pdl=True`).  Launches run one after another here,
so both are no-ops and the result must simply be right, with and without them.

Source: triton-lang/triton (MIT licence), the stored copy at commit
03659155053e94b26ea018b214cf4abbf717c92e.  Kernel unchanged; host code ours on numpy (Triton
validates on Hopper and later only, at 1024 elements; here also a ragged 5000).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


# In this example
@triton.jit
def add_kernel(x_ptr,  #
               y_ptr,  #
               output_ptr,  #
               n_elements,  #
               BLOCK_SIZE: tl.constexpr,  #
               USE_GDC: tl.constexpr,  #
               ):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    if USE_GDC:
        # GDC wait waits for ALL programs in the the prior kernel to complete before continuing.
        # This ensures any memory operations happen before the wait in program order,
        # e.g. if the prior kernel writes to a or b the new values will be visible.
        tl.extra.cuda.gdc_wait()

    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if USE_GDC:
        # GDC launch dependents is used to launch dependent kernels.
        # Once GDC launch has been issued at least once on all active hardware SMs,
        # it is possible for the next kernel to begin if there are enough resources.
        # Note this provides no additional memory-ordering guaruntees, unlike `gdc_wait`.
        tl.extra.cuda.gdc_launch_dependents()
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x, y, launch_pdl: bool = True):
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    add_kernel[grid](
        x, y, output, n_elements, BLOCK_SIZE=1024,
        USE_GDC=launch_pdl,  # set constexpr in kernel to use grid dependence control
        launch_pdl=launch_pdl,  # launch kernel with PDL flag set enabled
    )
    return output


@pytest.mark.parametrize("n_elements", [1024, 5000])
@pytest.mark.parametrize("launch_pdl", [True, False])
def test_validate(n_elements, launch_pdl):
    rng = np.random.default_rng(n_elements)
    x = rng.random(n_elements, dtype=np.float32)
    y = rng.random(n_elements, dtype=np.float32)
    np.testing.assert_array_equal(add(x, y, launch_pdl), x + y)
