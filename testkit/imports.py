"""The import graph of ``machines`` as a process runs it, and the cycles in it.

grimp (what ``lint-imports`` builds its graph with) reads every ``import`` statement: at a
module's top, inside functions and under ``TYPE_CHECKING``. It does not read an import by
name (``importlib.import_module("machines.runtime.telemetry")``), which is how the runtime
keeps OpenTelemetry and the clouds' libraries out of ``import machines``: those are added
here, so a cycle made lazy or by name still counts, and so does an import by name against
the ``layers`` contracts of ``pyproject.toml`` (which ``lint-imports`` checks without them).
A name computed at run time (a registry's module names) is followed by ``COMPUTED``, which
says what each such call imports; a call it does not know is refused, never skipped.

``python -m testkit.imports`` prints each cycle and each import against a layers contract
(exit status 1 when there is one; 2 for an import by a name it cannot follow), for the
package on ``sys.path`` and the ``pyproject.toml`` beside it: the test runs it on a changed
copy of the package.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp

PACKAGE = "machines"
IMPORTERS = frozenset({"import_module", "__import__"})
"""The calls that import by name (``importlib.import_module``, ``__import__``)."""


def _runtime_facts() -> list[str]:
    clouds = importlib.import_module("machines.runtime.clouds")
    return list(clouds.CLOUDS.values())


def _runtime_providers() -> list[str]:
    clouds = importlib.import_module("machines.runtime.clouds")
    return [facts.provider.partition(":")[0] for facts in clouds.clouds().values()]


def _program_modules(leaf: str) -> Callable[[], list[str]]:
    def modules() -> list[str]:
        clouds = importlib.import_module("machines.program.clouds")
        return [f"{package}.{leaf}" for package in clouds.CLOUDS.values()]

    return modules


COMPUTED: dict[tuple[str, str], Callable[[], Iterable[str]]] = {
    # (module, function) of an import by a computed name: the modules it may import
    ("machines.runtime.clouds", "cloud"): _runtime_facts,
    ("machines.runtime.factory", "provider_class"): _runtime_providers,
    ("machines.program.clouds", "deployments"): _program_modules("config"),
    ("machines.program.compose", "deploy"): _program_modules("components"),
}


@dataclass(frozen=True)
class ByName:
    """One import by name: the module and function it is in, the line, what it imports
    (None: a name computed at run time, found in ``COMPUTED``)."""

    importer: str
    function: str
    line: int
    imported: str | None


class UnknownImport(Exception):
    """An import by a computed name ``COMPUTED`` does not say the modules of."""


def _root(package: str) -> Path:
    """The folder of ``package`` (found on ``sys.path``, not imported)."""
    spec = importlib.util.find_spec(package)
    assert spec is not None, f"no package {package}"
    assert spec.submodule_search_locations, f"{package} is not a package"
    return Path(next(iter(spec.submodule_search_locations)))


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    root = _root(package)
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _calls(tree: ast.AST, function: str = "") -> Iterator[tuple[str, ast.Call]]:
    """Each call in ``tree`` with the name of the function (or method) around it."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _calls(node, node.name)
            continue
        if isinstance(node, ast.Call):
            yield function, node
        yield from _calls(node, function)


def by_name(package: str = PACKAGE) -> list[ByName]:
    """Every import by name in ``package``'s modules."""
    found = []
    for module, path in _modules(package):
        for function, call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            called = call.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name not in IMPORTERS or not call.args:
                continue
            first = call.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            imported = first.value if literal else None  # type: ignore[attr-defined]
            found.append(ByName(module, function, call.lineno, imported))
    return found


def graph(package: str = PACKAGE) -> grimp.ImportGraph:
    """``package``'s imports as grimp reads them, with its imports by name added."""
    built = grimp.build_graph(package, cache_dir=None)
    for each in by_name(package):
        if each.imported is not None:
            targets: Iterable[str] = [each.imported]
        elif (each.importer, each.function) in COMPUTED:
            targets = COMPUTED[each.importer, each.function]()
        else:
            raise UnknownImport(
                f"{each.importer}:{each.line} ({each.function or 'module'}) imports a name "
                "computed at run time: say which modules it imports in testkit.imports.COMPUTED"
            )
        for target in targets:
            if target == package or target.startswith(f"{package}."):
                built.add_import(
                    importer=each.importer,
                    imported=target,
                    line_number=each.line,
                    line_contents=f"by name in {each.function or 'the module'}",
                )
    return built


def cycles(built: grimp.ImportGraph) -> list[list[str]]:
    """One cycle through each group of modules that import each other (each module of a
    cycle imports the next, the last the first), sorted; none in a package without."""
    seen: set[str] = set()
    found = []
    for module in sorted(built.modules):
        if module in seen:
            continue
        group = built.find_upstream_modules(module) & built.find_downstream_modules(module)
        if not group:
            continue
        seen |= group | {module}
        step = min(built.find_modules_directly_imported_by(module) & group)
        back = built.find_shortest_chain(importer=step, imported=module)
        assert back is not None
        found.append([module, *back[:-1]])
    return found


def said(cycle: list[str]) -> str:
    """A cycle in one line: ``a -> b -> a``."""
    return " -> ".join([*cycle, cycle[0]])


def _layer(entry: str) -> grimp.Layer:
    """A layer as a contract writes it: ``a | b`` (independent) or ``a : b``."""
    independent = ":" not in entry
    tails = entry.replace("|", ":").split(":")
    return grimp.Layer(*(t.strip() for t in tails), independent=independent)


def against_layers(built: grimp.ImportGraph, package: str = PACKAGE) -> list[str]:
    """Each import, by name too, against a ``layers`` contract of the ``pyproject.toml``
    beside ``package``: ``contract: importer -> imported``, sorted."""
    project = tomllib.loads((_root(package).parent / "pyproject.toml").read_text("utf-8"))
    found = []
    for contract in project["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers":
            continue
        broken = built.find_illegal_dependencies_for_layers(
            layers=[_layer(entry) for entry in contract["layers"]],
            containers=set(contract.get("containers", ())),
        )
        found += [f"{contract['id']}: {d.importer} -> {d.imported}" for d in broken]
    return sorted(found)


def main() -> int:
    try:
        built = graph()
    except UnknownImport as error:
        print(error)
        return 2
    found = [said(cycle) for cycle in cycles(built)] + against_layers(built)
    for line in found:
        print(line)
    return 1 if found else 0


def changed_copy(root: Path, into: Path, module: str, code: str) -> Path:
    """A copy of ``root``'s ``machines`` and ``pyproject.toml`` in ``into``, with ``code``
    added at the end of ``module`` (a path under ``machines/``): what a check is run on to
    see it refuse a change."""
    copy = into / "checkout"
    shutil.copytree(root / PACKAGE, copy / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", copy / "pyproject.toml")
    with (copy / PACKAGE / module).open("a", encoding="utf-8") as source:
        source.write(f"\n{code}\n")
    return copy


def checked(root: Path) -> subprocess.CompletedProcess[str]:
    """This module's check (``main``) in a fresh interpreter, of the ``machines`` package and
    ``pyproject.toml`` in ``root`` (testkit from this checkout)."""
    here = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-m", "testkit.imports"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{here}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


if __name__ == "__main__":
    sys.exit(main())
