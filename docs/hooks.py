"""mkdocs hooks (mkdocs.yml `hooks:`): pages that show a table the code holds are generated from it, not copied.

`<!-- flag-modes -->` in a page becomes the flag x mode table of `launch/cli/flags.py` (`FLAGS`). The module is
loaded from its file alone, so building the site imports neither the `launch` package nor JAX, TensorFlow or Reverb.
"""

import importlib.util
import pathlib

FLAG_MODES_MARKER = "<!-- flag-modes -->"
_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_flags():
    spec = importlib.util.spec_from_file_location("_acmelike_docs_flags", _ROOT / "launch" / "cli" / "flags.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flag_modes_table() -> str:
    """One row per flag, one column per mode: "yes" where the flag works, "-" where the parser refuses it."""
    flags = _load_flags()
    header = "| flag | " + " | ".join(flags.MODES) + " |"
    rule = "|---|" + "---|" * len(flags.MODES)
    rows = [
        f"| `{flag}` | " + " | ".join("yes" if mode in flag_rule.modes else "-" for mode in flags.MODES) + " |"
        for flag, flag_rule in flags.FLAGS.items()
    ]
    return "\n".join([header, rule, *rows])


def on_page_markdown(markdown, page, config, files):
    if FLAG_MODES_MARKER in markdown:
        markdown = markdown.replace(FLAG_MODES_MARKER, flag_modes_table())
    return markdown
