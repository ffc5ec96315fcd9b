"""Loop-invariant code motion (minitriton/hoisting.py): what moves, what stays, same numbers."""
import ast
import inspect
import textwrap

import numpy as np

import minitriton as mt
import minitriton.language as tl
from minitriton import hoisting


def _hoisted_source(kernel):
    fdef = ast.parse(textwrap.dedent(inspect.getsource(kernel.fn))).body[0]
    hoisting.hoist_invariants(fdef, kernel.fn.__globals__)
    return fdef


@mt.jit
def _scaled_rows(X, Y, n_rows, stride, scale, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(n_rows):
        x = tl.load(X + r * stride + cols[None, :] * 1, mask=cols[None, :] < stride)   # cols[None, :] moves
        w = tl.zeros((1, BLOCK), tl.float32) + scale                                    # moves (pure call)
        cols = cols + 0 if r < 0 else cols       # a conditional expression stays, and binds cols in the loop
        tl.store(Y + r * stride + tl.arange(0, BLOCK)[None, :], x * w, mask=tl.arange(0, BLOCK)[None, :] < stride)


def test_invariant_pure_parts_move_before_the_loop_and_the_rest_stays():
    fdef = _hoisted_source(_scaled_rows)
    loop = next(i for i, s in enumerate(fdef.body) if isinstance(s, ast.For))
    moved = [ast.unparse(s.value) for s in fdef.body[:loop] if isinstance(s, ast.Assign)
             and s.targets[0].id.startswith(hoisting.PREFIX)]
    assert "tl.zeros((1, BLOCK), tl.float32) + scale" in moved
    assert "tl.arange(0, BLOCK)[None, :]" in moved
    assert moved.count("tl.arange(0, BLOCK)[None, :]") == 1          # the same expression twice: one name
    body = "\n".join(ast.unparse(s) for s in fdef.body[loop].body)
    assert "cols[None, :]" in body                                   # cols is rebound in the loop: it stays
    assert "tl.load(" in body and "r * stride" in body                # loads and loop-variant parts stay


def test_hoisted_kernel_computes_the_same_numbers():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 24)).astype(np.float32)
    y = np.zeros_like(x)
    _scaled_rows[(1,)](x, y, 5, 24, 2.5, BLOCK=32)
    np.testing.assert_allclose(y, x * 2.5, rtol=1e-6)


@mt.jit
def _nested(X, Y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(pid + 1):                      # divergent trip counts: the loop narrows to fewer programs
        base = X + i * BLOCK
        for j in range(2):
            acc += tl.load(base + offs + j * 0)   # `base + offs` is invariant in the inner loop only
    tl.store(Y + pid * BLOCK + offs, acc)


def test_nested_divergent_loops_keep_their_numbers():
    fdef = _hoisted_source(_nested)
    outer = next(s for s in fdef.body if isinstance(s, ast.For))
    inner_moves = [ast.unparse(s.value) for s in outer.body if isinstance(s, ast.Assign)
                   and s.targets[0].id.startswith(hoisting.PREFIX)]
    assert "base + offs" in inner_moves
    x = np.arange(4 * 8, dtype=np.float32)
    y = np.zeros(4 * 8, np.float32)
    _nested[(4,)](x, y, 4, BLOCK=8)
    want = np.stack([2 * x.reshape(4, 8)[:p + 1].sum(0) for p in range(4)]).reshape(-1)
    np.testing.assert_array_equal(y, want)
    assert _nested.last_launch["path"] == "lockstep"


def test_a_local_name_that_shadows_the_language_is_not_trusted():
    src = textwrap.dedent("""
        def k(X, n):
            tl = helper()
            for i in range(n):
                y = tl.arange(0, 4) + 1
    """)
    fdef = ast.parse(src).body[0]
    hoisting.hoist_invariants(fdef, {"tl": tl})
    assert not any(isinstance(s, ast.Assign) and s.targets[0].id.startswith(hoisting.PREFIX) for s in fdef.body)
