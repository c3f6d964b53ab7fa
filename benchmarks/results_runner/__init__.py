"""Results beside published numbers: every (agent, task, seed) cell of a suite, from one resumable command.

    python -m benchmarks.results_runner --suite classic [--agents ppo dqn] [--tasks CartPole-v1] [--seeds 0-4]
    make results SUITE=classic

    suites.py    the suites as data: tasks and budgets, agents, presets, seeds, published references
    cells.py     one cell: `python -m launch ... --preset NAME --replay local` in a fresh process, and its record
    report.py    docs/results/<suite>.md (mean ± std, seeds, IQM with a bootstrap 95% interval) and a PNG per task
    __main__.py  the command line

Where things go (`--out`, default docs/results; `--runs`, default runs/results):

    <out>/<suite>.md                                  the table, written from every stored cell
    <out>/<suite>/<task>.png                          each agent's mean curve with a ±1 std band, references marked
    <out>/<suite>/cells/<agent>/<task>/seed_<n>.json  a finished cell: its curve, returns, times and provenance
    <runs>/<suite>/<agent>/<task>/seed_<n>/           the run directory (config.json, actor.csv, ...) and its .log

A cell whose JSON exists is finished and skipped, so an interrupted suite continues where it stopped; a cell
that fails leaves `seed_<n>.error.json` (its exit code and the log's tail), the others go on, and it runs again
next time. `benchmarks/results/` (no `_runner`) is another thing: where `make bench` writes its figures.
"""
