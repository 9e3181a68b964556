"""The small measuring programs of runtime/harness (the calibration, the topology probe): built
once per source and compiler into the cache by the builder (`build.compile_program`), run with a
timeout by `process.run`. Neither needs Meson: each is one source file and the runtime headers it
includes.

A program that cannot be built or run raises ProgramError with one line saying why; its callers
keep that as a note (failures are data) and go on without what it would have measured.
"""

from __future__ import annotations

import hashlib
import shlex
from importlib import resources
from pathlib import Path

from hspc_gen.model import Status
from hspc_gen.search.measure import process
from hspc_gen.search.measure.build import compile_program

COMPILE_TIMEOUT_SECONDS = 120.0
FOLDER = "host"  # under the cache folder: the programs, and the host records beside them


class ProgramError(Exception):
    pass


def source(name: str) -> Path:
    """A program's source under runtime/harness, as installed."""
    return Path(str(resources.files("hspc_gen.runtime").joinpath("harness", name)))


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
    compiled = compile_program(
        shlex.split(compiler),
        [str(program_source)],
        partial,
        includes=[str(runtime)],
        timeout=COMPILE_TIMEOUT_SECONDS,
    )
    if compiled.status is Status.timeout:
        raise ProgramError(f"its program did not build within {COMPILE_TIMEOUT_SECONDS:g} s")
    if compiled.start_error:
        raise ProgramError(f"could not build its program ({compiled.start_error})")
    if compiled.status is not Status.ok:
        raise ProgramError(f"its program failed to build: {_last(compiled.log)}")
    partial.replace(program)
    return program


def call(argv: list[str], timeout: float, what: str) -> str:
    """The program's standard output; ProgramError when it cannot `what` (build, run)."""
    done = process.run(argv, timeout)
    if done.timed_out:
        raise ProgramError(f"its program did not {what} within {timeout:g} s")
    if done.start_error:
        raise ProgramError(f"could not {what} its program ({done.start_error})")
    if done.code != 0:
        raise ProgramError(f"its program failed to {what}: {_last(done.stderr)}")
    return done.stdout


def _last(log: str) -> str:
    return (log.strip().splitlines() or ["(no output)"])[-1]
