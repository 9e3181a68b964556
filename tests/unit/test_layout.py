"""The README's layout tables against the tree: every Python package of generator/, search/ and
reports/ is a row naming exactly its modules, and every top-level folder is in one of the tables,
so a module added, moved or removed without its line fails here instead of leaving a stale map.
And no test module imports another: what tests share lives in tests/support."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE_ROOTS = ("generator", "search", "reports")
MODULE_TABLE = "Every Python module, by folder"
OTHER_TABLE = "| other folders | what |"
IMPORTS_A_TEST_MODULE = re.compile(r"^[ \t]*(?:from|import)[ \t]+test_\w+", re.MULTILINE)


def layout_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n## Layout\n")
    return readme[start : readme.index("\n## ", start + 1)]


def table_rows(section: str, heading: str) -> list[list[str]]:
    """The cells of each row of the table that follows `heading` (up to the first blank line)."""
    lines = section[section.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def named_modules(cell: str) -> set[str]:
    """The module names a cell lists: the backticked words outside parentheses."""
    outside = re.sub(r"\([^()]*\)", "", cell)
    return set(re.findall(r"`([^`]+)`", outside))


def folder_of(cell: str) -> str:
    match = re.fullmatch(r"`([\w/]+)/`", cell)
    assert match, f"a folder cell reads `folder/`: {cell!r}"
    return match.group(1)


def packages() -> dict[str, set[str]]:
    """Every package folder under the package roots, with its modules (file stems)."""
    found = {}
    for root in PACKAGE_ROOTS:
        for init in sorted((REPO / root).rglob("__init__.py")):
            folder = init.parent
            modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
            found[str(folder.relative_to(REPO))] = modules
    return found


def test_the_module_table_names_every_package_and_exactly_its_modules() -> None:
    rows = table_rows(layout_section(), MODULE_TABLE)
    listed = {folder_of(row[0]): named_modules(row[2]) for row in rows}
    assert sorted(listed) == sorted(packages())
    for folder, modules in packages().items():
        assert listed[folder] == modules, (
            f"{folder}: missing {sorted(modules - listed[folder])},"
            f" not in the tree {sorted(listed[folder] - modules)}"
        )


def test_every_top_level_folder_is_in_a_layout_table() -> None:
    section = layout_section()
    in_tables = {folder_of(row[0]).split("/")[0] for row in table_rows(section, MODULE_TABLE)}
    in_tables |= {folder_of(row[0]) for row in table_rows(section, OTHER_TABLE)}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    folders = {path.split("/")[0] for path in tracked if "/" in path}
    assert {f for f in folders if not f.startswith(".")} == in_tables


def test_a_module_in_parentheses_is_not_counted_as_listed() -> None:
    assert named_modules("`api` (the face, `search_channel`), `batch`") == {"api", "batch"}


def test_no_test_module_imports_another() -> None:
    """Importing a test module runs the whole of it, registers its fixtures again and breaks when
    it is renamed: what tests share belongs in a module of tests/support. The lines counted
    include an indented import and one in a script a test runs in a child process."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in IMPORTS_A_TEST_MODULE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(REPO)}:{line}: {match.group().strip()}")
    assert found == []


def test_the_import_check_sees_every_form_of_the_import() -> None:
    text = "from test_a import b\n    import test_c\nx = 'from test_d'\nimport tests_e\n"
    assert [m.group().strip() for m in IMPORTS_A_TEST_MODULE.finditer(text)] == [
        "from test_a",
        "import test_c",
    ]
