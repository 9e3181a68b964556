"""Programs profiled by both cProfile and hspcprof in tests/integration/test_pyprof.py: each
exercises one of cProfile's rules (recursion, generators, coroutines, exceptions, builtins, label
clashes) and must come out with the same counts from both."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Generator, Iterator


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n: int) -> bool:
    return True if n == 0 else is_odd(n - 1)


def is_odd(n: int) -> bool:
    return False if n == 0 else is_even(n - 1)


def recursion() -> None:
    fib(16)
    is_even(120)
    is_odd(77)


def countdown(n: int) -> Generator[int, None, None]:
    while n > 0:
        yield n
        n -= 1


def delegate(n: int) -> Iterator[int]:
    yield from countdown(n)
    yield from (i * i for i in countdown(n))


def generators() -> int:
    total = sum(countdown(50))
    for value in delegate(30):
        total += value
    stepped = countdown(10)
    next(stepped)
    stepped.close()  # a generator closed before its end: GeneratorExit at the yield
    return total + max(x for x in countdown(20))


async def leaf(n: int) -> int:
    await asyncio.sleep(0)
    return n


async def middle(n: int) -> int:
    return await leaf(n) + await leaf(n + 1)


async def top() -> int:
    results = await asyncio.gather(middle(1), middle(2), middle(3))
    return sum(results) + await middle(4)


def coroutines() -> int:
    return asyncio.run(top())


def thrower(depth: int) -> None:
    if depth == 0:
        raise ValueError("deep")
    thrower(depth - 1)


def catcher() -> int:
    caught = 0
    for depth in range(6):
        try:
            thrower(depth)
        except ValueError:
            caught += 1
    return caught


def exceptions() -> int:
    caught = catcher()
    for value in (4.0, -1.0, 9.0):
        try:
            caught += int(math.sqrt(value))  # a C function raising: c_exception
        except ValueError:
            caught += 1
    gen = countdown(5)
    next(gen)
    try:
        gen.throw(KeyError("into the generator"))
    except KeyError:
        caught += 1
    return caught


def builtins() -> int:
    items: list[int] = []
    for i in range(300):
        items.append(len(str(i)))
    table = {i: i * i for i in range(50)}
    found = sum(table.get(i, 0) for i in range(80))
    return len(sorted(items, reverse=True)) + found + int(math.fsum([0.5] * 10))


# Two lambdas on one line share a pstats label; a third on its own line does not.
PAIR: tuple[Callable[[int], int], Callable[[int], int]] = (lambda x: x + 1, lambda x: x * 2)
SINGLE: Callable[[int], int] = lambda x: x - 3  # noqa: E731


def lambdas() -> int:
    total = 0
    for i in range(40):
        total += PAIR[0](i) + SINGLE(i)
    for i in range(25):
        total += PAIR[1](i)
    return total


def busy_wait(seconds: float) -> float:
    """Spins (calling a builtin clock all along) for `seconds`; returns the time it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        pass
    return time.perf_counter() - start
