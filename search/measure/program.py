"""The small measuring programs of runtime/bench (the calibration, the topology probe): built
once per source and compiler into the cache, run with a timeout. Neither needs Meson: each is one
source file and the runtime headers it includes.

A program that cannot be built or run raises ProgramError with one line saying why; its callers
keep that as a note (failures are data) and go on without what it would have measured.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from importlib import resources
from pathlib import Path

COMPILE_TIMEOUT_SECONDS = 120.0
FOLDER = "host"  # under the cache folder: the programs, and the host records beside them


class ProgramError(Exception):
    pass


def source(name: str) -> Path:
    """A program's source under runtime/bench, as installed."""
    return Path(str(resources.files("hspc_gen.runtime").joinpath("bench", name)))


def digest(compiler: str, name: str, headers: tuple[str, ...] = ()) -> str:
    """What a build of `name` depends on: the compiler, the source and the runtime headers it
    includes (paths under runtime/)."""
    program = source(name)
    runtime = program.parent.parent
    found = hashlib.sha256(compiler.encode())
    for path in (program, *(runtime / header for header in headers)):
        found.update(path.read_bytes())
    return found.hexdigest()[:12]


def built(cache_dir: Path, compiler: str, name: str, headers: tuple[str, ...] = ()) -> Path:
    """The program of the source `name` (`calibrate_main.cpp` builds `calibrate-<digest>`),
    built once per source and compiler."""
    program_source = source(name)
    stem = program_source.stem.removesuffix("_main")
    program = cache_dir / FOLDER / f"{stem}-{digest(compiler, name, headers)}"
    if program.exists():
        return program
    program.parent.mkdir(parents=True, exist_ok=True)
    partial = program.with_name(program.name + ".partial")
    runtime = program_source.parent.parent
    argv = [*shlex.split(compiler), "-std=c++17", "-O2", "-pthread", f"-I{runtime}"]
    call([*argv, str(program_source), "-o", str(partial)], COMPILE_TIMEOUT_SECONDS, "build")
    partial.replace(program)
    return program


def call(argv: list[str], timeout: float, what: str) -> str:
    """The program's standard output; ProgramError when it cannot `what` (build, run)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ProgramError(f"its program did not {what} within {timeout:g} s") from None
    except OSError as err:
        raise ProgramError(f"could not {what} its program ({err})") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ProgramError(f"its program failed to {what}: {last}")
    return done.stdout
