"""The golden header's spec (tests/data/golden: what test_render compares and other tests render),
and the compilers, standards and warnings a rendered header must build under without a warning."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from hspc_gen import __version__
from hspc_gen.emit.provenance import TunedOn
from hspc_gen.model import ChannelParams, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.render import HeaderSpec, Provenance

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
TUNED_ON = TunedOn(
    hspc_gen_version=__version__,
    fingerprint="0123456789abcdef",
    compiler="g++ (Golden 12.2.0-14) 12.2.0",
    kernel="6.1.0-golden",
    model_name="Golden CPU",
    logical_cpus=2,
)
PROVENANCE = Provenance(
    command=("hspc-gen", "--target", "examples/app.yaml", "--effort", "estimate"),
    host_summary="Golden CPU; 1 package(s), 2 core(s), 2 CPU(s), CMP",
    measured=("throughput: 5e+08 events/s (95% CI 4.9e+08 to 5.1e+08, 20 rounds)",),
    tuned_on=TUNED_ON,
)
COMPILERS = ("g++", "clang++")
STANDARDS = ("c++17", "c++20", "c++23")
WARNINGS = ("-Wall", "-Wextra", "-Wpedantic", "-Werror")
# What users who build strictly add (issue 24: glibc's CPU_SET expansion warned under
# -Wsign-conversion, timespec's casts under -Wuseless-cast); clang's own names where they differ
# (it has no -Wuseless-cast; -Wshadow-all is its whole -Wshadow).
STRICT = {
    "g++": ("-Wconversion", "-Wsign-conversion", "-Wuseless-cast", "-Wshadow"),
    "clang++": ("-Wconversion", "-Wsign-conversion", "-Wshadow-all"),
}


def spec(primitive: Primitive = Primitive.futex, namespace: str = "golden") -> HeaderSpec:
    params = ChannelParams(128, 4096, 4, 16384, primitive, -1, -1)
    threads = ThreadAdvice(1, 2, 2, (1,), (0, 1), pinned=False)
    return HeaderSpec("golden", namespace, params, PROVENANCE, threads)


@functools.cache
def std_flag(compiler: str, standard: str) -> str:
    """`-std=` for `standard`, or its draft name where the compiler predates the final one
    (clang 14 knows C++23 only as c++2b)."""
    flag = f"-std={standard}"
    probe = [compiler, flag, "-x", "c++", "-fsyntax-only", "/dev/null"]
    if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return flag
    return flag.replace("c++23", "c++2b").replace("c++20", "c++2a")
