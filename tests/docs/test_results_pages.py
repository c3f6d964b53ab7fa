"""Results pages a reader can take in at 1,400 px (docs/results/<suite>.md, written by benchmarks/results_runner).

- Each page opens with the compact table (`report.SUMMARY_COLUMNS`: agent, task, return, IQM, reference, verdict)
  and hides the table of contents beside it. Its width in characters (the widest cell of each column, summed) stays
  under `MAX_SUMMARY_CHARACTERS`: measured in headless Chromium, the classic page's table (121 characters) is 935 px
  wide in a 1,400 px window whose content column is about 1,110 px, so 135 characters keep it on screen.
- A curve's axis ends at our budget; a reference measured beyond it is marked on the edge and named in the legend.
- With Chromium installed (`long`: it builds the site), the built pages are laid out at 1,400 px and no table of a
  results page is wider than its column. CI's install has no browser: there the character count stands for it.
"""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from stack import long_test

from benchmarks.results_runner import report
from benchmarks.results_runner.suites import SUITES

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [page for page in (ROOT / "docs" / "results" / f"{name}.md" for name in SUITES) if page.exists()]
MAX_SUMMARY_CHARACTERS = 135


def _summary_rows(text: str):
    header = "| " + " | ".join(report.SUMMARY_COLUMNS) + " |"
    assert header in text, "the page does not open with the compact table"
    block = text[text.index(header):].split("\n\n")[0].splitlines()
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in [block[0], *block[2:]]]


def _shown(cell: str) -> int:
    """Characters a cell shows on its widest line (markdown's ** and ` are not shown; <br> breaks lines)."""
    return max(len(re.sub(r"\*\*|`", "", line)) for line in cell.split("<br>"))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_page_opens_with_a_compact_table(page):
    text = page.read_text()
    assert text.startswith("\n".join(report.FRONT_MATTER))  # no table of contents beside the tables
    rows = _summary_rows(text)
    assert all(len(row) == len(report.SUMMARY_COLUMNS) for row in rows)
    width = sum(max(_shown(cell) for cell in column) for column in zip(*rows))
    assert width <= MAX_SUMMARY_CHARACTERS, f"{page.name}'s compact table is {width} characters wide"
    below = [heading for heading in ("## Curves", "## Detail", "## Notes", "## Cells") if heading in text]
    assert [text.index("| agent | task | return")] + [text.index(heading) for heading in below] == sorted(
        [text.index("| agent | task | return")] + [text.index(heading) for heading in below])


def test_a_curve_ends_at_our_budget_and_names_a_reference_beyond_it(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    suite = SUITES["tiny"]  # dqn on CartPole-v1 for 300 steps; its reference is at 50k
    task = suite.tasks[0]
    assert all(ref.steps > task.steps for ref in suite.references_for("dqn", task.name))
    records = [{"seed": seed, "curve": {"steps": [100, 200, 300], "average_return": [10.0, 20.0, 30.0 + seed]}}
               for seed in (0, 1)]
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    assert report.plot_task(suite, task.name, {("dqn", task.name): records}, str(tmp_path / "curve.png"))
    axes = figures[0].axes[0]
    assert axes.get_xlim()[1] <= task.steps * 1.05
    legend = [text.get_text() for text in axes.get_legend().get_texts()]
    assert any("at 50k (beyond this axis)" in line for line in legend), legend


@long_test
def test_results_tables_fit_a_1400_px_window_in_chromium(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium on PATH")
    pytest.importorskip("mkdocs")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, check=True,
                   capture_output=True)
    measure = ("<script>addEventListener('load', () => { document.title = JSON.stringify([...document.querySelectorAll("
               "'article table')].map(t => [t.getBoundingClientRect().right, t.closest('article')"
               ".getBoundingClientRect().right])); });</script>")
    for page in PAGES:
        html = site / "results" / page.name.replace(".md", ".html")
        html.write_text(html.read_text().replace("</body>", measure + "</body>"))
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                              "--virtual-time-budget=3000", "--dump-dom", html.as_uri()],
                             capture_output=True, text=True, timeout=60).stdout
        edges = [[float(x) for x in pair.split(",")] for pair in re.findall(r"\[([\d.]+,[\d.]+)\]", dom.split(
            "<title>")[1].split("</title>")[0])]
        assert edges, f"{page.name}: nothing measured"
        table_right, column_right = edges[0]  # the compact table
        assert table_right <= column_right <= 1400, f"{page.name}: the table ends at {table_right} px"
