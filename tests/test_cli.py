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
    key = out.splitlines()[1].split()[0]
    main(["--cache-dir", str(tmp_path), "show", key])
    shown = json.loads(capsys.readouterr().out)
    assert shown["key"].startswith(key) and shown["measured"] == len(CONFIGS)
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
