"""Every Python example in the README and in docs/ runs as written, from the clone's folder."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [(page, i, block) for page in PAGES
            for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S))]


def test_the_pages_have_examples():
    assert any(page.name == "README.md" for page, _, _ in EXAMPLES) and len(EXAMPLES) >= 3


@pytest.mark.parametrize("page, i, block", EXAMPLES, ids=[f"{p.relative_to(ROOT)}#{i}" for p, i, _ in EXAMPLES])
def test_example_runs_as_written(page, i, block, tmp_path):
    env = dict(os.environ, MINITRITON_CACHE_DIR=str(tmp_path / "cache"), MINITRITON_PROGRESS="0")
    run = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, f"{page.name} example {i} failed:\n{run.stderr[-2000:]}"


def test_the_benchmark_page_holds_every_table_the_readme_summarises():
    readme, page = (ROOT / "README.md").read_text(), (ROOT / "docs" / "benchmarks.md").read_text()
    summarised = re.findall(r"\[(\w+)\]\(docs/benchmarks\.md#\1\)", readme)
    assert summarised and all(f"<!-- bench:{name} -->" in page for name in summarised)
    assert set(summarised) == set(re.findall(r"<!-- bench:(\w+) -->", page))
