"""mkdocs hooks (mkdocs.yml `hooks:`): pages that show a table the code holds are generated from it, not copied.

A marker in a page becomes, when the site is built:

- `<!-- flags -->`: one row per flag of `python -m launch`, its help text (`launch.cli.options.help_lines`);
- `<!-- flag-modes -->`: the flag x mode table the types of `launch/cli/options.py` make (`launches_of`);
- `<!-- agents -->`: one row per agent of `launch.registry.AGENTS`: its package, what it learns from, its actions,
  whether it is multi-agent and has a fully jitted form, its config class;
- `<!-- agent-configs -->`: one section per registered agent with its config's fields (type, default, meaning), the
  lines `python -m launch --agent NAME --list-config` prints (`launch.experiments.overrides.config_field_docs`).

They import the command line, the registry and the agents (JAX, flax), never TensorFlow, Reverb or Launchpad. `generated(text)`
is what a page becomes; tests/docs/test_generated_pages.py checks that every agent is on every page that lists them.
"""

import dataclasses
import html
import pathlib
import sys
import warnings

FLAGS_MARKER = "<!-- flags -->"
FLAG_MODES_MARKER = "<!-- flag-modes -->"
AGENTS_MARKER = "<!-- agents -->"
AGENT_CONFIGS_MARKER = "<!-- agent-configs -->"
_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _registry():
    """(AGENTS, agent_definition), importing the repository's `launch.registry` (the site is built from its root);
    every agent is imported here, under a filter of the libraries' deprecation notices."""
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))
    with warnings.catch_warnings():  # the libraries' deprecation notices, shown as INFO lines of the build
        warnings.simplefilter("ignore", DeprecationWarning)
        from launch.registry import AGENTS, agent_definition

        for name in AGENTS:
            agent_definition(name)  # imports every agent now, under the filter
    return AGENTS, agent_definition


def flag_modes_table() -> str:
    """One row per flag, one column per launch: "yes" where the flag works, "-" where the parser refuses it."""
    _registry()
    from launch.cli.options import LAUNCHES, all_flags, launches_of

    header = "| flag | " + " | ".join(LAUNCHES) + " |"
    rule = "|---|" + "---|" * len(LAUNCHES)
    rows = [f"| `{flag}` | " + " | ".join("yes" if launch in launches_of(flag) else "-" for launch in LAUNCHES) + " |"
            for flag in all_flags()]
    return "\n".join([header, rule, *rows])


def flags_table() -> str:
    """One row per flag of `python -m launch`, in `--help`'s order: how it is written, and its help text."""
    _registry()
    from launch.cli.options import help_lines

    rows = ["| flag | what it does |", "|---|---|"]
    for flag, text in help_lines().items():
        # As HTML: a help text's <id> is text, and a | (DIR|off) would end the table's cell.
        text = html.escape(text, quote=False).replace("|", "&#124;")
        rows.append(f"| <code>{flag}</code> | {text} |")
    return "\n".join(rows)


def agents_table() -> str:
    """One row per registered agent, in the registry's order."""
    agents, agent_definition = _registry()
    rows = ["| `--agent` | package | learns from | actions | multi-agent | Anakin form | config |",
            "|---|---|---|---|---|---|---|"]
    for name, package in agents.items():
        definition = agent_definition(name)
        config = definition.config_class
        rows.append(
            f"| `{name}` | `{package}` | {'a dataset' if definition.offline else 'its actors'} | "
            f"{definition.action_space} | {'yes' if definition.multiagent else '-'} | "
            f"{'yes' if definition.anakin is not None else '-'} | "
            f"[`{config.__name__}`](api/agent-configs.md#{name}) |"
        )
    return "\n".join(rows)


def agent_configs() -> str:
    """A section per registered agent: its config class and one table row per field."""
    from launch.experiments.overrides import config_field_docs

    agents, agent_definition = _registry()
    sections = []
    for name in agents:
        config = agent_definition(name).config_class
        lines = [f"## {name}", "",
                 f"`{config.__module__}.{config.__name__}`: `python -m launch --agent {name} --config FIELD=VALUE`.",
                 "", "| field | type | default | meaning |", "|---|---|---|---|"]
        for field, type_text, default, doc in config_field_docs(config):
            shown = "(required)" if default is dataclasses.MISSING else repr(default)
            lines.append(f"| `{field}` | `{type_text}` | `{shown}` | {doc.replace('|', '&#124;')} |")
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


_GENERATORS = {FLAGS_MARKER: flags_table, FLAG_MODES_MARKER: flag_modes_table, AGENTS_MARKER: agents_table, AGENT_CONFIGS_MARKER: agent_configs}


def generated(markdown: str) -> str:
    """`markdown` with each marker replaced by what it stands for."""
    for marker, generate in _GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown


def on_page_markdown(markdown, page, config, files):
    return generated(markdown)
