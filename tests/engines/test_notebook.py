"""The notebook is part of the product: it runs top to bottom (on a short budget), from any working directory, and
again in the same run directory, as a notebook's cells are run again; its output is the run's, no library's logs."""

import json
import os
import shutil
import subprocess
import sys

from stack import require

NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "notebooks")


def _output_text(notebook_path: str) -> str:
    with open(notebook_path) as f:
        cells = json.load(f)["cells"]
    texts = []
    for cell in cells:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            texts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(texts)


def test_quickstart_notebook_executes_twice_in_one_run_directory(tmp_path):
    require("nbclient")  # the `notebook` extra
    run_dir = tmp_path / "run"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    copy = tmp_path / "notebook"  # jupyter writes the executed notebook beside the one it runs
    copy.mkdir()
    shutil.copy(os.path.join(NOTEBOOKS, "quickstart.ipynb"), copy / "quickstart.ipynb")
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    for attempt in ("first", "second"):
        result = subprocess.run(
            [jupyter, "execute", str(copy / "quickstart.ipynb"), f"--output={attempt}"],
            cwd=elsewhere, capture_output=True, text=True, timeout=600, check=False,
            env={**os.environ, "ACMELIKE_NOTEBOOK_STEPS": "1000", "ACMELIKE_NOTEBOOK_RUN_DIR": str(run_dir)},
        )
        assert result.returncode == 0, f"{attempt} run: " + (result.stdout + result.stderr)[-5000:]
        assert (run_dir / "learning_curve.png").stat().st_size > 1000 and (run_dir / "summary.json").exists()
        outputs = _output_text(str(copy / f"{attempt}.ipynb"))
        assert "'env_steps'" in outputs, outputs[-3000:]  # the summary the first cell shows
        assert "reverb" not in outputs.lower(), outputs[-3000:]
    assert os.listdir(elsewhere) == []  # nothing written where the kernel started
