"""`hspc-gen vendor`: the per-machine install step as a build system runs it, at configure time
(`hspc_gen_channel` in HspcGen.cmake, the Meson snippet; `hspc-gen integration` says where they
are). The header is tuned into the build's folder unless that folder already holds the header of
the same inputs: app.yaml, every file it names and the local headers those include (app_files),
byte for byte, this hspc-gen's version, this
host's fingerprint and the options that shape the header. A build system re-configures far more
often than any of these change, and a measuring run takes its whole budget.

What the inputs were is kept beside the header (STAMP_FILE), readable, so that whoever wonders why
a configure tuned again can compare. The stamp is removed before a run and written only after one
that succeeded, so a failed or interrupted run is never taken for a current header.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hspc_gen import __version__
from hspc_gen.app_files import included_headers
from hspc_gen.errors import UserError
from hspc_gen.files import json_text, write_atomic
from hspc_gen.host.machine import Host, read_host
from hspc_gen.pipeline import Options, Outputs
from hspc_gen.target.app import load_target

STAMP_FILE = "hspc-vendor.json"
# The build systems' side, shipped as package data of hspc_gen.integration.
INTEGRATION_FILES = {"cmake": "HspcGen.cmake", "meson": "meson.build"}


@dataclass(frozen=True)
class Vendoring:
    """One `hspc-gen vendor` request: the header it stands for, the files it was made from, and
    the identity a stamp must hold for that header to be current."""

    header: Path
    stamp: Path
    inputs: tuple[Path, ...]  # app.yaml first, then the files it names, then their headers
    identity: str  # canonical JSON of what made the header, see identity_of

    @staticmethod
    def of(options: Options) -> Vendoring:
        if options.out is None:
            raise ValueError("vendor writes into a build folder: options.out is required")
        given = {} if options.budget is None else {"budget": options.budget}
        target = load_target(options.target, given, {"budget": f"--budget {options.budget}"})
        named = [p for p in (target.workload.producer_source, target.workload.consumer_source) if p]
        headers = included_headers(named)
        inputs = _unique([options.target.absolute(), *named, *headers])
        out = options.out.absolute()  # the listing's paths are read from another folder
        header = Outputs.of(target, out).header
        _alone_in(out, header)
        return Vendoring(
            header=header,
            stamp=out / STAMP_FILE,
            inputs=inputs,
            identity=identity_of(options, inputs, __version__, read_host()),
        )

    def is_current(self) -> bool:
        """The stamp holds these inputs and the header is the one written after them."""
        try:
            stamp = json.loads(self.stamp.read_text(encoding="utf-8"))
            header = _sha256(self.header)
        except (OSError, ValueError):  # no stamp or no header yet, or a damaged stamp
            return False
        return isinstance(stamp, dict) and stamp == self._stamp_document(header)

    def forget(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.stamp.unlink()

    def remember(self) -> None:
        write_atomic(self.stamp, json_text(self._stamp_document(_sha256(self.header))))

    def listing(self, status: str) -> str:
        """What the build system reads: the status, the header, then each file whose change must
        re-configure the build, one per line, keyword first."""
        lines = [f"status {status}", f"header {self.header}"]
        lines += [f"input {path}" for path in self.inputs]
        return "\n".join(lines) + "\n"

    def _stamp_document(self, header_sha256: str) -> dict[str, Any]:
        return {
            "inputs": json.loads(self.identity),
            "header": self.header.name,
            "header_sha256": header_sha256,
        }


def _alone_in(out: Path, header: Path) -> None:
    """One channel to a folder: its result, summary and report have fixed names, and two
    channels taking turns there would each find the other's stamp and tune on every configure."""
    try:
        stamp = json.loads((out / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    other = stamp.get("header") if isinstance(stamp, dict) else None
    if isinstance(other, str) and other != header.name:
        raise UserError(
            f"{out} holds the channel {other}; {header.name} needs a folder of its own"
            " (give each hspc_gen_channel its own OUTPUT, each Meson snippet its own folder)"
        )


def identity_of(options: Options, inputs: tuple[Path, ...], version: str, host: Host) -> str:
    """Everything a header depends on that a build can see change, the compiler included (the
    build's, handed over as CXX). The cache folder is not in it: the records there replay
    measurements, they do not change what a run decides."""
    document = {
        "hspc_gen": version,
        "host": host.fingerprint,
        "compiler": host.compiler,
        "effort": str(options.effort),
        "budget": options.budget,
        "set": list(options.overrides),
        "files": {str(path): _sha256(path) for path in inputs},
    }
    return json.dumps(document, sort_keys=True)


def integration_file(kind: str) -> Path:
    """Where the installed package keeps the CMake module (kind "cmake") or the Meson snippet
    ("meson")."""
    folder = resources.files("hspc_gen.integration")
    return Path(str(folder.joinpath(INTEGRATION_FILES[kind])))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unique(paths: list[Path]) -> tuple[Path, ...]:
    # One file may define both sides' work.
    return tuple(dict.fromkeys(paths))
