"""hspc_gen.search.decisions.findings: what the result says of each step, here the host's own
noise."""

from __future__ import annotations

import math

from fake_runner import Cost, Simulated
from hspc_gen.search.decisions.findings import host_noise


def test_host_noise_is_the_channel_free_baselines_spread() -> None:
    calm, rough = Simulated(seed=2), Simulated(seed=2)
    arms = ("producer_alone", "consumer_alone", "c1")
    quiet = [s for a in arms for s in calm.samples(a, 20.0, 30, Cost(sigma=0.01))]
    noisy = [s for a in arms for s in rough.samples(a, 20.0, 30, Cost(sigma=0.15))]
    assert 0.0 < host_noise(quiet) < 0.02 < host_noise(noisy) < 0.3
    assert math.isnan(host_noise([s for s in quiet if s.arm != "consumer_alone"]))
    assert math.isnan(host_noise([s for s in quiet if s.round < 3]))  # too few rounds
