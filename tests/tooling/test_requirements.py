"""The requirements layers: exact pins, locked, each layer including the one before it,
and a site-build layer (make book) that holds what the build imports and nothing heavier."""

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
BOOK_CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
# Each layer and the layer it includes (-r), in order.
LAYERS = {
    "requirements-book.txt": None,
    "requirements.txt": "requirements-book.txt",
    "requirements-course.txt": "requirements.txt",
    "requirements-dev.txt": "requirements-course.txt",
}


def _lines(name):
    return [line.strip() for line in (ROOT / name).read_text().splitlines() if line.strip()]


def _pins(name):
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / name).read_text(), flags=re.M))


def test_jupyter_book_pinned_below_2():
    assert _pins("requirements-book.txt")["jupyter-book"].startswith("1.")


def test_direct_requirements_are_pinned_exactly():
    for name in LAYERS:
        for line in _lines(name):
            if line.startswith(("#", "-c", "-r", "-e")):
                continue
            assert re.fullmatch(r"[A-Za-z0-9_.-]+==[\w.]+", line), f"{name}: {line!r} is not an exact pin"


def test_each_layer_includes_the_one_before_it_under_the_lock():
    # The first layer reads the lock, and every other layer reads it through the first.
    assert "-c constraints.txt" in _lines("requirements-book.txt")
    for name, below in LAYERS.items():
        lines = _lines(name)
        assert [line for line in lines if line.startswith("-r")] == ([f"-r {below}"] if below else []), name


def test_every_direct_pin_is_locked_at_its_version_and_pinned_once():
    locked = _pins("constraints.txt")
    seen = {}
    for name in LAYERS:
        for package, version in _pins(name).items():
            assert locked.get(package) == version, (
                f"{name}: {package}=={version}, constraints.txt: {locked.get(package)}"
            )
            assert package not in seen, f"{package} is pinned in {seen.get(package)} and {name}"
            seen[package] = name


def test_the_book_layer_leaves_out_the_lab_the_course_and_the_test_tools():
    book = set(_pins("requirements-book.txt"))
    for heavy in ("jax", "jaxlib", "optax", "jupyterlab", "nbgrader", "otter-grader", "playwright", "pytest", "nbval"):
        assert heavy not in book
    # The package comes with its plotting and widgets extras, not the lab's.
    assert [line for line in _lines("requirements-book.txt") if line.startswith("-e")] == ["-e .[widgets]"]


def test_make_book_installs_only_the_book_layer():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^book: \$\(BOOK_STAMP\)$", makefile, flags=re.M)
    rule = re.search(r"^\$\(BOOK_STAMP\):.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert rule and "install_layer,requirements-book.txt)" in rule.group(1)
    # make lock reads the direct pins of every layer.
    lock = makefile.split("\nlock:", 1)[1].split("\n\n", 1)[0]
    assert all(name in lock for name in LAYERS)


# Where the build imports project modules from: the repository root, and the folders of
# the local Sphinx extensions, which Jupyter Book puts on sys.path.
SEARCH_PATH = [ROOT, *sorted({ROOT / folder for folder in BOOK_CONFIG["sphinx"]["local_extensions"].values()})]


def _module_file(module):
    """The repository file of a module of this project (tools.*, posenc_helpers.*), or None."""
    for folder in SEARCH_PATH:
        base = folder.joinpath(*module.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _imports(module, *, module_level_only):
    """The absolute names a project module imports (relative imports resolved); a package's
    own modules are not followed unless it imports them."""
    path = _module_file(module)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body if module_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            names.add(source)
            # from package import module
            names |= {f"{source}.{alias.name}" for alias in node.names if _module_file(f"{source}.{alias.name}")}
    return names


def _third_party_imports(modules, *, module_level_only):
    """Top-level names of the modules outside this project that ``modules`` import, directly
    or through the project modules they import."""
    queue, seen, outside = list(modules), set(), set()
    while queue:
        module = queue.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in _imports(module, module_level_only=module_level_only):
            if _module_file(name):
                queue.append(name)
            elif name.split(".")[0] not in ("posenc_helpers", "tools", "__future__"):
                outside.add(name.split(".")[0])
    return outside - set(sys.stdlib_module_names)


def _book_layer_distributions():
    """Every distribution the book layer installs: its pins and the package's extras, with
    their requirements, read from the metadata of the installed environment."""
    wanted = [Requirement(f"{name}=={version}") for name, version in _pins("requirements-book.txt").items()]
    package = re.search(r"^-e \.(\[[\w,]+\])?$", (ROOT / "requirements-book.txt").read_text(), flags=re.M)
    assert package, "requirements-book.txt does not install the package (-e .)"
    wanted.append(Requirement(f"posenc-helpers{package.group(1) or ''}"))
    found = set()
    while wanted:
        requirement = wanted.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in found:
            continue
        found.add(key)
        for text in metadata.requires(requirement.name) or []:
            child = Requirement(text)
            environments = [{"extra": extra} for extra in requirement.extras] or [{"extra": ""}]
            if child.marker is None or any(child.marker.evaluate(env) for env in environments):
                wanted.append(child)
    return {name for name, _ in found}


def test_the_book_layer_holds_what_the_build_imports():
    """The modules the build imports, found by reading their sources: the Sphinx extensions
    of _config.yml and the project modules they import (every import, function-level ones
    too, as they run during the build), and the modules of the package that the API
    reference documents, which autodoc imports (their module-level imports)."""
    sphinx = BOOK_CONFIG["sphinx"]
    mocked = set(sphinx["config"]["autodoc_mock_imports"])
    extensions = [name if folder == "." else f"{folder}.{name}" for name, folder in sphinx["local_extensions"].items()]
    needed = {name.split(".")[0] for name in sphinx["extra_extensions"]}
    needed |= _third_party_imports(extensions, module_level_only=False)
    documented = set(re.findall(r"^\.\. (?:currentmodule|automodule):: (\S+)$", _api_pages(), flags=re.M))
    assert {"posenc_helpers", "posenc_helpers.lab"} <= documented
    needed |= _third_party_imports(documented, module_level_only=True) - mocked
    providers = metadata.packages_distributions()
    installed = _book_layer_distributions()
    missing = {
        module: providers.get(module)
        for module in needed
        if not {canonicalize_name(d) for d in providers.get(module, [])} & installed
    }
    assert not missing, f"imported by the build but not installed by requirements-book.txt: {missing}"
    # What is mocked is what the lab imports and the book layer leaves out.
    assert mocked <= _third_party_imports(["posenc_helpers.lab"], module_level_only=True)
    assert not {canonicalize_name(name) for name in mocked} & installed


def _api_pages():
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((ROOT / "book" / "api").glob("*.md")))


def test_what_the_notebooks_import_is_pinned_in_the_reader_layer():
    """The student branch and otter's grading image pin what the notebooks import with the
    versions tools/course reads from requirements.txt: every one of them must be there."""
    reader = _pins("requirements.txt")
    for name in ("numpy", "matplotlib", "ipywidgets", "ipykernel", "jupyterlab", "jupyterlab-myst", "jax", "jaxlib"):
        assert name in reader, f"{name} is not pinned in requirements.txt"
