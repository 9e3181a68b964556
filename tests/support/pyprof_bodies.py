"""A pyperformance-like program for tests/integration/test_pyprof.py: bodies of an n-body simulation
(float arithmetic in loops, as pyperformance's nbody) and a small task scheduler with method
dispatch (in the spirit of richards). Its functions make few calls each, so a profiler's
per-call cost hardly moves their shares of the own time: the shares must agree."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Body:
    x: float
    y: float
    z: float
    vx: float
    vy: float
    vz: float
    mass: float


def solar_system() -> list[Body]:
    return [
        Body(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 39.47),
        Body(4.84, -1.16, -0.10, 0.60, 2.81, -0.02, 0.037),
        Body(8.34, 4.12, -0.40, -1.01, 1.82, 0.008, 0.011),
        Body(12.89, -15.11, -0.22, 1.08, 0.86, -0.01, 0.0017),
        Body(15.37, -25.91, 0.17, 0.97, 0.59, -0.03, 0.002),
    ]


def advance(bodies: list[Body], dt: float, steps: int) -> None:
    for _ in range(steps):
        for i, a in enumerate(bodies):
            for b in bodies[i + 1 :]:
                dx, dy, dz = a.x - b.x, a.y - b.y, a.z - b.z
                mag = dt * (dx * dx + dy * dy + dz * dz) ** -1.5
                a.vx -= dx * b.mass * mag
                a.vy -= dy * b.mass * mag
                a.vz -= dz * b.mass * mag
                b.vx += dx * a.mass * mag
                b.vy += dy * a.mass * mag
                b.vz += dz * a.mass * mag
        for body in bodies:
            body.x += dt * body.vx
            body.y += dt * body.vy
            body.z += dt * body.vz


def energy(bodies: list[Body]) -> float:
    e = 0.0
    for i, a in enumerate(bodies):
        e += 0.5 * a.mass * (a.vx * a.vx + a.vy * a.vy + a.vz * a.vz)
        for b in bodies[i + 1 :]:
            dx, dy, dz = a.x - b.x, a.y - b.y, a.z - b.z
            e -= a.mass * b.mass / (dx * dx + dy * dy + dz * dz) ** 0.5
    return e


class Task:
    def __init__(self, work: int) -> None:
        self.work = work
        self.done = 0

    def step(self) -> bool:
        acc = 0
        for i in range(self.work):
            acc += i * i % 7
        self.done += 1
        return acc >= 0


class Device(Task):
    def step(self) -> bool:
        acc = 1.0
        for i in range(self.work):
            acc = acc * 1.0000001 + i % 3
        self.done += 1
        return acc > 0


def schedule(tasks: list[Task], rounds: int) -> int:
    finished = 0
    for _ in range(rounds):
        for task in tasks:
            if task.step():
                finished += 1
    return finished


def program(scale: int) -> float:
    bodies = solar_system()
    total = 0.0
    for _ in range(scale):
        advance(bodies, 0.01, 40)
        total += energy(bodies)
    tasks: list[Task] = [Task(300), Device(200), Task(150), Device(400)]
    return total + schedule(tasks, 8 * scale)
