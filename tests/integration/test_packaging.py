"""The wheel: built from the tracked files, installed into a fresh virtual environment, and run
from an unrelated folder, it finds its templates and runtime headers as package data."""

from __future__ import annotations

import configparser
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(argv: list[str | Path], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, cwd=cwd, check=False, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def build_wheel(tmp_path: Path) -> Path:
    """A wheel built from the tracked files only (a fresh clone's view of the project)."""
    source = tmp_path / "source"
    tracked = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO).stdout.split()
    for name in tracked:
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, source])
    (wheel,) = dist.glob("hspc_gen-*.whl")
    return wheel


def install_fresh(tmp_path: Path, wheel: Path) -> Path:
    """A fresh venv holding the wheel; its bin folder."""
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    # The dependencies come from the project's own environment (no network); hspc_gen itself
    # only from the wheel.
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", wheel])
    where = run([venv / "bin" / "python", "-c", "import hspc_gen; print(hspc_gen.__file__)"])
    assert where.stdout.startswith(str(site))
    return venv / "bin"


def test_the_wheel_works_from_a_fresh_venv_in_another_folder(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    bin_dir = install_fresh(tmp_path, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy2(REPO / "examples" / "app.yaml", elsewhere / "app.yaml")
    estimate = ["--target", "app.yaml", "--effort", "estimate", "--out", "o"]
    run([bin_dir / "hspc-gen", *estimate], cwd=elsewhere)
    header = (elsewhere / "o" / "example_channel.hpp").read_text()
    assert "class BasicChannel" in header and "namespace example {" in header
    cache = ["--cache", str(tmp_path / "cache")]  # the installed probe, built and run
    host = json.loads(run([bin_dir / "hspc-gen", "host", "--json", *cache], cwd=elsewhere).stdout)
    assert host["logical_cpus"] and host["topology"]["status"] == "measured"
    for kind in ("--cmake", "--meson"):
        build_file = Path(run([bin_dir / "hspc-gen", "integration", kind]).stdout.strip())
        assert build_file.is_file() and build_file.is_relative_to(tmp_path / "venv")
    names = run([bin_dir / "python", "-m", "zipfile", "-l", wheel]).stdout
    for data in (
        "templates/channel.hpp.j2",
        "templates/harness/variant.cpp.j2",
        "templates/bench/main.cpp.j2",
        "bench/peers.hpp",
        "hspc/channel.hpp",
        "hspc/limits.hpp",
        "harness/harness.hpp",
        "schema/app.schema.json",
        "hspc_gen/integration/HspcGen.cmake",
        "hspc_gen/integration/meson.build",
    ):
        assert data in names
    for bare in ("search/", "generator/", "reports/"):
        assert f"\n{bare}" not in names  # only the hspc_gen namespace is installed


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    return config


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def _package_dirs(config: configparser.ConfigParser) -> dict[str, Path]:
    mapping = dict(line.split(" = ") for line in _lines(config["options"]["package_dir"]))
    return {name: REPO / folder for name, folder in mapping.items()}


def _folder_of(package: str, roots: dict[str, Path]) -> Path:
    """Where a package's files are: its own package_dir entry, else its parent's folder."""
    if package in roots:
        return roots[package]
    parent, _, leaf = package.rpartition(".")
    return _folder_of(parent, roots) / leaf


def test_setup_cfg_lists_every_package_and_nothing_else() -> None:
    config = _setup_cfg()
    roots = _package_dirs(config)
    listed = set(_lines(config["options"]["packages"]))
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((name, *relative)))
    assert listed == found


def test_every_package_data_pattern_matches_a_file() -> None:
    config = _setup_cfg()
    roots = _package_dirs(config)
    for package, patterns in config["options.package_data"].items():
        folder = _folder_of(package, roots)
        for pattern in (p.strip() for p in patterns.split(",")):
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches no file"
