"""The builder: every path that compiles comes here, and here are its compile flags.

A rendered Meson project -> one benchmark executable, or a recorded failure (the search's
candidates, `hspc-gen bench`'s contest); one source file and the runtime headers -> one small
program, compiled directly (the calibration, the topology probe, the user's code alone), since
Meson's setup would cost more than their compile. The flags of each (`Flags`, `PROGRAM_FLAGS`)
are defined here and nowhere else. What the rendered meson.build files keep is what belongs to
the project, not to a build of it: the language standard and the warning level as its defaults
(the options here repeat the level), the app's defines, and -UNDEBUG on the contest's asserts unit.

All candidates of a batch go into one binary, a few compile-time points to a translation unit, so
Ninja compiles them on every core; a unit that does not compile is found by its object file, its
candidates recorded as `compile_error` and the binary linked again without them (the toolchain
then builds a point to a unit, so that only the points that fail are left out). The build never
raises for a compiler's complaint; it raises only for bugs (a missing Meson or Ninja is a set-up
error).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hspc_gen.errors import UserError
from hspc_gen.model import Status
from hspc_gen.search.measure import process


@dataclass(frozen=True)
class Flags:
    """How a Meson project is compiled: Meson's build type (its optimisation: `release` is -O3,
    `plain` adds none, leaving it to `cxxflags`), asserts off (NDEBUG), the warning level, and
    the user's own flags (`hspc-gen bench --cxxflags`)."""

    buildtype: str
    ndebug: bool = False
    warning_level: int = 2
    cxxflags: str | None = None

    def meson_options(self) -> tuple[str, ...]:
        """`meson setup`'s options: part of every record's key (through the source hash), so a
        change of flags makes older measurements stale."""
        ndebug = ("-Db_ndebug=true",) if self.ndebug else ()
        user = () if self.cxxflags is None else (f"-Dcpp_args={self.cxxflags}",)
        return (f"--buildtype={self.buildtype}", *ndebug, f"-Dwarning_level={self.warning_level}",
                *user)  # fmt: skip


SEARCH_FLAGS = Flags("release", ndebug=True)
"""The search's candidates: optimised as a release build, asserts off."""
MESON_OPTIONS: tuple[str, ...] = SEARCH_FLAGS.meson_options()


CONTEST_CXXFLAGS = "-O2 -DNDEBUG"
"""`hspc-gen bench`'s --cxxflags when none are given: a release build's."""


def contest_flags(cxxflags: str) -> Flags:
    """`hspc-gen bench`: the user's flags alone decide optimisation and asserts."""
    return Flags("plain", cxxflags=cxxflags)


PROGRAM_FLAGS: tuple[str, ...] = ("-std=c++17", "-O2", "-pthread")
"""The one-file measuring programs and the user's code alone: what they time is the OS's waits
and the user's own code, which -O2 compiles as their build would."""
BUILD_TIMEOUT_SECONDS = 900
EXECUTABLE = "hspc_harness"
JOBS = os.cpu_count() or 1
"""Compilers Ninja runs at once."""
_FAILED_OBJECT = re.compile(r"^FAILED: .*?(\w+)\.cpp\.o", re.MULTILINE)  # the unit's stem


@dataclass(frozen=True)
class Project:
    """Rendered sources: relative path -> text. `variants` maps candidate id -> its source file
    (a unit that fails to compile leaves out its candidates; one no candidate owns fails the
    build)."""

    files: Mapping[str, str]
    variants: Mapping[str, str]
    options: tuple[str, ...] = MESON_OPTIONS  # meson setup's options (the compile flags)

    @property
    def source_hash(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + self.files[path].encode() + b"\0")
        digest.update(" ".join(self.options).encode())
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class BuildResult:
    status: Status
    executable: Path | None
    source_hash: str
    failed: Mapping[str, str] = field(default_factory=dict)  # candidate id -> compiler output
    log: str = ""


def tool(name: str) -> str:
    """Meson and Ninja from our own environment first (the PyPI wheels), then PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise UserError(f"{name} is not installed; run ./dev setup")
    return found


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(argv: Sequence[str], cwd: Path | None = None) -> tuple[int, str]:
    done = process.run(argv, BUILD_TIMEOUT_SECONDS, cwd=cwd, env=_environment())
    if done.timed_out:
        return -1, f"timed out after {BUILD_TIMEOUT_SECONDS} s: {' '.join(argv)}"
    if done.code is None:
        return -1, f"could not start {argv[0]}: {done.start_error}"
    return done.code, done.output


def _write_project(project: Project, source_dir: Path) -> None:
    for relative, text in project.files.items():
        path = source_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def _compile(project: Project, root: Path) -> tuple[int, str, Path]:
    source_dir, build_dir = root / "src", root / "build"
    _write_project(project, source_dir)
    log = ""
    if not (build_dir / "build.ninja").exists():
        code, log = _run(
            [tool("meson"), "setup", *project.options, str(build_dir), str(source_dir)]
        )
        if code != 0:
            return code, log + _setup_errors(build_dir), build_dir / EXECUTABLE
    code, out = _run([tool("ninja"), "-C", str(build_dir), "-k", "0", "-j", str(JOBS)])
    return code, log + out, build_dir / EXECUTABLE


def _setup_errors(build_dir: Path) -> str:
    """The compiler's own complaints from a failed `meson setup`: Meson prints only "cannot
    compile programs" and where its log is; the flag the compiler rejected ("c++: error:
    unrecognized command-line option '-fbogus'") is in that log."""
    meson_log = build_dir / "meson-logs" / "meson-log.txt"
    try:
        lines = meson_log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    errors = list(dict.fromkeys(line for line in lines if ": error: " in line))
    return "".join(f"{line}\n" for line in errors)


def build(
    render: Callable[[Sequence[str]], Project], candidate_ids: Sequence[str], cache_dir: Path
) -> BuildResult:
    """Build the batch; candidates whose translation unit fails are dropped and reported.

    `render(ids)` renders the project for a subset of the candidates, so the binary can be linked
    again without the ones that failed. Builds are cached by source hash under `cache_dir`.
    """
    project = render(candidate_ids)
    code, log, executable = _compile(project, cache_dir / project.source_hash)
    if code == 0:
        return BuildResult(Status.ok, executable, project.source_hash, log=log)
    broken = {m.group(1) for m in _FAILED_OBJECT.finditer(log)}
    failed = {cid: log for cid, src in project.variants.items() if Path(src).stem in broken}
    survivors = [cid for cid in candidate_ids if cid not in failed]
    if not failed or not survivors:
        return BuildResult(Status.compile_error, None, project.source_hash, failed, log)
    rest = build(render, survivors, cache_dir)
    return BuildResult(rest.status, rest.executable, rest.source_hash, {**failed, **rest.failed})


@dataclass(frozen=True)
class Compiled:
    """One program compiled directly: `status` ok, compile_error or timeout, and the
    compiler's output (or, when the compiler could not be started, the OS's reason)."""

    status: Status
    log: str = ""
    start_error: str = ""


def compile_program(
    compiler: Sequence[str],
    sources: Sequence[str],
    output: Path,
    *,
    includes: Sequence[str] = (),
    defines: Sequence[str] = (),
    timeout: float,
) -> Compiled:
    """`sources` -> `output` with PROGRAM_FLAGS; `compiler` is a command's words (`ccache
    c++`). Never raises for the compiler's sake: its complaint is the result's log."""
    argv = [*compiler, *PROGRAM_FLAGS, *(f"-I{folder}" for folder in includes),
            *(f"-D{define}" for define in defines), *sources, "-o", str(output)]  # fmt: skip
    done = process.run(argv, timeout)
    if done.timed_out:
        return Compiled(Status.timeout, f"did not compile within {timeout:g} s")
    if done.start_error:
        reason = f"could not start {argv[0]}: {done.start_error}"
        return Compiled(Status.compile_error, reason, done.start_error)
    return Compiled(Status.ok if done.code == 0 else Status.compile_error, done.output)
