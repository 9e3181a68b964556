"""hspc_gen.search.threads.knee: the rule that picks the answer and the one the "equally good"
list states: a count is good only when its paired interval against the best lies above the
line, over enough rounds; the answer is the good count with the fewest threads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from hspc_gen.search.records import Sample
from hspc_gen.search.threads.knee import good, leader, smallest_good, top
from hspc_gen.search.threads.measure import Config, Lab, ThreadSample

BEST, NEAR, SLOW, WIDE = Config(4, 4), Config(3, 3), Config(1, 1), Config(2, 2)


class Scripted:
    """Samples at fixed rates relative to BEST, with a round-to-round factor every sample of
    a round shares (what pairing cancels) and, for WIDE, a wobble of its own."""

    RATES: ClassVar[dict[Config, float]] = {BEST: 1.0, NEAR: 0.985, SLOW: 0.62, WIDE: 0.96}

    def __call__(
        self, configs: Sequence[Config], rounds: int
    ) -> Mapping[Config, Sequence[ThreadSample]]:
        out: dict[Config, list[ThreadSample]] = {}
        for c in configs:
            for r in range(rounds):
                shared = 1.0 + 0.2 * ((r * 7) % 5 - 2) / 2  # +-20%, the same for all
                wobble = 1.0 + (0.06 * (-1) ** r if c == WIDE else 0.0)
                rate = 1e8 * self.RATES[c.original()] * shared * wobble
                wall = 1e6 / rate * 1e9
                sample = Sample(c.label, r, 1_000_000, wall, wall, wall, 0, 0, 0, True)
                out.setdefault(c, []).append(ThreadSample(sample, 0, 0.0))
        return out


def lab(rounds: int) -> Lab:
    made = Lab(Scripted())
    made.run([BEST, NEAR, SLOW, WIDE], rounds)
    return made


def test_good_means_the_interval_lies_above_the_line_after_enough_rounds() -> None:
    enough = lab(12)
    assert good(enough, NEAR, BEST, 0.03)  # 0.985, every round: shown within 3%
    assert not good(enough, SLOW, BEST, 0.03)
    assert not good(enough, WIDE, BEST, 0.03)  # 0.96 +- 6%: its interval reaches below 0.97
    assert good(enough, BEST, BEST, 0.03)
    assert not good(lab(6), NEAR, BEST, 0.03)  # six rounds show nothing yet


def test_the_answer_is_the_good_count_with_the_fewest_threads() -> None:
    enough = lab(12)
    assert smallest_good(enough, BEST, 0.03) == NEAR
    assert smallest_good(enough, BEST, 0.03, allowed=lambda c: c != NEAR) == BEST
    assert leader(enough, [SLOW, WIDE, NEAR]) == NEAR


def test_a_count_that_beat_the_best_beyond_the_noise_becomes_the_best() -> None:
    enough = lab(12)
    assert top(enough, BEST) == BEST
    assert top(enough, NEAR) == BEST  # 1 / 0.985 every round: clearly better
