"""hspc_gen.app_files: the local headers the user's sources include are found as the compiler
finds them (beside the including file, then in the sources' folders), so that what they hold is
part of the work a record or a stamp stands for."""

from __future__ import annotations

import shutil
from pathlib import Path

from hspc_gen.app_files import headers_digest, included_headers


def tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    paths = {}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    return paths


PROFILER = {
    "app/work/produce.cpp": '#include <cstdint>\n#include "replay.hpp"\n',
    "app/work/consume.cpp": (
        ' #  include "../src/aggregate.hpp"\n#include <replay.hpp>\n#include "harness/app.hpp"\n'
    ),
    "app/work/replay.hpp": '#pragma once\n#include "recording.inc"\n#include "missing.hpp"\n',
    "app/work/recording.inc": "{1, 2, 3}\n",
    "app/src/aggregate.hpp": '#include "names.hpp"\n#include "../work/replay.hpp"\n',
    "app/src/names.hpp": "#pragma once\n",
}


def test_headers_beside_relative_transitive_and_once(tmp_path: Path) -> None:
    paths = tree(tmp_path, PROFILER)
    found = included_headers([paths["app/work/produce.cpp"], paths["app/work/consume.cpp"]])
    # Reached in order, each once (replay.hpp from both sources and aggregate.hpp); `../` taken
    # out of the path; the standard library, a missing file and the harness's headers are not
    # the user's.
    assert found == tuple(
        paths[name]
        for name in (
            "app/work/replay.hpp",
            "app/src/aggregate.hpp",
            "app/work/recording.inc",
            "app/src/names.hpp",
        )
    )


def test_a_quoted_include_looks_beside_its_file_first(tmp_path: Path) -> None:
    paths = tree(
        tmp_path,
        {
            "work/main.cpp": '#include "lib/a.hpp"\n',
            "work/lib/a.hpp": '#include "common.hpp"\n',
            "work/lib/common.hpp": "",
            "work/common.hpp": "",  # in the sources' folder, but a.hpp's own folder comes first
        },
    )
    found = included_headers([paths["work/main.cpp"]])
    assert found == (paths["work/lib/a.hpp"], paths["work/lib/common.hpp"])


def test_the_digest_is_of_the_headers_contents(tmp_path: Path) -> None:
    paths = tree(tmp_path / "one", PROFILER)
    sources = [paths["app/work/produce.cpp"], paths["app/work/consume.cpp"]]
    before = headers_digest(sources)
    assert before != ""
    moved = tmp_path / "two"
    shutil.copytree(tmp_path / "one", moved)  # where the files are is not what they hold
    assert headers_digest(moved / "app" / "work" / p.name for p in sources) == before
    paths["app/work/recording.inc"].write_text("{1, 2, 4}\n", encoding="utf-8")
    assert headers_digest(sources) != before
    alone = tree(tmp_path, {"alone.cpp": "#include <vector>\n"})["alone.cpp"]
    assert headers_digest([alone]) == ""  # none: records of code without headers keep their keys
