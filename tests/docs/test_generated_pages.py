"""Pages generated from the code when the site is built (docs/hooks.py) agree with it: every registered agent is
in each page's agent table and has its config section with every field; README.md names no agent the registry
lacks. A page that listed agents by hand would miss the next one; these fail instead."""

import importlib.util
import pathlib
import re

import pytest

from launch.experiments.overrides import config_field_docs
from launch.registry import AGENTS, agent_definition

ROOT = pathlib.Path(__file__).resolve().parents[2]
AGENT_PAGES = ["docs/command-line.md", "docs/layers.md"]


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("_docs_hooks_for_test", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table_rows(markdown: str, header_start: str):
    """The first cells of the rows of the table whose header starts with `header_start`."""
    block = markdown[markdown.index(header_start):].split("\n\n")[0]
    return [re.match(r"^\| `?([^`|]+)`? \|", line).group(1) for line in block.splitlines()[2:]]


@pytest.mark.parametrize("page", AGENT_PAGES)
def test_every_registered_agent_is_in_the_page_agent_table(page, hooks):
    text = (ROOT / page).read_text()
    assert hooks.AGENTS_MARKER in text, f"{page} has no generated agent table ({hooks.AGENTS_MARKER})"
    listed = _table_rows(hooks.generated(text), "| `--agent` |")
    assert listed == list(AGENTS), f"{page}'s agent table lists {listed}, the registry {list(AGENTS)}"


def test_every_agent_config_has_a_section_with_every_field(hooks):
    text = hooks.generated((ROOT / "docs" / "api" / "agent-configs.md").read_text())
    sections = dict(re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL))
    assert list(sections) == list(AGENTS)
    for name, section in sections.items():
        fields = [field for field, *_ in config_field_docs(agent_definition(name).config_class)]
        listed = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
        assert listed == fields, f"{name}: the page lists {listed}, its config has {fields}"
        assert agent_definition(name).config_class.__name__ in section


def test_the_readme_names_only_registered_agents_and_points_to_the_generated_table():
    """README's layer map names the agents by hand, so it may lag a new one (a new agent is its folder and one
    registry line: the generated table lists it); it must never name one the registry lacks."""
    readme = (ROOT / "README.md").read_text()
    listing = re.search(r"The agents: (.*?) \(every registered one: (\S+)'s generated table\)", readme, re.DOTALL)
    assert listing, "README.md's layer map has no 'The agents: ... (every registered one: PAGE's generated table)'"
    named = set(re.findall(r"\b[a-z][a-z0-9_]*\b", listing.group(1))) - {"multi", "agent", "offline"}
    assert named <= set(AGENTS), f"README.md names agents the registry lacks: {sorted(named - set(AGENTS))}"
    assert listing.group(2) in AGENT_PAGES, f"README.md points to {listing.group(2)}, not a page of {AGENT_PAGES}"


def test_the_site_links_pages_as_files():
    """Opened from disk (site/index.html), a link to a directory shows a listing: pages link as page.html."""
    assert re.search(r"^use_directory_urls: false$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)
