"""One answer to "are the threads pinned, and where": the header's kTuning (producer_cpu and
consumer_cpu, for one pair) and its thread advice (kPinThreads, kProducerCpus, kConsumerCpus)
never say different things.

The rule: the advice pins exactly when kTuning pins, and then its first producer and its first
consumer run on kTuning's producer_cpu and consumer_cpu. `pin_threads: never` pins nothing and
`always` pins both threads of the pair, so a `--set` of a CPU that says otherwise is refused; a
`--set` of one CPU pins the pair, the other CPU chosen as the estimate chooses (another core,
not CPU 0 when the others allow it), and one pinned beside the other set to -1 is refused: a
pair half pinned is not one the advice could state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from hspc_gen.cpulist import format_cpu_list
from hspc_gen.errors import UserError
from hspc_gen.host.machine import Host
from hspc_gen.model import ChannelParams, PinThreads, Primitive
from hspc_gen.model.threads import UNPINNED_PLACEMENT, ThreadAdvice

CPU_NAMES = ("producer_cpu", "consumer_cpu")
TUNED_PAIR = "tuned_pair"
"""The placement of advice laid out from kTuning's pinned pair rather than measured."""


def check_overrides(pin: PinThreads, fixed: Mapping[str, int | Primitive]) -> None:
    """Refuse a `--set` of a CPU that contradicts app.yaml's constraints.pin_threads."""
    for name in CPU_NAMES:
        cpu = fixed.get(name)
        if cpu is None:
            continue
        if pin is PinThreads.never and int(cpu) >= 0:
            raise UserError(
                f"--set {name}={cpu} pins a thread, but app.yaml's constraints.pin_threads is "
                "never: drop the --set, or make pin_threads auto or always"
            )
        if pin is PinThreads.always and int(cpu) < 0:
            raise UserError(
                f"--set {name}={cpu} leaves a thread unpinned, but app.yaml's "
                "constraints.pin_threads is always: give a CPU, or make pin_threads auto or never"
            )


def completed(
    fixed: Mapping[str, int | Primitive], pin: PinThreads, host: Host
) -> dict[str, int | Primitive]:
    """`fixed`, checked against `pin`, with the pair's other CPU when `--set` pinned one."""
    check_overrides(pin, fixed)
    out = dict(fixed)
    pinned = [name for name in CPU_NAMES if int(fixed.get(name, -1)) >= 0]
    if len(pinned) != 1:
        return out
    (name,) = pinned
    if int(fixed[name]) not in host.allowed_cpus:
        return out  # params.check refuses it, naming the CPUs this process may use
    other = CPU_NAMES[1 - CPU_NAMES.index(name)]
    if other in fixed:  # -1: asked for outright
        raise UserError(
            f"--set {name}={fixed[name]} and {other}={fixed[other]}: the pair is pinned whole or "
            f"not at all (the header's thread advice pins every thread or none); give {other} a "
            "CPU too, or leave it out and hspc-gen chooses one"
        )
    out[other] = partner(host, int(fixed[name]))
    return out


def partner(host: Host, cpu: int) -> int:
    """The CPU to pin the pair's other thread on: another core first, then not CPU 0."""
    others = [c for c in host.allowed_cpus if c != cpu]
    if not others:
        return cpu
    return min(others, key=lambda c: (host.core_of(c) == host.core_of(cpu), c == 0, c))


def agreeing(advice: ThreadAdvice, channel: ChannelParams) -> ThreadAdvice:
    """`advice` as the header may state it beside `channel`'s kTuning (the module's rule)."""
    pair = (channel.producer_cpu, channel.consumer_cpu)
    if pair == (-1, -1):
        return _unpinned(advice) if advice.pinned else advice
    producer, consumer = _whole(pair, advice)
    if advice.pinned and (advice.producer_cpus[:1], advice.consumer_cpus[:1]) == (
        (producer,),
        (consumer,),
    ):
        return advice
    if advice.pinned:
        producers, consumers = _relabelled(advice, producer, consumer)
        placement = advice.placement
    else:
        producers, consumers = _laid_out(advice, producer, consumer)
        placement = TUNED_PAIR
    return dataclasses.replace(
        advice,
        producer_cpus=producers,
        consumer_cpus=consumers,
        pinned=True,
        placement=placement,
        taskset=format_cpu_list(producers + consumers) if advice.taskset else "",
        omp_places=",".join(f"{{{c}}}" for c in producers + consumers) if advice.omp_places else "",
    )


def _whole(pair: tuple[int, int], advice: ThreadAdvice) -> tuple[int, int]:
    """A pair half pinned (an older result's) made whole from the CPUs the advice names."""
    producer, consumer = pair
    cpus = [*advice.producer_cpus, *advice.consumer_cpus]
    if producer < 0:
        producer = next((c for c in cpus if c != consumer), consumer)
    if consumer < 0:
        consumer = next((c for c in cpus if c != producer), producer)
    return producer, consumer


def _relabelled(
    advice: ThreadAdvice, producer: int, consumer: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The measured pinned layout with CPUs swapped so that it starts on kTuning's pair: the
    same shape (which threads share a CPU, which do not), on the tuned pair's CPUs."""
    producers, consumers = list(advice.producer_cpus), list(advice.consumer_cpus)
    if producer == consumer:  # the pair shares one CPU: no swap keeps the rest distinct
        producers[0], consumers[0] = producer, consumer
        return tuple(producers), tuple(consumers)
    for want, role in ((producer, 0), (consumer, 1)):
        first = (producers, consumers)[role][0]
        swap = {first: want, want: first}
        producers = [swap.get(c, c) for c in producers]
        consumers = [swap.get(c, c) for c in consumers]
    return tuple(producers), tuple(consumers)


def _laid_out(
    advice: ThreadAdvice, producer: int, consumer: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One CPU per thread for advice that pinned nothing: the pair on kTuning's CPUs, the other
    threads round robin over the rest of the CPUs the advice allowed (the pair's too when there
    is no rest)."""
    mask: Sequence[int] = sorted({*advice.producer_cpus, *advice.consumer_cpus})
    rest = [c for c in mask if c not in (producer, consumer)] or [producer, consumer]
    extra = advice.producers - 1 + advice.consumers - 1
    spread = [rest[i % len(rest)] for i in range(extra)]
    cut = advice.producers - 1
    return (producer, *spread[:cut]), (consumer, *spread[cut:])


def _unpinned(advice: ThreadAdvice) -> ThreadAdvice:
    """Pinned advice beside an unpinned kTuning: the same CPUs as a mask the threads share."""
    mask = tuple(sorted({*advice.producer_cpus, *advice.consumer_cpus}))
    return dataclasses.replace(
        advice,
        producer_cpus=mask,
        consumer_cpus=mask,
        pinned=False,
        placement=UNPINNED_PLACEMENT,
        taskset=format_cpu_list(mask) if advice.taskset else "",
        omp_places=_one_place(mask) if advice.omp_places else "",
    )


def _one_place(mask: Sequence[int]) -> str:
    """OMP_PLACES for one place holding every CPU of `mask`, as lower:length intervals."""
    runs: list[list[int]] = []
    for cpu in mask:
        if runs and cpu == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([cpu, 1])
    return "{" + ",".join(f"{a}:{n}" if n > 1 else str(a) for a, n in runs) + "}"
