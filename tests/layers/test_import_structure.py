"""How the project's modules import each other, read from their source (no module is imported here).

- No import cycle among the modules of acmelike/, agents/, environment_loops/ and launch/ (imports at module
  level; an import inside a function runs later and cannot hide a cycle from this test, because it is allowed
  only where an optional dependency needs it, below).
- No module uses another module's private (`_name`) names.
- In launch/, an import inside a function is of an optional dependency (reverb, launchpad, ray, ...), or carries
  a comment on its line naming the optional dependency it keeps out of `import launch`.
"""

import ast
import os
from typing import Dict, Iterator, List, Set, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("acmelike", "agents", "environment_loops", "launch")
OPTIONAL = ("reverb", "launchpad", "tensorflow", "ray", "gymnax", "minari", "tensorboardX",
            "matplotlib", "imageio", "PIL", "pygame")
# Private modules imported across packages on purpose, with why.
SHARED_PRIVATE_MODULES = {
    "acmelike._jax_probability": "imported first by entry points for its side effect: tfp's JAX substrate before TF",
}


def project_modules() -> Dict[str, str]:
    """{dotted module name: file path} for every module of the project's packages."""
    modules = {}
    for package in PACKAGES:
        for directory, _, files in os.walk(os.path.join(REPO, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    dotted = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
                    modules[dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return modules


MODULES = project_modules()


def _resolve(node: ast.AST, importer: str) -> Iterator[Tuple[str, str]]:
    """(module, imported name or "") for each project module an import statement names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in MODULES:
                yield alias.name, ""
        return
    base = node.module or ""
    if node.level:  # relative import
        parts = importer.split(".")
        is_package = MODULES[importer].endswith("__init__.py")
        base = ".".join(parts[: len(parts) - node.level + (1 if is_package else 0)] + ([base] if base else []))
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        if submodule in MODULES:
            yield submodule, ""
        elif base in MODULES:
            yield base, alias.name


def _function_bodies(tree: ast.Module) -> Set[int]:
    """ids of the import statements inside function bodies."""
    inside = set()
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(node) for node in ast.walk(function) if isinstance(node, (ast.Import, ast.ImportFrom)))
    return inside


def _parse(path: str) -> ast.Module:
    with open(path) as f:
        return ast.parse(f.read(), path)


def module_level_imports() -> Dict[str, Set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = _parse(path)
        inside = _function_bodies(tree)
        graph[name] = {
            target
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in inside
            for target, _ in _resolve(node, name)
            if target != name
        }
    return graph


def find_cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan), each as a sorted list."""
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycles():
    cycles = find_cycles(module_level_imports())
    assert not cycles, "Import cycles (each line: the modules of one cycle):\n" + "\n".join(map(" -> ".join, cycles))


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def _private_uses(name: str, tree: ast.Module) -> Iterator[str]:
    aliases = {}  # local name -> project module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target, imported in _resolve(node, name):
                if imported.startswith("_") and not imported.startswith("__"):
                    yield f"{name}: from {target} import {imported}"
                if not imported and target.rsplit(".", 1)[-1].startswith("_") and target not in SHARED_PRIVATE_MODULES:
                    if not target.startswith(name.rsplit(".", 1)[0] + "."):  # a package's own private modules
                        yield f"{name}: imports the private module {target}"
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                dotted = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                if dotted in MODULES:
                    aliases[local] = dotted
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != name):
            yield f"{name}: {node.value.id}.{node.attr} (of {aliases[node.value.id]})"


def test_no_module_uses_another_modules_private_names():
    uses = [use for name, path in MODULES.items() for use in _private_uses(name, _parse(path))]
    assert not uses, "Private names used from another module:\n" + "\n".join(uses)


def test_launch_imports_inside_functions_only_for_optional_dependencies():
    offending = []
    for name, path in MODULES.items():
        if not name.startswith("launch"):
            continue
        with open(path) as f:
            lines = f.read().splitlines()
        tree = ast.parse("\n".join(lines), path)
        inside = _function_bodies(tree)
        for node in ast.walk(tree):
            if id(node) not in inside:
                continue
            imported = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            comment = lines[node.lineno - 1].partition("#")[2]
            if imported.split(".")[0] in OPTIONAL or any(package in comment for package in OPTIONAL):
                continue
            offending.append(f"{os.path.relpath(path, REPO)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not offending, (
        "Imports inside functions in launch/ that no optional dependency needs (move them to the top of the "
        "module, or say on the line which optional package they keep out of `import launch`):\n" + "\n".join(offending)
    )
