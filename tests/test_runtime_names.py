"""Names of Triton's runtime that host code written for Triton reaches for: the `triton.runtime.jit`
and `triton.runtime.errors` modules, `TensorWrapper`, the driver's stream, device interface and
cache flush, Triton 3.2's warp-specialisation settings of a Config, and the runtime's hooks
(tests/triton/test_launch.py has Triton's own tests of them)."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def double(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)


def test_runtime_jit_and_errors_are_modules_as_in_triton():
    from minitriton.runtime.errors import InterpreterError, OutOfResources

    assert mt.runtime.jit.JITFunction is mt.JITFunction and mt.runtime.jit.jit is mt.jit
    assert OutOfResources is mt.OutOfResources and InterpreterError is mt.InterpreterError
    assert mt.runtime.errors.OutOfResources is OutOfResources


def test_a_tensor_wrapper_launches_as_its_memory_seen_as_its_type():
    raw = np.array([0x38, 0x40, 0xB8, 0x00], np.uint8)        # fp8e4nv bits of 1, 2, -1, 0
    wrapped = mt.runtime.jit.TensorWrapper(raw, tl.float8e4nv)
    assert isinstance(wrapped, mt.runtime.jit.TensorWrapper) and wrapped.dtype is tl.float8e4nv
    double[(1,)](wrapped, N=4)
    np.testing.assert_array_equal(raw, [0x40, 0x48, 0xC0, 0x00])  # 2, 4, -2, 0, written through the view
    with pytest.raises(ValueError, match="elements are 1 bytes but fp16"):
        mt.runtime.jit.TensorWrapper(raw, tl.float16)


def test_the_driver_answers_benchmarking_code_of_ones_own():
    active = mt.runtime.driver.active
    assert active.get_current_stream() == 0
    device = active.get_device_interface()
    start, end = device.Event(enable_timing=True), device.Event(enable_timing=True)
    start.record()
    device.synchronize()
    end.record()
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    with pytest.raises(RuntimeError, match="both events must have been recorded"):
        start.elapsed_time(device.Event())
    cache = active.get_empty_cache_for_benchmark()
    cache[:8] = 7
    active.clear_cache(cache)
    assert cache.nbytes >= 32 << 20 and not cache[:8].any()


def test_warp_specialisation_settings_of_a_config_are_kept_and_launch():
    plain = mt.Config({"N": 4}, num_warps=4)
    spec = mt.Config({"N": 4}, num_warps=4, num_consumer_groups=2, num_buffers_warp_spec=3)
    assert spec != plain and len({spec, plain}) == 2          # distinct configs, as Triton times them apart
    assert spec.all_kwargs() == {"N": 4, "num_warps": 4, "num_stages": 3, "num_consumer_groups": 2,
                                 "num_buffers_warp_spec": 3}
    assert "num_consumer_groups=2" in repr(spec) and "num_consumer" not in repr(plain)
    x = np.arange(4, dtype=np.float32)
    double[(1,)](x, **spec.all_kwargs())
    np.testing.assert_array_equal(x, [0, 2, 4, 6])
    with pytest.raises(ValueError, match="num_consumer_groups must be an int >= 0"):
        mt.Config({}, num_consumer_groups=-1)


@pytest.fixture
def runtime_hooks():
    """The runtime's hooks, as they were, after the test."""
    rt = mt.knobs.runtime
    chains = [rt.launch_enter_hook, rt.launch_exit_hook, rt.kernel_load_start_hook, rt.kernel_load_end_hook]
    saved = [list(c.calls) for c in chains]
    yield rt
    for c, calls in zip(chains, saved):
        c.calls[:] = calls
    del rt.jit_cache_hook, rt.jit_post_compile_hook


def test_a_cache_hook_that_answers_true_skips_the_launch_as_in_triton(runtime_hooks):
    keys = []
    runtime_hooks.jit_cache_hook = lambda **kw: keys.append(kw["key"]) or len(keys) == 1
    x = np.arange(4, dtype=np.float32)
    double[(1,)](x, N=4)                       # the first "compilation" is declined: nothing runs
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    double[(1,)](x, N=4)                       # asked again (it was not compiled), now allowed
    double[(1,)](x, N=4)                       # compiled: not asked
    np.testing.assert_array_equal(x, [0, 4, 8, 12])
    assert len(keys) == 2 and keys[0] == keys[1]


@mt.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


def test_a_new_specialisation_is_a_new_compilation(runtime_hooks):
    compiled = []
    runtime_hooks.jit_post_compile_hook = lambda **kw: compiled.append(kw["compile"]["signature"]["n"])
    x = np.ones(64, np.float32)
    for n in (5, 7, 1, 32, 48, 1):            # Triton specialises an int equal to 1 and one divisible by 16
        scale[(1,)](x, n, BLOCK=64)
    assert compiled == ["i32", "1", "i32D"]
    scale[(1,)](x, 2 ** 40, BLOCK=64)
    assert compiled[-1] == "i64D"


def test_launch_hooks_enter_in_order_exit_in_reverse_and_metadata_is_lazy(runtime_hooks):
    order, asked = [], []

    def describe(grid, metadata, args):
        asked.append(grid)
        return {"n": args["n"], "warps": metadata.num_warps}

    @mt.jit(launch_metadata=describe)
    def touch(x_ptr, n):
        tl.store(x_ptr, n)

    for tag in ("a", "b"):
        runtime_hooks.launch_enter_hook.add(lambda md, tag=tag: order.append(f"enter {tag}"))
        runtime_hooks.launch_exit_hook.add(lambda md, tag=tag: order.append(f"exit {tag}"))
    x = np.zeros(1, np.int32)
    touch[(2,)](x, 9)
    assert order == ["enter a", "enter b", "exit b", "exit a"] and asked == []   # nobody called get()
    runtime_hooks.launch_enter_hook.add(lambda md: order.append(md.get()))
    touch[(2,)](x, 9, num_warps=8)
    assert order[-3] == {"name": "touch", "function": None, "stream": 0, "n": 9, "warps": 8}
    assert asked == [(2, 1, 1)] and x[0] == 9
    with pytest.raises(TypeError, match="a hook must be callable"):
        runtime_hooks.launch_enter_hook.add(3)


def test_a_kernel_of_ones_own_on_kernel_interface_launches_by_grid():
    class Twice(mt.KernelInterface):
        def run(self, *args, grid, **kwargs):
            double[grid](*args, **kwargs)
            double[grid](*args, **kwargs)

    x = np.ones(4, np.float32)
    Twice()[(1,)](x, N=4)
    np.testing.assert_array_equal(x, [4, 4, 4, 4])
    assert isinstance(double, mt.runtime.jit.KernelInterface) and mt.runtime.KernelInterface is mt.KernelInterface
    with pytest.raises(NotImplementedError, match="must define run"):
        mt.KernelInterface()[(1,)]()


def test_triton_testing_device_figures_are_hypogpu_s():
    """What performance models written for Triton read (`get_dram_gbps`, the tensor-core and
    SIMD peaks, `nvsmi` clocks): HypoGPU's spec, through Triton's formulas."""
    from minitriton.hypogpu import A100
    testing = mt.testing
    props = mt.runtime.driver.active.utils.get_device_properties(0)
    assert testing.get_dram_gbps() == pytest.approx(A100.dram_bytes_per_s / 1e9)
    assert props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8 == pytest.approx(testing.get_dram_gbps())
    sm_khz = testing.nvsmi(["clocks.max.sm"])[0] * 1e3
    assert testing.get_max_tensorcore_tflops(np.float16, sm_khz) == pytest.approx(A100.tc_peak_flops / 1e12)
    assert testing.get_max_tensorcore_tflops(tl.float8e4nv, sm_khz) == \
        2 * testing.get_max_tensorcore_tflops("bfloat16", sm_khz)
    assert testing.get_max_simd_tflops(tl.float32, sm_khz) < testing.get_max_tensorcore_tflops(tl.float32, sm_khz)
    with pytest.raises(RuntimeError, match="dtype not supported: fp64"):
        testing.get_max_tensorcore_tflops(np.float64, sm_khz)
    with pytest.raises(ValueError, match="'power.draw' is not known here"):
        testing.nvsmi(["power.draw"])
    with testing.set_gpu_clock() as (tflops, gbps):
        assert tflops > 0 and gbps == pytest.approx(1555.2)


@mt.jit
def _load_fp8_at(table, out, N: tl.constexpr):
    src = tl.load(table).to(tl.pointer_type(tl.float8e4nv))
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(src + offs).to(tl.float32))


def test_a_tensor_wrapper_s_address_reads_as_its_type_even_where_the_bytes_are_registered_too():
    raw = np.array([0x38, 0x40, 0xB8, 0x00], np.uint8)          # fp8e4nv bits of 1, 2, -1, 0
    mt.data_ptr(raw)                                            # the bytes known as uint8 too
    wrapped = mt.TensorWrapper(raw, tl.float8e4nv)
    out = np.zeros(4, np.float32)
    _load_fp8_at[(1,)](np.array([wrapped.data_ptr()], np.int64), out, N=4)
    np.testing.assert_array_equal(out, [1, 2, -1, 0])


def test_version_is_the_triton_release_answered_for_and_gates_as_library_code_expects():
    from minitriton.compat import TRITON_VERSION

    assert mt.__version__ == TRITON_VERSION
    major, minor = (int(p) for p in mt.__version__.split(".")[:2])
    assert (major, minor) >= (3, 0)     # a library choosing by version takes `tl.extra`'s libdevice: it runs here
    from minitriton.language.extra import libdevice
    assert callable(libdevice.tanh)


def test_modules_code_written_for_triton_imports_from():
    import importlib

    from minitriton.backends.compiler import GPUTarget
    from minitriton.compiler.compiler import ASTSource, CompiledKernel
    from minitriton.language.random import N_ROUNDS_DEFAULT, philox, randint4x
    from minitriton.runtime.autotuner import Autotuner, OutOfResources

    assert mt.runtime.driver.active.get_current_target() == GPUTarget("cuda", 80, 32)
    kernel = mt.compile(ASTSource(double, signature={"x_ptr": "*fp32"}, constexprs={"N": 4}),
                        target=GPUTarget("cuda", 80, 32))
    assert isinstance(kernel, CompiledKernel)
    assert N_ROUNDS_DEFAULT == 10 and randint4x is tl.randint4x and philox is tl.philox
    assert OutOfResources is mt.OutOfResources and Autotuner is importlib.import_module("autotune").RuntimeAutotuner
    assert mt.runtime.autotuner is importlib.import_module("minitriton.runtime.autotuner")
    with pytest.raises(AttributeError, match="no attribute 'autotuner'"):
        mt.runtime.autotuner.autotuner


def test_the_active_driver_can_be_swapped_for_a_stand_in_and_back():
    driver = mt.runtime.driver
    default = driver.active
    assert driver.default is default

    class StandIn:
        def get_current_device(self):
            return 7

    try:
        driver.set_active(StandIn())
        assert driver.active.get_current_device() == 7 and driver.default is default
        x = np.ones(4, np.float32)
        double[(1,)](x, N=4)                 # launches still run on HypoGPU
        np.testing.assert_array_equal(x, 2)
    finally:
        driver.reset_active()
    assert driver.active is default
    with pytest.raises(TypeError, match="set_active: expected a driver"):
        driver.set_active(None)
