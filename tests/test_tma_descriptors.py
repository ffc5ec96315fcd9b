"""Triton 3.0-3.3's TMA descriptors: 128 bytes in memory made on the host
(`create_1d/2d_tma_descriptor`, the driver's `fill_1d/2d_tma_descriptor`) or by a kernel
(`experimental_device_tensormap_create2d`), read by `tl._experimental_descriptor_load/store`."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton.tools.experimental_descriptor import (TmaDescKernelParam, create_1d_tma_descriptor,
                                                      create_2d_tma_descriptor)


@mt.jit
def scale_1d(x_desc, out_desc, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    x = tl._experimental_descriptor_load(x_desc, [start], [BLOCK], tl.float32)
    tl._experimental_descriptor_store(out_desc, x * 2 + 1, [start])


def test_host_descriptors_pad_loads_and_clip_stores_at_the_array_end():
    n = 1000                                  # not a multiple of the block: the last box hangs over
    x = np.arange(n, dtype=np.float32)
    out = np.full(n + 24, -5, np.float32)     # room past the described n elements
    xd = create_1d_tma_descriptor(mt.data_ptr(x), n, 256, 4)
    od = create_1d_tma_descriptor(mt.data_ptr(out), n, 256, 4)
    scale_1d[(4,)](xd, od, BLOCK=256)
    np.testing.assert_array_equal(out[:n], x * 2 + 1)
    assert (out[n:] == -5).all()              # the store through the descriptor stops at its dims
    assert "dims=[1000], block_dims=[256], element_size=4" in repr(xd)


@mt.jit
def tiled_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl._experimental_descriptor_load(a_desc, [m, k], [BM, BK], tl.float16)
        b = tl._experimental_descriptor_load(b_desc, [k, n], [BK, BN], tl.float16)
        acc = tl.dot(a, b, acc)
    tl._experimental_descriptor_store(c_desc, acc.to(tl.float16), [m, n])


def test_descriptors_in_byte_arrays_filled_by_the_driver_as_triton_3_0_did():
    rng = np.random.default_rng(0)
    M, N, K = 72, 40, 48                        # none a multiple of its block
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), 9, np.float16)
    descs = [np.empty(128, np.int8) for _ in range(3)]
    fill = mt.runtime.driver.active.utils.fill_2d_tma_descriptor
    fill(mt.data_ptr(a), M, K, 32, 32, 2, descs[0])
    fill(mt.data_ptr(b), K, N, 32, 32, 2, descs[1])
    fill(mt.data_ptr(c), M, N, 32, 32, 2, descs[2])
    tiled_matmul[(3, 2)](*descs, K, BM=32, BN=32, BK=32)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-2)


@mt.jit
def copy_through_workspace(workspace, src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Each program writes its own descriptors into the workspace, then copies its tile."""
    pid = tl.program_id(0)
    src_desc = workspace + pid * 256
    dst_desc = src_desc + 128
    tl.extra.cuda.experimental_device_tensormap_create2d(desc_ptr=src_desc, global_address=src, load_size=[BM, BN],
                                                         global_size=[M, N], element_ty=src.dtype.element_ty)
    tl.extra.cuda.experimental_device_tensormap_create2d(desc_ptr=dst_desc, global_address=dst, load_size=[BM, BN],
                                                         global_size=[M, N], element_ty=dst.dtype.element_ty)
    tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(src_desc)
    tile = tl._experimental_descriptor_load(src_desc, [pid * BM, 0], [BM, BN], tl.float32)
    tl._experimental_descriptor_store(dst_desc, tile + 1, [pid * BM, 0])


def test_descriptors_written_by_the_kernel_into_a_workspace():
    src = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
    dst = np.zeros_like(src)
    workspace = np.zeros(3 * 256, np.uint8)
    copy_through_workspace[(3,)](workspace, src, dst, 40, 8, BM=16, BN=8)
    np.testing.assert_array_equal(dst, src + 1)
    words = workspace.view("<i8").reshape(3, 2, 16)
    assert (words[:, :, 2] == 2).all() and (words[:, :, 4:6] == [40, 8]).all()     # rank 2, dims 40 x 8


@mt.jit
def load_one(desc, out, BLOCK: tl.constexpr):
    tl.store(out + tl.arange(0, BLOCK), tl._experimental_descriptor_load(desc, [0], [BLOCK], tl.float32))


def test_a_descriptor_used_against_what_it_was_made_for_is_refused():
    x = np.zeros(64, np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(mt.CompilationError, match=r"block shape \[32\] is not the descriptor's \[64\]"):
        load_one[(1,)](create_1d_tma_descriptor(mt.data_ptr(x), 64, 64, 4), out, BLOCK=32)
    with pytest.raises(mt.CompilationError, match="_experimental_descriptor_load: fp32 has 4-byte elements, the descriptor 2-byte ones"):
        load_one[(1,)](create_1d_tma_descriptor(mt.data_ptr(x), 64, 64, 2), out, BLOCK=64)
    with pytest.raises(mt.CompilationError, match="are not a descriptor"):
        load_one[(1,)](np.zeros(128, np.uint8), out, BLOCK=64)
    unseen = np.zeros(64, np.float32)          # neither an argument nor registered by data_ptr
    with pytest.raises(mt.CompilationError, match="in no array this launch can see"):
        load_one[(1,)](create_1d_tma_descriptor(unseen.__array_interface__["data"][0], 64, 64, 4), out, BLOCK=64)
    assert (out == 0).all()


@pytest.mark.parametrize("args, message", [
    (([64], [64, 8], 4), "1 dims but 2 block dims"),
    (([64], [512], 4), "block dims between 1 and 256"),
    (([64], [64], 3), "element_size must be 1, 2, 4 or 8"),
    (([], [], 4), "expected 1 to 5 dimensions"),
])
def test_host_descriptor_arguments_are_checked(args, message):
    x = np.zeros(64, np.float32)
    with pytest.raises((ValueError, TypeError), match=message):
        TmaDescKernelParam(mt.data_ptr(x), *args)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        create_2d_tma_descriptor(mt.data_ptr(x) + 4, 4, 8, 4, 8, 4)
    with pytest.raises(ValueError, match="address of no array"):
        mt.runtime.driver.active.utils.fill_1d_tma_descriptor(mt.data_ptr(x), 64, 64, 4, 12345)


@mt.jit
def scaled_rows(x_desc, scale_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    x = tl._experimental_descriptor_load(x_desc, [m, 0], [BM, BN], tl.float8e4nv)
    s = tl._experimental_descriptor_load(scale_desc, [m], [BM], tl.float32)
    tl._experimental_descriptor_store(out_desc, x.to(tl.float32) * s[:, None], [m, 0])


class BufferParam:
    """A library's own descriptor holder (as FBGEMM's TMA helper wraps a CPU buffer): only
    `tma_desc_cpu_ptr()`, the address of bytes filled through the driver."""

    def __init__(self):
        self.buffer = np.empty(128, np.int8)

    def tma_desc_cpu_ptr(self):
        return mt.data_ptr(self.buffer)


def test_descriptors_filled_in_the_grid_function_through_a_library_s_own_holder():
    assert "nv_tma_desc_type" in dir(tl)          # how such libraries learn descriptors pass by value
    rng = np.random.default_rng(1)
    M, N = 48, 32
    x = mt.reinterpret(rng.integers(0, 0x7E, (M, N), dtype=np.uint8), tl.float8e4nv)   # finite fp8 codes
    scale = rng.random(M, np.float32)
    out = np.zeros((M, N), np.float32)
    params = {name: BufferParam() for name in ("x", "scale", "out")}
    fill_2d = mt.runtime.driver.active.utils.fill_2d_tma_descriptor
    fill_1d = mt.runtime.driver.active.utils.fill_1d_tma_descriptor

    def grid(meta):                                 # filled when the block size is known, as there
        fill_2d(mt.data_ptr(x), M, N, meta["BM"], N, 1, params["x"].tma_desc_cpu_ptr())
        fill_1d(mt.data_ptr(scale), M, meta["BM"], 4, params["scale"].tma_desc_cpu_ptr())
        fill_2d(mt.data_ptr(out), M, N, meta["BM"], N, 4, params["out"].tma_desc_cpu_ptr())
        return (mt.cdiv(M, meta["BM"]),)

    scaled_rows[grid](params["x"], params["scale"], params["out"], BM=32, BN=N)
    np.testing.assert_allclose(out, x.astype(np.float32) * scale[:, None], rtol=1e-6)

    class Unregistered:
        def tma_desc_cpu_ptr(self):
            return np.zeros(128, np.int8).__array_interface__["data"][0]
    with pytest.raises(TypeError, match="argument 'x_desc': its tma_desc_cpu_ptr"):
        scaled_rows[(1,)](Unregistered(), params["scale"], params["out"], BM=32, BN=N)


def test_descriptor_bytes_that_lie_cost_only_an_error():
    """A descriptor is data: one that claims more than its array, or whose words were changed,
    is refused when read; nothing outside the array is read."""
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros(64, np.float32)
    too_long = create_1d_tma_descriptor(mt.data_ptr(x), 2 ** 40, 64, 4)

    @mt.jit
    def load_at(desc, out, OFF, BLOCK: tl.constexpr):
        tl.store(out + tl.arange(0, BLOCK), tl._experimental_descriptor_load(desc, [OFF], [BLOCK], tl.float32))
    with pytest.raises(mt.OutOfBoundsError, match="out of bounds"):
        load_at[(1,)](too_long, out, 1024, BLOCK=64)
    changed = create_1d_tma_descriptor(mt.data_ptr(x), 1000, 64, 4)
    changed.desc.view("<i8")[2] = 7                  # rank 7
    with pytest.raises(mt.CompilationError, match="are not a descriptor"):
        load_at[(1,)](changed, out, 0, BLOCK=64)
    assert not out.any()
