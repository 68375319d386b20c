"""The package's imports, read with ast: no circle, and no private name taken from another module.

Every `import` and `from ... import` in course_agent/, at any depth (an import inside a function
holds a circle as well as one at the top), resolved to the package's modules. Deliberately not
handled: imports built at run time (importlib with a computed name, as __init__.py's lazy names).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "course_agent"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str) -> list[tuple[str, str | None]]:
    """(module imported, name taken from it or None) for every import in module `name`."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:  # a submodule, not a name
                    found.append((f"{base}.{alias.name}", None))
                else:
                    found.append((base, alias.name))
    return [(module, taken) for module, taken in found if module in MODULES]


def graph() -> dict[str, set[str]]:
    return {name: {module for module, _ in imports(name)} - {name} for name in MODULES}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in sorted(edges[node]):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_the_reader_finds_a_circle_and_a_private_import() -> None:
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert ("course_agent.protocol", "ToolCall") in imports("course_agent.loop")


def test_the_package_has_no_import_circle() -> None:
    assert circles(graph()) == []


def test_no_module_imports_a_private_name_of_another() -> None:
    private = sorted(
        f"{name} imports {taken} from {module}"
        for name in MODULES
        for module, taken in imports(name)
        if taken is not None and taken.startswith("_") and not taken.startswith("__")
    )
    assert private == []


def test_only_providers_import_the_gateway_and_only_tools_import_the_guards() -> None:
    # DESIGN.md's boundaries: gateway/ is providers' own, guards/ the tools'.
    owners = {"course_agent.providers.gateway": "course_agent.providers"}
    owners["course_agent.tools.guards"] = "course_agent.tools"
    crossing = sorted(
        f"{name} imports {module}"
        for name, imported in graph().items()
        for module in imported
        for inner, owner in owners.items()
        if module.startswith(inner) and not name.startswith(owner)
    )
    assert crossing == []
