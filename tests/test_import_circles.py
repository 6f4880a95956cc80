"""No module imports, directly or through others, a module that imports it.

The import graph of ``loopx_core`` and ``loopx_tui`` (grimp, the library
import-linter reads with: top-level, function-level and type-checking imports
alike) is split into its strongly connected components; every component of
more than one module is a circle. The project has none (#41 broke the last,
the operators' ``ops/``): a new circle, however small and through whatever
kind of import, fails the gate. Break it by moving what both sides need
below them (docs/ARCHITECTURE.md, "No circles")."""

from __future__ import annotations

import sys

import grimp


def circles(imports: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(imports.get(module, ())):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(component)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(imports):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def project_imports() -> dict[str, set[str]]:
    graph = grimp.build_graph("loopx_core", "loopx_tui", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_the_project_has_no_import_circle():
    found = [sorted(c) for c in circles(project_imports())]
    assert not found, (
        "modules that import each other (break the circle: move what both need below them):\n"
        + "\n".join(map(str, found))
    )


def test_the_check_finds_a_circle_through_other_modules():
    """It bites: a → b → c → a is one circle; a module beside it is not in it."""
    found = circles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()})
    assert found == [{"a", "b", "c"}]


if __name__ == "__main__":  # `./dev check` runs it: the gate says so without the suite
    found = [sorted(c) for c in circles(project_imports())]
    for circle in found:
        print("import circle (move what both need below them):", ", ".join(circle), file=sys.stderr)
    print(f"import circles: {len(found)} in loopx_core and loopx_tui")
    sys.exit(1 if found else 0)
