"""hspc_gen.search.measure.run: the executor's culprit search, on the harness's own words for a
crash or a hang (runtime/harness/fault.hpp, watchdog.hpp). A run with a real crashing binary is in
test_toolchain.py and test_bench.py."""

from __future__ import annotations

from collections.abc import Collection

from hspc_gen.model import Status
from hspc_gen.search.measure.harness import Executed
from hspc_gen.search.measure.run import isolate

SEGV = (
    "hspc_harness: fatal signal SIGSEGV in the user's consumer code (hspc_consume) during"
    " sample '{}'"
)
HUNG = "hspc_harness: watchdog: sample '{}' exceeded the 1 s deadline; the consumer was waiting"
NAMELESS = "hspc_harness: fatal signal SIGBUS outside the user's code with no sample running"


class Harness:
    """Runs arms in order; `bad` ones fail as the harness says it (`said`: their line, or
    nameless); every run is kept, to see what the culprit search asked for."""

    def __init__(self, arms: list[str], bad: dict[str, tuple[Status, str]]) -> None:
        self.arms, self.bad, self.runs = arms, bad, list[tuple[str, ...]]()

    def run(self, arms: Collection[str]) -> Executed:
        self.runs.append(tuple(arms))
        for arm in arms:
            if arm in self.bad:
                status, said = self.bad[arm]
                return Executed(status, log=said.format(f"r0/{arm}"))
        return Executed(Status.ok, {"ran": list(arms)})

    def attempt(self, left_out: frozenset[str]) -> Executed:
        return self.run([a for a in self.arms if a not in left_out])

    def alone(self, arm: str) -> Executed:
        return self.run([arm])


def test_the_arm_the_harness_names_is_left_out_and_the_rest_run_again() -> None:
    harness = Harness(
        ["a", "b", "c", "d"], {"b": (Status.crashed, SEGV), "d": (Status.timeout, HUNG)}
    )
    found = isolate(harness.attempt, harness.alone, ["a", "b", "c", "d"])
    assert found.last.status is Status.ok and found.last.document == {"ran": ["a", "c"]}
    assert found.culprits == {"b": Status.crashed, "d": Status.timeout}
    assert "SIGSEGV in the user's consumer code" in found.causes["b"]
    assert found.causes["d"].startswith("hung: exceeded the 1 s deadline")
    assert "SIGSEGV" in found.first_log  # the first failure's words, for the record's log
    assert harness.runs == [("a", "b", "c", "d"), ("a", "c", "d"), ("a", "c")]


def test_a_failure_nobody_is_named_for_runs_each_suspect_alone() -> None:
    harness = Harness(["a", "b", "c"], {"c": (Status.crashed, NAMELESS)})
    found = isolate(harness.attempt, harness.alone, ["a", "b", "c"])
    assert found.last.status is Status.ok and found.culprits == {"c": Status.crashed}
    assert found.causes["c"].startswith("fatal signal SIGBUS outside the user's code")
    assert harness.runs == [("a", "b", "c"), ("a",), ("b",), ("c",), ("a", "b")]


def test_a_protected_or_unknown_culprit_or_none_at_all_ends_the_search_as_a_failure() -> None:
    harness = Harness(["inc", "a"], {"inc": (Status.crashed, SEGV)})
    found = isolate(harness.attempt, harness.alone, ["inc", "a"], protected={"inc"})
    assert found.last.status is Status.crashed and found.culprits == {"inc": Status.crashed}
    # A name that is no suspect of this run (a baseline): nothing to leave out, no endless loop.
    harness = Harness(["producer_alone", "a"], {"producer_alone": (Status.crashed, SEGV)})
    found = isolate(harness.attempt, harness.alone, ["a"])
    assert found.last.status is Status.crashed and len(harness.runs) == 1
    # Every suspect runs well alone, yet together they fail: nobody to blame.
    together = Harness(["a", "b"], {})
    failing = Executed(Status.timeout, log="killed: the plan ran past 9 s")
    found = isolate(lambda _: failing, together.alone, ["a", "b"])
    assert found.last is failing and found.culprits == {} and together.runs == [("a",), ("b",)]


def test_a_culprit_named_again_after_it_was_left_out_ends_the_search() -> None:
    # An attempt that could not leave the culprit out would fail the same way for ever.
    harness = Harness(["a", "b"], {"b": (Status.crashed, SEGV)})
    found = isolate(lambda _: harness.run(["a", "b"]), harness.alone, ["a", "b"])
    assert found.last.status is Status.crashed and found.culprits == {"b": Status.crashed}
    assert len(harness.runs) == 2
