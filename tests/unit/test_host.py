"""hspc_gen.host.machine against recorded and generated sysfs trees, the live machine, and hwloc's
lstopo reading the very same trees."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

import sysfs_scripts
from hspc_gen.cpulist import format_cpu_list, parse_cpu_list
from hspc_gen.errors import UserError
from hspc_gen.host.machine import Cache, Host, compiler_version, describe, read_host
from hspc_gen.host.sysfs import read_allowed, read_cpu_quota, read_huge_pages

DATA = Path(__file__).resolve().parents[1] / "data" / "sysfs"
TREES = sorted(p.name for p in DATA.iterdir() if (p / "sys" / "devices").is_dir())
LSTOPO = "lstopo-no-graphics"
KiB, MiB = 1 << 10, 1 << 20
JSON_KEYS = {
    "logical_cpus",
    "allowed_cpus",
    "cores",
    "packages",
    "threads_per_core",
    "smt",
    "numa_nodes",
    "cache_line_bytes",
    "caches",
    "cpu_quota",
    "virtual",
    "kind",
    "model_name",
    "kernel",
    "compiler",
    "huge_pages",
    "fingerprint",
}


def tree(name: str) -> Host:
    return read_host(DATA / name / "sys")


@dataclass(frozen=True)
class Expected:
    """Each machine as its datasheet describes it, written out by hand."""

    logical: str
    packages: int
    cores: int
    threads_per_core: int
    numa_nodes: int
    l3_groups: tuple[str, ...]
    kind: tuple[str, ...]


EXPECTED = {
    "1s-4c-8t": Expected("0-7", 1, 4, 2, 1, ("0-7",), ("CMP", "SMT")),
    "1s-4c-8t-offline": Expected("0-4,6-7", 1, 4, 2, 1, ("0-4,6-7",), ("CMP", "SMT")),
    "2s-4c-nosmt": Expected("0-7", 2, 8, 1, 2, ("0-3", "4-7"), ("CMP", "SMP")),
    "2s-8c-2t": Expected("0-31", 2, 16, 2, 2, ("0-7,16-23", "8-15,24-31"), ("CMP", "SMP", "SMT")),
    "1s-8c-split-l3": Expected("0-15", 1, 8, 2, 1, ("0-7", "8-15"), ("CMP", "SMT")),
    "epyc-2c-vm": Expected("0-1", 1, 2, 1, 1, ("0-1",), ("CMP",)),
    "epyc-genoa-2c-vm": Expected("0-1", 1, 2, 1, 1, ("0-1",), ("CMP",)),
    "vm-16c": Expected("0-15", 1, 16, 1, 1, ("0-15",), ("CMP",)),
    "xeon-16c-vm": Expected("0-15", 1, 16, 1, 1, ("0-15",), ("CMP",)),
}


def test_every_tree_has_expectations() -> None:
    assert sorted(EXPECTED) == TREES


@pytest.mark.parametrize("name", TREES)
def test_tree_shape(name: str) -> None:
    host, want = tree(name), EXPECTED[name]
    assert format_cpu_list(host.logical_cpus) == want.logical
    assert host.allowed_cpus == host.logical_cpus  # a recorded tree has no process to restrict
    assert (host.packages, host.cores) == (want.packages, want.cores)
    assert host.threads_per_core == want.threads_per_core
    assert host.smt == (want.threads_per_core > 1)
    assert host.numa_nodes == want.numa_nodes
    assert tuple(format_cpu_list(g) for g in host.llc_groups()) == want.l3_groups
    assert host.kind == want.kind
    assert host.cpu_quota is None
    assert host.cache_line_bytes == 64


def test_two_sockets_with_smt_helpers() -> None:
    host = tree("2s-8c-2t")
    assert host.siblings(3) == (3, 19)
    assert host.core_of(3) == host.core_of(19) != host.core_of(4)
    assert sorted({host.core_of(cpu) for cpu in host.logical_cpus}) == list(range(16))
    assert host.l2_bytes_per_core() == 1 * MiB
    assert host.l1d_bytes() == 32 * KiB
    assert len(host.caches) == 16 * 3 + 2
    assert host.model_name == "Intel(R) Xeon(R) Silver 4110 CPU @ 2.10GHz"
    assert not host.virtual
    assert host.kernel == "recorded"


def test_offline_cpu_is_left_out() -> None:
    host = tree("1s-4c-8t-offline")
    assert 5 not in host.logical_cpus
    assert host.siblings(1) == (1,)
    assert host.siblings(2) == (2, 6)
    assert all(5 not in cache.cpus for cache in host.caches)
    with pytest.raises(UserError, match="CPU 5 is not an online CPU"):
        host.core_of(5)


def test_kernel_before_5_7_names_siblings_thread_siblings_list() -> None:
    host = tree("2s-4c-nosmt")
    assert host.siblings(0) == (0,)
    assert host.kernel == "3.10.0-1160.el7.x86_64"
    assert [place.package for place in host.topology] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [place.node for place in host.topology] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_split_l3_and_adjacent_siblings() -> None:
    host = tree("1s-8c-split-l3")
    assert host.siblings(6) == (6, 7)
    assert host.llc_groups() == (tuple(range(8)), tuple(range(8, 16)))
    assert host.l2_bytes_per_core() == 512 * KiB


def test_recorded_machine() -> None:
    host = tree("epyc-2c-vm")
    assert host.model_name == "AMD EPYC"
    assert host.virtual
    assert host.kernel == (DATA / "epyc-2c-vm" / "kernel").read_text().strip()
    assert host.caches[-1] == Cache(3, "Unified", 32 * MiB, 64, (0, 1))


def test_to_json_has_exactly_the_documented_keys() -> None:
    document = tree("2s-8c-2t").to_json()
    assert set(document) == JSON_KEYS
    again = json.loads(json.dumps(document))
    assert again["caches"][0] == {
        "level": 1,
        "type": "Data",
        "size_bytes": 32 * KiB,
        "line_bytes": 64,
        "cpus": [0, 16],
    }
    assert again["kind"] == ["CMP", "SMP", "SMT"]


def test_fingerprint_ignores_what_varies_between_runs() -> None:
    host = tree("1s-4c-8t")
    narrowed = dataclasses.replace(host, allowed_cpus=(1, 2), cpu_quota=1.5)
    assert narrowed.fingerprint == host.fingerprint
    assert dataclasses.replace(host, kernel="6.2").fingerprint != host.fingerprint
    assert dataclasses.replace(host, compiler="clang 14").fingerprint != host.fingerprint
    fingerprints = {tree(name).fingerprint for name in TREES}
    assert len(fingerprints) == len(TREES)
    assert all(len(f) == 16 and int(f, 16) >= 0 for f in fingerprints)


def test_describe_names_the_facts() -> None:
    host = tree("2s-8c-2t")
    text = describe(host)
    assert text.splitlines()[0] == f"Host {host.fingerprint}"
    for fact in (
        "Kind       CMP SMP SMT",
        "package 1: 8 cores, CPUs 8-15,24-31",
        "Cores      16 (2 threads per core)",
        "NUMA       2 nodes",
        "node 0: CPUs 0-7,16-23",
        "L1d  32 KiB x 16, one per core",
        "L3   11 MiB x 2, each shared by 16 CPUs: 0-7,16-23 | 8-15,24-31",
        "CPU quota  none",
    ):
        assert fact in text
    assert "up to 2 threads per core" in describe(tree("1s-4c-8t-offline"))


def test_missing_root_is_a_user_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(UserError, match=str(missing)):
        read_host(missing)
    with pytest.raises(UserError, match=rf"{tmp_path}.*devices/system/cpu"):
        read_host(tmp_path)


def copy_tree(name: str, tmp_path: Path) -> Path:
    shutil.copytree(DATA / name, tmp_path / name)
    return tmp_path / name / "sys"


def test_missing_optional_files_degrade(tmp_path: Path) -> None:
    sys_root = copy_tree("1s-4c-8t", tmp_path)
    for line_file in sys_root.glob("devices/system/cpu/cpu*/cache/index*/coherency_line_size"):
        line_file.write_text("128\n")
    assert read_host(sys_root).cache_line_bytes == 128
    for line_file in sys_root.glob("devices/system/cpu/cpu*/cache/index*/coherency_line_size"):
        line_file.unlink()
    assert read_host(sys_root).cache_line_bytes == 64
    for cache_dir in sys_root.glob("devices/system/cpu/cpu*/cache"):
        shutil.rmtree(cache_dir)
    shutil.rmtree(sys_root / "devices" / "system" / "node")
    (sys_root.parent / "proc" / "cpuinfo").unlink()
    host = read_host(sys_root)
    assert (host.caches, host.cache_line_bytes, host.numa_nodes) == ((), 64, 1)
    assert host.llc_groups() == ()
    assert (host.l2_bytes_per_core(), host.l1d_bytes()) == (256 * KiB, 32 * KiB)
    assert host.model_name == "unknown"
    assert host.cores == 4


def test_malformed_file_is_a_user_error_naming_it(tmp_path: Path) -> None:
    sys_root = copy_tree("1s-4c-8t", tmp_path)
    bad = sys_root / "devices" / "system" / "cpu" / "cpu2" / "topology" / "physical_package_id"
    bad.write_text("two\n")
    with pytest.raises(UserError, match=f"{bad}: expected an integer"):
        read_host(sys_root)


def test_online_list_missing_falls_back_to_each_cpu(tmp_path: Path) -> None:
    sys_root = copy_tree("1s-4c-8t-offline", tmp_path)
    (sys_root / "devices" / "system" / "cpu" / "online").unlink()
    assert format_cpu_list(read_host(sys_root).logical_cpus) == "0-4,6-7"


def test_cpu_lists() -> None:
    source = Path("online")
    assert parse_cpu_list("0-3,8,10-11\n", source) == (0, 1, 2, 3, 8, 10, 11)
    assert parse_cpu_list("", source) == ()
    assert format_cpu_list([11, 10, 8, 3, 2, 1, 0]) == "0-3,8,10-11"
    for bad in ("3-1", "a", "1-", "-2"):
        with pytest.raises(UserError, match="online: malformed CPU list"):
            parse_cpu_list(bad, source)


def test_cgroup_v2_quota_is_the_tightest_ancestor() -> None:
    v2 = DATA / "cgroup" / "v2"
    cgroup = v2 / "sys" / "fs" / "cgroup"
    assert read_cpu_quota(cgroup, v2 / "proc" / "self" / "cgroup") == 1.5
    assert read_cpu_quota(cgroup, v2 / "proc" / "unlimited" / "cgroup") is None


def test_cgroup_v1_quota_and_namespaced_view() -> None:
    v1 = DATA / "cgroup" / "v1"
    cgroup = v1 / "sys" / "fs" / "cgroup"
    assert read_cpu_quota(cgroup, v1 / "proc" / "self" / "cgroup") == 2.5
    assert read_cpu_quota(cgroup, v1 / "proc" / "namespaced" / "cgroup") is None


def test_allowed_cpus_stay_inside_the_cpuset() -> None:
    v2 = DATA / "cgroup" / "v2"
    online = range(64)
    allowed = read_allowed(online, v2 / "sys" / "fs" / "cgroup", v2 / "proc" / "self" / "cgroup")
    assert allowed == tuple(sorted(os.sched_getaffinity(0) & {1, 2, 3}))


def test_live_host_is_consistent() -> None:
    host = read_host()
    assert set(host.allowed_cpus) <= set(host.logical_cpus)
    assert set(host.allowed_cpus) == os.sched_getaffinity(0) & set(host.logical_cpus)
    if all(len(host.siblings(cpu)) == host.threads_per_core for cpu in host.logical_cpus):
        assert host.cores * host.threads_per_core == len(host.logical_cpus)
    assert read_host().fingerprint == host.fingerprint
    assert host.kernel == os.uname().release
    assert host.cpu_quota is None or host.cpu_quota > 0
    assert set(host.to_json()) == JSON_KEYS


def test_compiler_version_names_a_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if shutil.which("c++"):
        assert compiler_version() != "unknown"
        assert any(name in compiler_version() for name in ("c++", "g++", "clang", "GCC"))
    monkeypatch.setenv("PATH", str(tmp_path))  # a real lookup that finds no compiler
    assert compiler_version.__wrapped__() == "unknown"


def test_a_compiler_name_not_utf8_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (compiler := tmp_path / "odd-c++").write_bytes(b"#!/bin/sh\nprintf 'odd\\377c++ 1.0\\n'\n")
    compiler.chmod(0o755)  # d227347 raised UnicodeDecodeError; the header escapes what it reads
    monkeypatch.setenv("CXX", str(compiler))
    assert compiler_version.__wrapped__() == "odd\ufffdc++ 1.0"


def test_generated_trees_are_what_the_script_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sysfs_scripts.load("make_trees", monkeypatch).generate_all(tmp_path)
    generated = sorted(p.name for p in tmp_path.iterdir())
    assert set(generated) <= {*TREES, "cgroup"}
    for name in generated:
        assert_same_files(DATA / name, tmp_path / name)


def assert_same_files(committed: Path, fresh: Path) -> None:
    def files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    assert files(committed) == files(fresh)
    _, mismatch, errors = filecmp.cmpfiles(committed, fresh, files(fresh), shallow=False)
    assert (mismatch, errors) == ([], [])


@dataclass(frozen=True)
class Topology:
    """The facts both readers should agree on, as comparable plain values."""

    packages: int
    pus: tuple[int, ...]
    cores: tuple[tuple[int, ...], ...]
    numa_nodes: int
    nodes: tuple[tuple[int, ...], ...]  # the CPUs of each node that has any
    caches: tuple[tuple[int, str, int, tuple[int, ...]], ...]


def ours(host: Host) -> Topology:
    nodes: dict[int, list[int]] = {}
    for place in host.topology:
        nodes.setdefault(place.node, []).append(place.cpu)
    return Topology(
        packages=host.packages,
        pus=host.logical_cpus,
        cores=tuple(sorted({host.siblings(cpu) for cpu in host.logical_cpus})),
        numa_nodes=host.numa_nodes,
        nodes=tuple(sorted(tuple(cpus) for cpus in nodes.values())),
        caches=tuple(sorted((c.level, c.type, c.size_bytes, c.cpus) for c in host.caches)),
    )


_HWLOC_CACHE_TYPES = {"0": "Unified", "1": "Data", "2": "Instruction"}


def lstopo(*args: str) -> Topology:
    """hwloc's view, from lstopo's XML export."""
    if shutil.which(LSTOPO) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{LSTOPO} is missing: ./dev setup installs the hwloc package")
        pytest.skip(f"{LSTOPO} is not installed")
    command = [LSTOPO, *args, "--of", "xml"]
    xml = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout
    objects = list(ET.fromstring(xml).iter("object"))

    def cpus(obj: ET.Element) -> tuple[int, ...]:
        mask = int("".join(word.removeprefix("0x") for word in obj.attrib["cpuset"].split(",")), 16)
        return tuple(cpu for cpu in range(mask.bit_length()) if mask >> cpu & 1)

    def of_type(name: str) -> list[ET.Element]:
        return [obj for obj in objects if obj.attrib["type"] == name]

    caches = [obj for obj in objects if re.fullmatch(r"L\d+i?Cache", obj.attrib["type"])]
    return Topology(
        packages=len(of_type("Package")),
        pus=tuple(sorted(int(obj.attrib["os_index"]) for obj in of_type("PU"))),
        cores=tuple(sorted(cpus(obj) for obj in of_type("Core"))),
        numa_nodes=len(of_type("NUMANode")),
        nodes=tuple(sorted(cpus(n) for n in of_type("NUMANode") if cpus(n))),
        caches=tuple(
            sorted(
                (
                    int(obj.attrib["depth"]),
                    _HWLOC_CACHE_TYPES[obj.attrib["cache_type"]],
                    int(obj.attrib["cache_size"]),
                    cpus(obj),
                )
                for obj in caches
            )
        ),
    )


@pytest.mark.parametrize("name", TREES)
def test_tree_agrees_with_lstopo(name: str) -> None:
    host = tree(name)
    theirs = lstopo("--input", str(DATA / name), "--if", "fsroot")
    assert ours(host) == theirs
    assert host.cores == len(theirs.cores)
    assert len(host.llc_groups()) == sum(1 for c in theirs.caches if c[0] == 3)


def test_live_host_agrees_with_lstopo() -> None:
    # --disallowed: hwloc otherwise hides CPUs outside our cpuset, which are still online.
    assert ours(read_host()) == lstopo("--disallowed")


def test_the_transparent_huge_pages_mode_is_the_bracketed_word(tmp_path: Path) -> None:
    assert read_huge_pages(tmp_path) == ""  # not offered (a recorded tree, an old kernel)
    (tmp_path / "enabled").write_text("always [madvise] never\n", encoding="utf-8")
    assert read_huge_pages(tmp_path) == "madvise"
    assert tree("2s-8c-2t").huge_pages == ""
