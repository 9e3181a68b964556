"""hspc_gen.pinning: kTuning's pair and the thread advice pin the same way, on recorded hosts
and on advice as the estimate and the measured thread search give it."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from hspc_gen.errors import UserError
from hspc_gen.host.machine import read_host
from hspc_gen.model import ChannelParams, PinThreads, Primitive
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.pinning import agreeing, check_overrides, completed, partner
from hspc_gen.render import render_header

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"
CHANNEL = ChannelParams(128, 0, 4, 4096, Primitive.futex)
ESTIMATED = ThreadAdvice(1, 1, 1, (0, 1, 2, 3), (0, 1, 2, 3), pinned=False)
MEASURED = ThreadAdvice(  # a measured pinned layout: 2 producers, 2 consumers each
    2, 4, 2, (2, 5), (3, 4, 6, 7), pinned=True, placement="compact",
    taskset="2-7", omp_places="{2},{5},{3},{4},{6},{7}",
)  # fmt: skip


def agrees(advice: ThreadAdvice, channel: ChannelParams) -> bool:
    """The rule the header keeps: pinned exactly when kTuning pins, first pair kTuning's."""
    pair = (channel.producer_cpu, channel.consumer_cpu)
    if pair == (-1, -1):
        return not advice.pinned
    first = (advice.producer_cpus[0], advice.consumer_cpus[0])
    sized = (len(advice.producer_cpus), len(advice.consumer_cpus))
    return advice.pinned and first == pair and sized == (advice.producers, advice.consumers)


@pytest.mark.parametrize("pair", [(-1, -1), (1, 0), (3, 2), (0, 7), (5, 5), (2, 3)])
@pytest.mark.parametrize("advice", [ESTIMATED, MEASURED], ids=["estimated", "measured"])
def test_the_advice_pins_as_ktuning_does(pair: tuple[int, int], advice: ThreadAdvice) -> None:
    channel = CHANNEL.replace(producer_cpu=pair[0], consumer_cpu=pair[1])
    agreed = agreeing(advice, channel)
    assert agrees(agreed, channel)
    assert agreeing(agreed, channel) == agreed  # once is enough: the header renders it again
    assert agreed.evidence == advice.evidence and agreed.producers == advice.producers
    if agreed.pinned and advice.taskset:  # what to paste follows the CPUs
        cpus = agreed.producer_cpus + agreed.consumer_cpus
        assert agreed.omp_places == ",".join(f"{{{c}}}" for c in cpus)
        assert set(agreed.taskset.replace("-", ",").split(",")) <= {str(c) for c in range(8)}


def test_a_measured_layout_keeps_its_shape_on_the_tuned_pair() -> None:
    agreed = agreeing(MEASURED, CHANNEL.replace(producer_cpu=3, consumer_cpu=2))
    # 2 and 3 swapped: the same CPUs, still one thread each.
    assert (agreed.producer_cpus, agreed.consumer_cpus) == ((3, 5), (2, 4, 6, 7))
    assert agreed.placement == "compact" and agreed.taskset == "2-7"


def test_estimated_threads_beside_a_pinned_pair_spread_over_the_other_cpus() -> None:
    wide = dataclasses.replace(ESTIMATED, producers=2, consumers=6, consumers_per_producer=3)
    agreed = agreeing(wide, CHANNEL.replace(producer_cpu=1, consumer_cpu=2))
    assert agreed.pinned and agreed.placement == "tuned_pair"
    assert (agreed.producer_cpus, agreed.consumer_cpus) == ((1, 0), (2, 3, 0, 3, 0, 3))


def test_pinned_advice_beside_an_unpinned_channel_is_the_same_cpus_as_a_mask() -> None:
    agreed = agreeing(MEASURED, CHANNEL)
    assert not agreed.pinned and agreed.placement == "unpinned"
    assert agreed.producer_cpus == agreed.consumer_cpus == (2, 3, 4, 5, 6, 7)
    assert (agreed.taskset, agreed.omp_places) == ("2-7", "{2:6}")


CPUS = (None, -1, 0, 1, 4096)  # 4096: no CPU of the host, left for params.check to refuse


@pytest.mark.parametrize("pin", list(PinThreads))
@pytest.mark.parametrize(("producer", "consumer"), list(itertools.product(CPUS, CPUS)))
def test_every_set_of_the_cpus_is_completed_or_refused_by_pin_threads(
    pin: PinThreads, producer: int | None, consumer: int | None
) -> None:
    host = read_host(SYSFS / "1s-4c-8t" / "sys")
    fixed = {
        k: v for k, v in (("producer_cpu", producer), ("consumer_cpu", consumer)) if v is not None
    }
    asked = [v for v in fixed.values()]
    contradicts = (pin is PinThreads.never and any(v >= 0 for v in asked)) or (
        pin is PinThreads.always and any(v < 0 for v in asked)
    )
    half = -1 in asked and any(0 <= v < 8 for v in asked)
    if contradicts or half:
        with pytest.raises(UserError, match=r"--set (producer|consumer)_cpu=-?\d"):
            completed(fixed, pin, host)
        return
    out = completed(fixed, pin, host)
    assert {k: out[k] for k in fixed} == fixed  # what was asked stays
    pair = (int(out.get("producer_cpu", -1)), int(out.get("consumer_cpu", -1)))
    if 4096 not in pair:
        assert (min(pair) < 0) == (max(pair) < 0)  # never half pinned


def test_the_partner_is_another_core_and_not_cpu_0() -> None:
    host = read_host(SYSFS / "1s-4c-8t" / "sys")
    for cpu in host.allowed_cpus:
        other = partner(host, cpu)
        assert other != cpu and host.core_of(other) != host.core_of(cpu)
        assert other != 0 or all(c == 0 or host.core_of(c) == host.core_of(cpu) for c in (1, 2, 3))


def test_a_set_against_pin_threads_names_both() -> None:
    with pytest.raises(UserError, match=r"producer_cpu=1 pins a thread.*pin_threads is never"):
        check_overrides(PinThreads.never, {"producer_cpu": 1})
    with pytest.raises(UserError, match=r"consumer_cpu=-1 leaves a thread unpinned.*always"):
        check_overrides(PinThreads.always, {"consumer_cpu": -1})


def test_every_header_states_the_advice_as_ktuning_pins() -> None:
    """render_header is where every header is written (the estimate, each better point, the
    final one): given unpinned advice beside a pinned pair, it pins the advice on that pair."""
    from headers import spec  # noqa: PLC0415 - the golden header's spec, pinned here

    golden = spec()
    pinned = dataclasses.replace(
        golden, params=golden.params.replace(producer_cpu=1, consumer_cpu=0)
    )
    text = render_header(pinned)
    assert "inline constexpr bool kPinThreads = true;" in text
    assert "inline constexpr int kProducerCpus[] = {1};" in text
    assert "inline constexpr int kConsumerCpus[] = {0, 1};" in text  # 2 consumers, one each
    assert "inline constexpr bool kPinThreads = false;" in render_header(golden)
