"""What README.md and docs/ name exists, and their commands are accepted as written.

- every repository path they mention (`launch/engines/anakin.py`, `agents/dqn/`) exists;
- every dotted name of ours (`acmelike.replay.inserts_never_block`, `launch.cli.record`) is a module, or a name
  defined in one (read from the source: nothing is imported for it);
- every flag of `launch/cli/options.py` has a line in docs/command-line.md's flag table (generated from its types
  when the site is built, docs/hooks.py), and every flag a `python -m launch` command uses is one of them;
- every `python -m launch ...` training command plans (`launch.cli.train.plan`: parsed, checked and configured,
  nothing trained) with its run directory moved under a temporary one; `--resume` commands need a run to resume
  and are left out.
"""

import contextlib
import importlib.util
import io
import os
import pathlib
import re
import shlex
import warnings

import pytest

from launch.cli.options import all_flags

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
OUR_PACKAGES = ("acmelike", "agents", "environment_loops", "launch", "benchmarks")
# Names the tutorial asks the reader to create, and placeholders.
HYPOTHETICAL = ("myagent", "<", "*", "HEAD_IP")
GENERATED = ("benchmarks/results",)  # written by `make bench` (git ignores it)


def _text(page):
    return page.read_text()


def _paths(text):
    pattern = r"(?<![\w./-])((?:%s|docs|tests|notebooks)/[\w./<>*-]*)" % "|".join(OUR_PACKAGES)
    for match in re.finditer(pattern, text):
        path = match.group(1).rstrip(".,:;)")
        environment_id = re.search(r"-v\d+$", path)  # acmelike/CartPoleNoVelocity-v1 is a gymnasium id
        if not (environment_id or path.startswith(GENERATED) or any(mark in path for mark in HYPOTHETICAL)):
            yield path


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_path_named_exists(page):
    missing = sorted({path for path in _paths(_text(page)) if not (ROOT / path).exists()})
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def _defines(source: str, name: str) -> bool:
    return bool(re.search(rf"^\s*(def|class)\s+{name}\b|^\s*{name}\s*[:=]|\bimport\b.*\b{name}\b|\"{name}\"",
                          source, re.MULTILINE))


def _resolve(dotted: str):
    """None if `dotted` is a module of ours or a name defined in one (found in the source), else why not."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        for module_file in (base.with_suffix(".py"), base / "__init__.py"):
            if module_file.is_file():
                rest = parts[cut:]
                if not rest or _defines(module_file.read_text(), rest[0]):
                    return None
                return f"{'.'.join(parts[:cut])} defines no {rest[0]}"
    return "no such module"


def _dotted_names(text):
    pattern = r"(?<![\w./-])((?:%s)(?:\.\w+)+)" % "|".join(OUR_PACKAGES)
    for match in re.finditer(pattern, text):
        name = match.group(1)
        if not any(mark in name for mark in HYPOTHETICAL) and not name.endswith((".py", ".md")):
            yield name


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_dotted_name_of_ours_exists(page):
    wrong = sorted({f"{name}: {why}" for name in _dotted_names(_text(page)) if (why := _resolve(name))})
    assert not wrong, f"{page.relative_to(ROOT)}: {wrong}"


def _commands(text):
    """`python -m launch ...` command lines of the pages' code blocks, continuation lines joined."""
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("#")[0].split("|")[0].strip()
            if re.match(r"^(\.venv(-launchpad)?/bin/)?python -m launch\s", command):
                yield shlex.split(command)[3:]


@pytest.mark.parametrize("page", PAGES + sorted((ROOT / "agents").glob("*/README.md")),
                         ids=lambda page: str(page.relative_to(ROOT)))
def test_commands_run_by_the_stack_that_can_run_them(page):
    """A command needing the classic stack (a Launchpad program, --replay reverb) names its venv, .venv-launchpad;
    a Ray program runs on either; every other one names today's, .venv (make demo's): pasted as written, each runs."""
    wrong, classic_runs = [], set()  # run directories the page made on the classic stack: --resume them there
    for block in re.findall(r"```bash\n(.*?)```", _text(page), re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("#")[0].strip()
            venv = re.match(r"^(\.venv[\w-]*)/bin/python -m launch\s", command)
            if venv:
                classic = re.search(r"--launch (local_mp|local_mt)\b|--replay reverb\b", command)
                run_dir = re.search(r"--(?:run-dir|resume) (\S+)", command)
                if classic and run_dir:
                    classic_runs.add(run_dir.group(1))
                classic = classic or re.search(r"--resume (\S+)", command) and run_dir.group(1) in classic_runs
                either = re.search(r"--launch ray\b", command) and not classic
                if not either and venv.group(1) != (".venv-launchpad" if classic else ".venv"):
                    wrong.append(command)
    assert not wrong, f"{page.relative_to(ROOT)}: these commands name the wrong venv: {wrong}"


def test_every_flag_has_a_line_on_the_command_line_page():
    spec = importlib.util.spec_from_file_location("_docs_hooks_for_flags", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (ROOT / "docs" / "command-line.md").read_text()
    assert hooks.FLAGS_MARKER in page, f"docs/command-line.md has no generated flag table ({hooks.FLAGS_MARKER})"
    described = set(re.findall(r"^\| <code>(--[\w-]+)", hooks.flags_table(), re.MULTILINE))
    assert described == set(all_flags()), sorted(described ^ set(all_flags()))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_commands_use_only_flags_that_exist(page):
    flags = set(all_flags()) | {"--help"}
    unknown = sorted({token.split("=")[0] for argv in _commands(_text(page)) for token in argv
                      if token.startswith("--") and token.split("=")[0] not in flags})
    assert not unknown, f"{page.relative_to(ROOT)} uses flags that python -m launch does not have: {unknown}"


@pytest.fixture(scope="module")
def recorded_datasets(tmp_path_factory):
    """The datasets the pages' offline commands name, recorded from random policies under a temporary
    MINARI_DATASETS_PATH."""
    from stack import require

    require("minari")
    from launch.cli.record import record

    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(tmp_path_factory.mktemp("minari"))
    try:
        with warnings.catch_warnings():  # minari asks for an author and a code link: these datasets live a test long
            warnings.simplefilter("ignore", UserWarning)
            for dataset_id, environment in (("cartpole/expert-v0", "CartPole-v1"), ("cartpole/mixed-v0", "CartPole-v1"),
                                            ("pendulum/mixed-v0", "Pendulum-v1")):
                record(dataset_id=dataset_id, episodes=2, environment=environment, seed=0)
        yield
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


def _plannable():
    seen = {}
    for page in PAGES:
        for argv in _commands(_text(page)):
            if "--resume" not in argv and "--help" not in argv:
                seen.setdefault(" ".join(argv), argv)
    return sorted(seen.items())


@pytest.mark.parametrize("argv", [argv for _, argv in _plannable()], ids=[text for text, _ in _plannable()])
@pytest.mark.usefixtures("packages_present")  # the classic stack's commands plan on any stack
def test_every_training_command_plans(argv, tmp_path, recorded_datasets):
    from launch.cli.train import plan

    argv = list(argv)
    if "--run-dir" in argv:
        index = argv.index("--run-dir") + 1
        argv[index] = str(tmp_path / pathlib.Path(argv[index]).name)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            plan(argv)
    except SystemExit as error:
        pytest.fail(f"python -m launch {' '.join(argv)} is refused (exit {error.code}): {stderr.getvalue()}")
