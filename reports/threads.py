"""hspc-threads.json and its Markdown: the thread-count recommendation, its evidence, and with
--sweep the measured curve it is checked against."""

from __future__ import annotations

import math
from typing import Any

from hspc_gen.host import Host
from hspc_gen.model import ChannelParams
from hspc_gen.search.threads.recommend import Recommendation
from hspc_gen.search.threads.session import Bench, SweepPoint, advice_json
from hspc_gen.target import Target


def _n(x: float) -> float | None:
    return None if math.isnan(x) else float(f"{x:.6g}")


def _sweep_json(curve: tuple[SweepPoint, ...]) -> dict[str, Any] | None:
    if not curve:
        return None
    best = max(curve, key=lambda p: p.events_per_s.median)
    picked = next((p for p in curve if p.recommended), None)
    share = None if picked is None else picked.events_per_s.median / best.events_per_s.median
    return {
        "points": [
            {
                "producers": p.config.producers,
                "consumers": p.config.consumers,
                "pinned": p.config.pinned,
                "recommended": p.recommended,
                "events_per_second": {
                    "median": _n(p.events_per_s.median),
                    "ci95": [_n(p.events_per_s.ci95_low), _n(p.events_per_s.ci95_high)],
                    "n": p.events_per_s.n,
                },
            }
            for p in curve
        ],
        "best": {"producers": best.config.producers, "consumers": best.config.consumers},
        "recommended_share_of_best": None if share is None else _n(share),
    }


def document(
    target: Target,
    host: Host,
    winner: ChannelParams,
    bench: Bench,
    advice: Recommendation,
    *,
    curve: tuple[SweepPoint, ...],
) -> dict[str, Any]:
    return {
        "target": target.name,
        "fingerprint": host.fingerprint,
        "channel": winner.as_dict(),
        "recommendation": advice_json(advice, bench),
        "sweep": _sweep_json(curve),
    }


def render(doc: dict[str, Any]) -> str:
    rec = doc["recommendation"]
    lines = [
        f"# hspc-gen threads: {doc['target']}",
        "",
        f"- producers: {rec['producers']}, consumers: {rec['consumers']} "
        f"({rec['consumers_per_producer']} per producer)",
        f"- placement: {rec['placement']}{' (pinned)' if rec['pinned'] else ''}; "
        f"taskset -c {rec['taskset']}; OMP_PLACES={rec['omp_places']}",
        f"- search stopped by: {rec['evidence'].get('termination', '?')}",
    ]
    sweep = doc.get("sweep")
    if sweep:
        lines += [
            "",
            "| producers | consumers | events/s (median, 95% CI) | |",
            "|---|---|---|---|",
        ]
        for p in sweep["points"]:
            rate = p["events_per_second"]
            low, high = rate["ci95"]
            mark = "recommended" if p["recommended"] else ""
            lines.append(
                f"| {p['producers']} | {p['consumers']} | {rate['median']:.4g} "
                f"[{low:.4g}, {high:.4g}] | {mark} |"
            )
        share = sweep["recommended_share_of_best"]
        if share is not None:
            lines.append(f"\nThe recommendation reaches {share:.1%} of the best measured point.")
    return "\n".join(lines) + "\n"
