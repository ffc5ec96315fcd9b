"""Tensor descriptors beyond Triton's own tests (tests/triton/test_tensor_descriptor.py): their
atomic reductions, the refusals Triton makes when it compiles one, and the host-side class."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton.tools.tensor_descriptor import TensorDescriptor


@mt.jit
def add_box(out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(out, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    desc.atomic_add([tl.program_id(0) * BM - 2, 1], tl.full((BM, BN), 1.0, tl.float32))


def test_atomic_add_through_a_descriptor_drops_what_lies_outside():
    out = np.zeros((6, 8), np.float32)
    add_box[(2,)](out, 6, 8, BM=4, BN=8)     # boxes rows [-2, 2) and [2, 6), columns [1, 9)
    expect = np.zeros((6, 8), np.float32)
    expect[0:6, 1:8] = 1
    np.testing.assert_array_equal(out, expect)


@mt.jit
def copy_box(src, dst, M, N, S0, S1, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    d = tl.make_tensor_descriptor(src, shape=[M, N], strides=[S0, S1], block_shape=[BM, BN], padding_option=PAD)
    tl.store(dst + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], d.load([0, 0]))


@pytest.mark.parametrize("args, message", [
    (dict(S1=2, BN=8, PAD="zero", dtype=np.float32), "last dimension must be contiguous"),
    (dict(S1=1, BN=2, PAD="zero", dtype=np.float32), "at least 16 bytes in the last dimension"),
    (dict(S1=1, BN=8, PAD="nan", dtype=np.int32), "'nan' is not supported for integer"),
    (dict(S1=1, BN=8, PAD="ones", dtype=np.float32), "padding_option must be 'zero' or 'nan'"),
])
def test_descriptors_triton_would_not_compile_are_refused(args, message):
    src = np.zeros(64, args["dtype"])
    dst = np.full(64, 7, args["dtype"])
    with pytest.raises(mt.CompilationError, match=message):
        copy_box[(1,)](src, dst, 4, 8, 8, args["S1"], BM=4, BN=args["BN"], PAD=args["PAD"])
    assert (dst == 7).all()


def test_offsets_and_values_must_match_the_block():
    @mt.jit
    def wrong_offsets(x, BN: tl.constexpr):
        d = tl.make_tensor_descriptor(x, shape=[BN], strides=[1], block_shape=[BN])
        d.store([0, 0], tl.zeros((BN,), tl.float32))

    @mt.jit
    def wrong_value(x, BN: tl.constexpr):
        d = tl.make_tensor_descriptor(x, shape=[BN], strides=[1], block_shape=[BN])
        d.store([0], tl.zeros((2 * BN,), tl.float32))

    x = np.zeros(8, np.float32)
    with pytest.raises(mt.CompilationError, match="offsets must be a list of 1 values"):
        wrong_offsets[(1,)](x, BN=8)
    with pytest.raises(mt.CompilationError, match="not the descriptor's block shape"):
        wrong_value[(1,)](x, BN=8)


def test_host_descriptor_from_an_array_and_its_checks():
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    d = TensorDescriptor.from_tensor(a[:, 4:], [2, 4])
    assert d.shape == [4, 4] and d.strides == [8, 1] and d.block_shape == [2, 4]

    @mt.jit
    def read(desc, out):
        tl.store(out + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], desc.load([3, 2]))

    out = np.full((2, 4), -1, np.float32)
    read[(1,)](d, out)                        # rows 3-4 (4 is outside), columns 2-5 (4 and 5 outside)
    np.testing.assert_array_equal(out, [[30, 31, 0, 0], [0, 0, 0, 0]])
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        TensorDescriptor(a, [4, 4], [16, 2], [2, 4])
    with pytest.raises(ValueError, match="powers of 2"):
        TensorDescriptor(a, [4, 8], [8, 1], [3, 4])
    with pytest.raises(TypeError, match="numpy array"):
        TensorDescriptor([1, 2], [2], [1], [2])
    # what TMA cannot address, refused as Triton asserts it (an AssertionError there; a ValueError here too)
    with pytest.raises(AssertionError, match="base must be 16-byte aligned"):
        TensorDescriptor.from_tensor(a[:, 2:], [2, 4])
    with pytest.raises(ValueError, match="strides must be 16-byte aligned"):
        TensorDescriptor.from_tensor(np.zeros((4, 6), np.float16), [2, 8])
    with pytest.raises(ValueError, match="Shape element 1 must be a power of 2"):
        TensorDescriptor.from_tensor(a, [2, 6])


def test_row_gather_pads_rows_outside_and_scatter_skips_them():
    @mt.jit
    def gather_scatter(src, dst, idx, R: tl.constexpr, C: tl.constexpr):
        rows = tl.load(idx + tl.arange(0, 4))
        got = tl.make_tensor_descriptor(src, [R, C], [C, 1], [1, 4]).gather(rows, 2)
        tl.make_tensor_descriptor(dst, [R, C], [C, 1], [1, 4]).scatter(got + 100, rows, 2)

    src = np.arange(24, dtype=np.float32).reshape(4, 6)
    dst = np.zeros((4, 6), np.float32)
    gather_scatter[(1,)](src, dst, np.array([3, -1, 0, 4], np.int32), R=4, C=6)
    expect = np.zeros((4, 6), np.float32)
    expect[3, 2:6] = src[3, 2:6] + 100        # row 3, columns 2-5 (6 and 7 fall outside)
    expect[0, 2:6] = src[0, 2:6] + 100        # rows -1 and 4 are outside: read as zero, not written
    np.testing.assert_array_equal(dst, expect)

    @mt.jit
    def wide_block(src, dst):
        tl.make_tensor_descriptor(src, [4, 8], [8, 1], [2, 4]).gather(tl.arange(0, 2), 0)

    with pytest.raises(mt.CompilationError, match=r"block is one row"):
        wide_block[(1,)](np.zeros(32, np.float32), dst)
