"""The strategies by name: an explicit table, no registration by import side effect."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hspc_gen.errors import UserError
from hspc_gen.model import ChannelParams, Effort
from hspc_gen.search.strategies import exhaustive, stage_one, stage_two
from hspc_gen.search.strategies.base import Strategy
from hspc_gen.search.strategies.space import Space

Factory = Callable[[Space, ChannelParams, Effort, Mapping[str, object]], Strategy]

STRATEGIES: Mapping[str, Factory] = {
    stage_one.NAME: stage_one.create,
    stage_two.NAME: stage_two.create,
    exhaustive.NAME: exhaustive.create,
}


def create(
    name: str,
    space: Space,
    start: ChannelParams,
    effort: Effort,
    overrides: Mapping[str, object] | None = None,
) -> Strategy:
    """The named strategy, starting from `start`, with the effort's options and any overrides.

    At `estimate` effort every strategy measures nothing: the start point is the answer.
    """
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise UserError(f"no strategy {name!r}; the strategies: {', '.join(STRATEGIES)}") from None
    return factory(space, start, effort, overrides or {})
