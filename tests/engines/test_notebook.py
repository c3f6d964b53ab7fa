"""The notebook is part of the product: it runs top to bottom (on a short budget), from any working directory."""

import os
import subprocess
import sys

from stack import require

NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "notebooks")


def test_quickstart_notebook_executes(tmp_path):
    require("nbclient")  # the `notebook` extra
    run_dir = tmp_path / "run"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    result = subprocess.run(
        [jupyter, "execute", os.path.join(NOTEBOOKS, "quickstart.ipynb")],
        cwd=elsewhere, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "ACMELIKE_NOTEBOOK_STEPS": "1500", "ACMELIKE_NOTEBOOK_RUN_DIR": str(run_dir)},
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    assert (run_dir / "learning_curve.png").stat().st_size > 1000 and (run_dir / "summary.json").exists()
    assert os.listdir(elsewhere) == []  # nothing written where the kernel started
