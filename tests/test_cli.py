"""`python -m autotune`: cache commands, verify."""
import json
import subprocess
import sys


from autotune.cli import main
from tests.test_autotune import CONFIGS, _call, make


def test_list_show_export_clear(tmp_path, capsys):
    _call(make(tmp_path), 100)
    _call(make(tmp_path), 300)
    main(["--cache-dir", str(tmp_path), "list"])
    out = capsys.readouterr().out
    assert out.startswith("2 tuned entries") and out.count("scale_kernel") == 2
    assert out.splitlines()[1].split()[:3] == ["key", "kernel", "and"]   # column headers
    key = out.splitlines()[2].split()[0]
    main(["--cache-dir", str(tmp_path), "show", key])
    shown = capsys.readouterr().out
    assert shown.splitlines()[0].split()[1].startswith(key) and f"measured  {len(CONFIGS)} configs" in shown
    assert "best so far: #1:" in shown and "settled by re-timing the" in shown      # the winner's curse, settled
    assert "(timed again)" in shown and "settled   " in shown
    assert shown.count("Config(") >= len(CONFIGS)                           # every config measured
    main(["--cache-dir", str(tmp_path), "export", "-o", str(tmp_path / "out.json")])
    assert len(json.loads((tmp_path / "out.json").read_text())) == 2
    main(["--cache-dir", str(tmp_path), "clear", key])
    assert "removed 1" in capsys.readouterr().out
    main(["--cache-dir", str(tmp_path), "clear"])
    assert "removed 1" in capsys.readouterr().out
    main(["--cache-dir", str(tmp_path), "list"])
    assert capsys.readouterr().out.startswith("0 tuned entries")


def test_verify_and_bad_shape():
    out = subprocess.run([sys.executable, "-m", "autotune", "verify", "matmul", "--shape", "M=64,N=48,K=40",
                          "--configs", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "3 configs agree" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "autotune", "verify", "matmul", "--shape", "M=64"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "missing ['N', 'K']" in bad.stderr


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autotune", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _one_line_error(result):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_command_line_errors_are_one_line(tmp_path):
    _call(make(tmp_path), 100)
    _one_line_error(_cli("--cache-dir", tmp_path, "export", "-o", tmp_path / "missing" / "out.json"))
    assert not (tmp_path / "missing").exists()
    _one_line_error(_cli("verify", "matmul", "--shape", "M=0,N=4,K=4"))
    _one_line_error(_cli("verify", "matmul", "--shape", "M=-3,N=4,K=4"))
    _one_line_error(_cli("verify", "matmul", "--shape", "M=100000000,N=100000000,K=100000000"))
    _one_line_error(_cli("--cache-dir", tmp_path, "show", "zzzz"))
    _one_line_error(_cli("frobnicate"))


def test_a_shape_every_config_refuses_is_one_line(monkeypatch, capsys):
    from minitriton.hypogpu import Measurer
    from minitriton.hypogpu.measure import Measurement
    monkeypatch.setattr(Measurer, "measure", lambda self, task, cfg, repeats=1: Measurement(cfg, [], "refused", 1.0))
    assert main(["verify", "matmul", "--shape", "M=64,N=64,K=64", "--configs", "2"]) == 1
    err = capsys.readouterr().err
    assert "no config of matmul can run" in err and len(err.strip().splitlines()) == 1


def test_options_after_the_command_and_ambiguous_prefixes(tmp_path, capsys):
    _call(make(tmp_path), 100)
    _call(make(tmp_path), 300)
    assert main(["list", "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("2 tuned entries")
    assert main(["show", "", "--cache-dir", str(tmp_path)]) == 1      # the empty prefix matches both
    assert "ambiguous: it matches 2 entries" in capsys.readouterr().err
    assert main(["clear", "", "--cache-dir", str(tmp_path)]) == 1
    assert main(["list", "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("2 tuned entries")       # nothing was removed


def test_export_into_a_closed_pipe_is_quiet(tmp_path):
    from autotune.cache import TuningCache
    _call(make(tmp_path), 100)
    cache = TuningCache(tmp_path)
    entry = cache.entries()[0]
    for i in range(200):  # far more than a pipe holds, so the writer meets the closed end
        cache.put(f"{i:032x}", dict(entry, note="x" * 2000))
    cache.close()
    shell = subprocess.run(f"{sys.executable} -m autotune --cache-dir {tmp_path} export | head -c 10",
                           shell=True, capture_output=True, text=True, timeout=120)
    assert shell.stdout.startswith("[") and shell.stderr == "", shell.stderr


def test_verify_reruns_a_cached_user_kernel(tmp_path, capsys):
    _call(make(tmp_path), 100)
    from autotune.cache import TuningCache
    key = TuningCache(tmp_path).entries()[0]["key"]
    assert main(["verify", key[:10], "--cache-dir", str(tmp_path)]) == 0
    assert "5 of 5 configs agree" in capsys.readouterr().out


def test_verify_finds_a_cached_kernel_that_is_wrong_for_some_configs(tmp_path, capsys):
    from autotune import autotune, Config
    from autotune.cache import TuningCache
    from tests.test_faults import strided_scale, _strided
    configs = [Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=4, num_stages=1) for bm in (16, 32) for bn in (64, 128)]
    configs.append(Config({"BLOCK_M": 64, "BLOCK_N": 128}, num_warps=4, num_stages=1))
    _strided(autotune(configs=configs, key=["M", "N"], cache_dir=tmp_path)(strided_scale))
    key = TuningCache(tmp_path).entries()[0]["key"]
    assert main(["verify", key, "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 of 5 configs agree" in out and out.count("DIFFERS") == 2 and "BLOCK_N: 64" in out


def test_clear_keeps_the_records_unless_asked(tmp_path, capsys):
    from autotune.cache import TuningCache
    _call(make(tmp_path), 100)
    assert main(["clear", "--cache-dir", str(tmp_path)]) == 0
    cache = TuningCache(tmp_path)
    kept = cache.log.read()
    assert cache.entries() == [] and len([r for r in kept if not r.again]) == len(CONFIGS)   # resume data kept
    assert main(["clear", "--records", "--cache-dir", str(tmp_path)]) == 0
    assert TuningCache(tmp_path).log.read() == []
    assert f"removed 0 entries and the records of {len(kept)} measurements" in capsys.readouterr().out


def test_what_the_commands_say(tmp_path, capsys):
    """list shows whole names (cut only at a word, past 64 characters) and never creates the
    directory it lists; export -o says what it wrote; show --knobs and verify --shape refuse
    names that are not there instead of ignoring them."""
    empty = tmp_path / "nothing-here"
    assert main(["list", "--cache-dir", str(empty)]) == 0
    assert "0 tuned entries" in capsys.readouterr().out and not empty.exists()
    elsewhere = tmp_path / "some-project"        # a directory that is not a cache (a mistyped --cache-dir)
    (elsewhere / "src").mkdir(parents=True)
    for command in (["list"], ["export"], ["clear"], ["clear", "--records"]):
        assert main([*command, "--cache-dir", str(elsewhere)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["src"]     # nothing made there
    _call(make(tmp_path), 100)
    main(["list", "--cache-dir", str(tmp_path)])
    row = capsys.readouterr().out.splitlines()[2]
    name = row.split("  ")[1].strip()
    assert name.startswith("scale_kernel(128, ") and (name.endswith(")") or name.endswith(" ...")), row
    main(["export", "-o", str(tmp_path / "out.json"), "--cache-dir", str(tmp_path)])
    assert capsys.readouterr().out.strip() == f"wrote 1 entries to {tmp_path / 'out.json'}"
    key = row.split()[0]
    assert main(["show", key, "--knobs", "BLOCK_M", "foo", "--plot", str(tmp_path / "p.png"),
                 "--cache-dir", str(tmp_path)]) == 1
    assert "no config has 'foo'" in capsys.readouterr().err and not (tmp_path / "p.png").exists()
    assert main(["verify", "matmul", "--shape", "M=8,N=8,K=8,Q=5"]) == 1
    assert "['Q'] is not one of them" in capsys.readouterr().err
    assert main(["verify", "matmul", "--shape", "M=1,N=1,K=1", "--configs", "2"]) == 0
    assert "2 configs agree" in capsys.readouterr().out


SCRIPT = '''import numpy as np, minitriton as mt, minitriton.language as tl
from autotune import autotune, Config

@autotune(configs=[Config({"BLOCK": b}) for b in (64, 256)], key=["n"])
@mt.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

x = np.arange(1000, dtype=np.float32); out = np.empty_like(x)
add_kernel[lambda meta: (mt.cdiv(x.size, meta["BLOCK"]),)](x, out, x.size)
print("the script ran")
'''


def test_verify_loads_a_scripts_kernel_only_from_the_script_the_user_names(tmp_path):
    """A kernel defined in a script's __main__: `verify KEY` says to name the script; with
    --from it loads the script's definitions only (the launch and the print do not run); a
    module the entry did not tune, or a script edited since, is refused before anything in it runs."""
    script = tmp_path / "example.py"
    script.write_text(SCRIPT)
    cache = tmp_path / "cache"
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "MINITRITON_CACHE_DIR": str(cache)})
    assert ran.returncode == 0 and "the script ran" in ran.stdout, ran.stderr
    key = _cli("--cache-dir", cache, "list").stdout.splitlines()[2].split()[0]
    told = _cli("--cache-dir", cache, "verify", key)
    _one_line_error(told)
    assert f"--from {script}" in told.stderr
    done = _cli("--cache-dir", cache, "verify", key, "--from", script)
    assert done.returncode == 0 and "2 of 2 configs agree" in done.stdout and "the script ran" not in done.stdout
    planted = _cli("--cache-dir", cache, "verify", key, "--from", "this")   # the Zen of Python is not run
    _one_line_error(planted)
    assert "defines no function add_kernel" in planted.stderr and "Beautiful" not in planted.stdout
    script.write_text(SCRIPT.replace("+ 1,", "+ 2,"))
    edited = _cli("--cache-dir", cache, "verify", key, "--from", script)
    _one_line_error(edited)
    assert "not the source that was tuned" in edited.stderr


def test_the_heatmap_orders_and_labels_knob_values_as_values(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from autotune import Config, report
    from autotune.records import Record
    records = [Record(Config({"BLOCK": b, "W": w}), [1e-6 * b / w]) for b in (1024, 256, 64) for w in (1, 2, 4)]
    kept = []
    monkeypatch.setattr(plt, "close", kept.append)
    report.draw(records, str(tmp_path / "h.png"), ("BLOCK", "W"))
    heat = kept[0].axes[1]
    assert [t.get_text() for t in heat.get_xticklabels()] == ["64", "256", "1024"]
    assert [t.get_text() for t in heat.get_yticklabels()] == ["1", "2", "4"]


def test_the_demo_says_what_it_shows(capsys):
    from kernels import demo
    demo.main(quick=True)
    out = capsys.readouterr().out
    for shape in ("square", "prefill_qkv", "decode", "wgrad", "small"):
        assert f"\n  {shape}" in out and f"| {shape} |" in out      # explained, then measured
    assert "64 measurements" in out and "157,500 configs" in out and "% = the optimum's time" in out
    assert "every result is within fp16 rounding" in out
