"""The emit stage: the generated header and its banner, written atomically (`files`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hspc_gen.emit.provenance import tuned_on
from hspc_gen.files import write_atomic
from hspc_gen.host.machine import Host
from hspc_gen.model import ChannelParams, Figure, Summary
from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.result import Confirmed, SearchResult, TuneResult
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.render import HeaderSpec, Provenance, render_header
from hspc_gen.target.app import Target


def host_summary(host: Host) -> str:
    return (
        f"{host.model_name}; {host.packages} package(s), {host.cores} core(s), "
        f"{len(host.logical_cpus)} CPU(s), {'/'.join(host.kind) or 'uniprocessor'}"
        f"{', virtual' if host.virtual else ''}"
    )


@dataclass(frozen=True)
class HeaderWriter:
    """Writes the generated header: first from the estimate, then each better point (the
    anytime result), finally the winner with its measured figures in the banner. Each write's
    banner says what kTuning's parameters are: confirmed, the search's best so far, or the
    estimate's. Without `anytime` (a header was already there when the run began: an earlier
    run's, likely tuned) only the final write happens: an interrupted run leaves that header as
    it was, beside the result and reports that describe it."""

    path: Path
    target: Target
    host: Host
    command: tuple[str, ...]  # the command line's words (cli.common.recorded_command)
    threads: ThreadAdvice  # the estimated advice: what a header says until one is measured
    max_latency_ns: int = 0  # the channel's latency bound (0: none)
    pool: PoolTuning | None = None  # threads.consumers: adaptive, estimated until measured
    anytime: bool = True  # write the start and best-so-far headers; False: the final one only

    def write(
        self,
        point: ChannelParams,
        measured: tuple[str, ...],
        threads: ThreadAdvice | None = None,
        pool: PoolTuning | None = None,
    ) -> None:
        provenance = Provenance(
            self.command, host_summary(self.host), measured, tuned_on(self.host)
        )
        spec = HeaderSpec(
            name=self.target.name,
            namespace=self.target.output.namespace,
            params=point,
            provenance=provenance,
            threads=threads or self.threads,
            max_latency_ns=self.max_latency_ns,
            pool=pool or self.pool,
            file_name=self.path.name,
        )
        write_atomic(self.path, render_header(spec))

    def write_start(self, estimate: ChannelParams, measuring: bool) -> None:
        """The run's first header, the estimate's, before anything is measured."""
        if self.anytime:
            self.write(estimate, (ESTIMATED_BEFORE_SEARCH if measuring else ESTIMATED_BY_EFFORT,))

    def write_best_so_far(self, best: ChannelParams) -> None:
        """The anytime result: the search's best point so far, while it runs."""
        if self.anytime:
            self.write(best, (BEST_DURING_SEARCH,))

    def write_result(self, result: TuneResult) -> None:
        threads = result.threads if isinstance(result.threads, ThreadAdvice) else None
        measured = banner(result.search)
        limit_us = self.target.constraints.max_latency_us
        if limit_us is not None and not any(line.startswith(BOUND) for line in measured):
            measured = (*measured, _bound_line(limit_us * 1e3, None))  # nothing confirmed it
        self.write(result.winner, measured, threads, result.pool)


# What kTuning holds, when it holds no confirmed figures: the banner's first line says so.
ESTIMATE = "the estimate's parameters, from host heuristics"
ESTIMATED_BY_EFFORT = f"nothing (--effort estimate): {ESTIMATE}"
ESTIMATED_BEFORE_SEARCH = (
    f"nothing yet: {ESTIMATE} (written before the search; a finished run rewrites this)"
)
BEST_DURING_SEARCH = (
    "the search's best so far, NOT confirmed by measurement: written while the search ran "
    "(a finished run rewrites this)"
)


def banner(search: SearchResult | None) -> tuple[str, ...]:
    """The header banner's `measured:` lines for a finished run (`search` None: --effort
    estimate). From the confirmation only (never elapsed times), so a re-run replaying the same
    records writes the same bytes; without one, what kTuning holds instead, and why."""
    if search is None:
        return (ESTIMATED_BY_EFFORT,)
    confirmed = search.confirmed
    if confirmed is not None and confirmed.rate is not None:
        return _confirmed_lines(confirmed, confirmed.rate)
    decided = sum(step.winner is not None for step in search.trail)
    if decided == 0:  # no step picked a point: the search's best is the estimate it started from
        why = (
            "the budget ended before a step was decided"
            if search.budget_exhausted
            else "no step could be decided (every candidate failed)"
        )
        return (f"nothing: {why} (see hspc-result.json): {ESTIMATE}",)
    why = (
        "the budget ended before the confirmation"
        if search.budget_exhausted
        else "the confirmation measured nothing"
    )
    return (
        f"the search's best so far ({decided} step(s) decided), NOT confirmed by measurement: "
        f"{why} (see hspc-result.json)",
    )


def _confirmed_lines(confirmed: Confirmed, rate: Summary) -> tuple[str, ...]:
    lines = [f"throughput: {_figure_text(rate, '{:.4g}')} events/s"]
    if confirmed.latency_ns is not None:
        latency = _figure_text(confirmed.latency_ns, "{:.0f}")
        lines.append(f"latency (paced, push to pop): {latency} ns")
    for base in ("producer_alone", "consumer_alone"):
        if base in confirmed.baselines:
            lines.append(f"{base}: {confirmed.baselines[base].median:.4g} events/s")
    if confirmed.unresolved:
        lines.append("efficiency: unresolved (the channel measured faster than a side alone)")
    elif confirmed.efficiency is not None:
        efficiency = _figure_text(confirmed.efficiency, "{:.3f}")
        at = ": at it within the noise" if confirmed.at_bound else ""
        lines.append(f"efficiency: {efficiency} (1.0 = the slower side alone{at})")
    if confirmed.latency_bound_ns is not None:
        lines.append(_bound_line(confirmed.latency_bound_ns, confirmed.latency_p99_ns))
    decision = confirmed.decision
    lines.append(f"decision margin: {decision.margin:.1%} over {decision.rounds} paired rounds")
    return tuple(lines)


BOUND = "constraints.max_latency_us"


def _bound_line(bound_ns: float, p99: Figure | None) -> str:
    bound = f"{BOUND} {bound_ns / 1e3:g} us"
    if p99 is None:
        return f"{bound}: NOT measured"
    kept = "kept" if p99.median <= bound_ns else "NOT kept"
    return f"{bound} {kept}: p99 wait (paced) {_figure_text(p99, '{:.0f}')} ns"


def _figure_text(figure: Figure, form: str) -> str:
    low, high = form.format(figure.ci95_low), form.format(figure.ci95_high)
    return f"{form.format(figure.median)} (95% CI {low} to {high}, n={figure.n})"
