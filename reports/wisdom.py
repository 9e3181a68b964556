"""What `hspc-gen wisdom export` and `import` say: per host, what moved, and what was left out."""

from __future__ import annotations

from hspc_gen.model.wisdom import HostPart, WisdomAction, WisdomReport


def render(report: WisdomReport) -> str:
    if report.action is WisdomAction.export:
        head = f"wrote {report.file}: the wisdom of {len(report.hosts)} host(s)"
    else:
        head = f"imported {report.file} (written by hspc-gen {report.made_by})"
    lines = [head, *(_host_line(report, part) for part in report.hosts)]
    left_out = "not exported" if report.action is WisdomAction.export else "ignored"
    lines.extend(f"  {left_out}: {count} {why}" for why, count in report.ignored)
    if report.action is WisdomAction.import_:
        lines.append(_replay_line(report))
    return "\n".join(lines) + "\n"


def _host_line(report: WisdomReport, part: HostPart) -> str:
    name = part.fingerprint + (" (this host)" if part.fingerprint == report.this_host else "")
    if report.action is WisdomAction.export:
        return (
            f"  {name}: {part.entries} record-store entries, {part.host_records} host record(s)"
            " (calibration, the user's code's cost)"
        )
    said = [
        f"{part.entries} entries and {part.host_records} host record(s) added",
        f"{part.present} already here",
    ]
    if part.conflicts:
        said.append(f"{part.conflicts} for measurements this cache holds its own of (kept)")
    if part.kept:
        said.append(f"{part.kept} host record(s) this cache holds its own of (kept)")
    return f"  {name}: {', '.join(said)}"


def _replay_line(report: WisdomReport) -> str:
    part = report.part_of(report.this_host)
    if part is None:
        return f"nothing in it is for this host ({report.this_host}): kept for the hosts it names"
    if part.entries + part.host_records + part.present == 0:
        return "nothing of it was taken for this host: this cache holds its own measurements"
    return (
        "this host replays it: the measuring host's command writes the same header here without"
        " measuring what the wisdom holds (on a quiet machine, what was measured beside other"
        " load is measured again)"
    )
