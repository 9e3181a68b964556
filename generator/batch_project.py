"""The render stage for the search's builds: a batch's candidates as the Meson project of its
benchmark binary (render.render_harness_files). The orchestrator hands `BatchProjects` to the
search's toolchain as its renderer, so the search never imports render."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams
from hspc_gen.model.workload import Workload
from hspc_gen.render import AppWork, HarnessVariant, compiled_id, render_harness_files, unit_sources


@dataclass(frozen=True)
class BatchProjects:
    """search.measure.toolchain.Renderer, rendered by the templates under templates/harness."""

    def files(
        self,
        candidates: Sequence[tuple[str, ChannelParams]],
        event_bytes: int,
        workload: Workload,
        max_latency_ns: int,
        *,
        points_per_unit: int,
        kinds: tuple[str, ...],
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The project's files (relative path -> text), and each candidate's translation unit."""
        variants = tuple(HarnessVariant(id_, params) for id_, params in candidates)
        files = render_harness_files(
            variants,
            event_bytes,
            AppWork.of(workload),
            max_latency_ns,
            points_per_unit=points_per_unit,
            kinds=kinds,
        )
        sources = unit_sources(variants, points_per_unit)
        return files, {v.id: sources[compiled_id(v)] for v in variants}

    def compiled_points(self, candidates: Sequence[tuple[str, ChannelParams]]) -> int:
        """How many compile-time points the candidates are (their CPUs left out)."""
        return len({compiled_id(HarnessVariant(id_, params)) for id_, params in candidates})
