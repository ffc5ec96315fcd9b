"""Triton's python/test/unit/language/test_e8m0_compile_errors.py, ported to minitriton:
`tl.float8e8m0fnu` (the MX formats' scale) is a storage-only type: arithmetic on it and a cast
from it are compile errors.

Source: triton-lang/triton (MIT licence), the stored copy at commit
18855d0f9db7f62583924a3c38c8cc9a45b51347.  Kernels unchanged.  Triton compiles them for an AMD
gfx950 target; the type's rules do not depend on the target, so `GPUTarget` is minitriton's.
"""
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.language.target_info import GPUTarget   # was: from triton.backends.compiler import GPUTarget
from minitriton.compiler.errors import CompilationError


def test_e8m0_is_storage_only_dtype():
    assert tl.float8e8m0fnu.is_storage_only()
    assert not tl.float8e8m0fnu.is_floating()


def test_e8m0_arithmetic_rejected(fresh_triton_cache):

    @triton.jit
    def kernel(scale, out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(scale + offs)
        y = x + x
        tl.store(out + offs, y)

    with pytest.raises(CompilationError) as e:
        triton.compile(
            triton.compiler.ASTSource(
                fn=kernel,
                signature={"scale": "*fp8e8m0fnu", "out": "*fp8e8m0fnu", "BLOCK": "constexpr"},
                constexprs={"BLOCK": 16},
            ),
            target=GPUTarget("hip", "gfx950", 64),
        )

    assert "unexpected type fp8e8m0fnu and fp8e8m0fnu" in str(e.value.__cause__ or e.value)


def test_e8m0_cast_rejected(fresh_triton_cache):

    @triton.jit
    def kernel(scale, out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(scale + offs)
        y = x.to(tl.float32)
        tl.store(out + offs, y)

    with pytest.raises(CompilationError) as e:
        triton.compile(
            triton.compiler.ASTSource(
                fn=kernel,
                signature={"scale": "*fp8e8m0fnu", "out": "*fp32", "BLOCK": "constexpr"},
                constexprs={"BLOCK": 16},
            ),
            target=GPUTarget("hip", "gfx950", 64),
        )

    assert "cannot cast fp8e8m0fnu" in str(e.value.__cause__ or e.value)
