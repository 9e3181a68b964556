"""The consumer projects (examples/consumers/) as their users run them: each configures with the
build files hspc-gen ships (the CMake module, the Meson snippet), builds with Ninja and runs. The
tuner runs at configure time only when app.yaml or a file it names changed, and a failing tuner
fails the configure with its own message. Every configure takes the estimate: tests never measure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONSUMERS = REPO / "examples" / "consumers"
# hspc-gen, meson and ninja of the environment running the tests, first on PATH as a user's
# activated environment puts them.
SCRIPTS = Path(sysconfig.get_path("scripts"))
ENV = {**os.environ, "PATH": f"{SCRIPTS}{os.pathsep}{os.environ['PATH']}"}
CONFIGURE = {
    "cmake": ["cmake", "-S", "{src}", "-B", "{build}", "-G", "Ninja", "-DHSPC_GEN_EFFORT=estimate"],
    "meson": ["meson", "setup", "{build}", "{src}", "-Dhspc_effort=estimate"],
}
RECONFIGURE = {"cmake": CONFIGURE["cmake"], "meson": [*CONFIGURE["meson"], "--reconfigure"]}


def run(argv: Sequence[str | Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
        timeout=300,
    )


@dataclass(frozen=True)
class Project:
    system: str
    src: Path
    build: Path

    @property
    def header(self) -> Path:
        return self.build / "hspc" / "ticks_channel.hpp"

    def configure(self, argv: dict[str, list[str]] = CONFIGURE) -> str:
        words = [w.format(src=self.src, build=self.build) for w in argv[self.system]]
        done = run(words)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def ninja(self) -> subprocess.CompletedProcess[str]:
        """A build, re-configuring first when a file the configure read has changed."""
        return run(["ninja", "-C", self.build])

    def built_and_run(self) -> tuple[str, str]:
        """The build's output (which holds any re-configure's) and the program's first line."""
        build = self.ninja()
        assert build.returncode == 0, build.stdout + build.stderr
        app = run([self.build / "app"])
        assert app.returncode == 0, app.stdout + app.stderr
        return build.stdout, app.stdout

    def edit(self, name: str, text: str) -> None:
        path = self.src / name
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.fixture(params=sorted(CONFIGURE))
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    system: str = request.param
    if shutil.which(system, path=ENV["PATH"]) is None:
        pytest.fail(f"{system} is not installed: ./dev setup installs it")
    shutil.copytree(CONSUMERS / system, tmp_path / "src")
    return Project(system, tmp_path / "src", tmp_path / "build")


def tuned(output: str, project: Project) -> bool:
    """Whether the configure in `output` ran the tuner (else it found the header current)."""
    if f"hspc-gen: {project.header} current" in output:
        return False
    assert f"hspc-gen: {project.header} tuned" in output, output
    return True


def written(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_ino, status.st_mtime_ns


@pytest.mark.slow
def test_it_configures_builds_and_runs_and_tunes_only_once(project: Project) -> None:
    assert tuned(project.configure(), project)
    _, line = project.built_and_run()
    assert line.startswith("ok: 1000000 of 1000000 ticks in order, checksum ")
    # The build's compiler reached the tuner whole (Meson's may be `ccache c++`), and ran.
    stamp = json.loads((project.header.parent / "hspc-vendor.json").read_text(encoding="utf-8"))
    assert stamp["inputs"]["compiler"] not in ("", "unknown")
    header = written(project.header)
    assert not tuned(project.configure(RECONFIGURE), project)
    (project.src / "app.yaml").touch()  # the build re-configures, but the bytes are the same
    build, _ = project.built_and_run()
    assert not tuned(build, project)
    assert written(project.header) == header


@pytest.mark.slow
def test_a_changed_app_yaml_or_named_file_tunes_again_at_the_next_build(project: Project) -> None:
    project.configure()
    _, line = project.built_and_run()
    estimated = line.rsplit(" ", 1)[-1].strip()
    other = "condvar" if estimated != "condvar" else "mutex"
    project.edit("app.yaml", f"constraints:\n  primitives: [{other}]\n")
    build, line = project.built_and_run()
    assert tuned(build, project)
    assert line.startswith("ok: ") and line.endswith(f", primitive {other}\n")

    shutil.copy2(REPO / "examples" / "work.cpp", project.src / "work.cpp")
    project.edit("app.yaml", "workload:\n  producer_source: work.cpp\n")
    build, _ = project.built_and_run()
    assert tuned(build, project)
    project.edit("work.cpp", "// edited: the tuner must see it\n")
    build, _ = project.built_and_run()
    assert tuned(build, project)


@pytest.mark.slow
def test_a_failing_tuner_fails_the_configure_with_its_message(project: Project) -> None:
    project.configure()
    project.built_and_run()
    original = (project.src / "app.yaml").read_text(encoding="utf-8")
    project.edit("app.yaml", "objectve: latency\n")
    failed = project.ninja()
    assert failed.returncode != 0
    message = failed.stdout + failed.stderr
    assert "hspc-gen: error: " in message and "did you mean 'objective'" in message
    (project.src / "app.yaml").write_text(original, encoding="utf-8")
    build, line = project.built_and_run()
    assert not tuned(build, project)  # the header made from these bytes is still there
    assert line.startswith("ok: ")


@pytest.mark.parametrize(
    "copied",
    [
        CONSUMERS / "meson" / "hspc" / "meson.build",
        REPO / "examples" / "pyprof" / "hspc" / "meson.build",
    ],
    ids=["consumers/meson", "pyprof"],
)
def test_the_meson_project_holds_the_snippet_hspc_gen_ships(copied: Path) -> None:
    """A Meson project keeps a copy (Meson reads build files from its source tree only): each
    example's must be today's."""
    shipped = REPO / "generator" / "integration" / "meson.build"
    assert copied.read_bytes() == shipped.read_bytes()
