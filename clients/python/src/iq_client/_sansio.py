"""The seam between the sans-I/O core and the clients' I/O.

Everything a client does with the service is written once, in :mod:`iq_client._core`,
as a *flow*: a generator (:data:`Flow`) that yields the steps it needs done and is
resumed with their outcome. It never does I/O itself. The steps:

* an :class:`iq_client.HTTPRequest`: send it; the flow is resumed with the
  :class:`iq_client.HTTPResponse`, or has the transport's exception raised in it;
* :class:`Sleep`: wait that many seconds (a retry's backoff, the service's clock);
* :class:`Work`: run a blocking local function (writing a synced copy) and resume the
  flow with what it returned;
* :class:`Emit`: hand a value to the caller (a page of ``iter_query``); the flow is
  resumed when the next one is wanted.

What the flow returns is the result. A driver, :class:`iq_client.Client` with blocking
I/O or :class:`iq_client.AsyncClient` with ``await``, only performs the steps;
:class:`Runner` resumes the flow with each outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generator, Generic, Iterator, Optional, TypeVar, Union

from .transport import HTTPRequest

__all__ = ["Sleep", "Work", "Emit", "Action", "Step", "Flow", "Runner"]

T = TypeVar("T")


@dataclass(frozen=True)
class Sleep:
    """Wait ``seconds``, then resume the flow."""

    seconds: float


@dataclass(frozen=True)
class Work:
    """Run ``function`` (blocking local work: files), then resume the flow with its value.
    The asyncio client runs it in a worker thread."""

    function: Callable[[], Any]


@dataclass(frozen=True)
class Emit:
    """Hand ``value`` to the caller; resume the flow when the next value is wanted."""

    value: Any


#: What a driver does for a flow with its own I/O.
Action = Union[HTTPRequest, Sleep, Work]
#: What a flow asks its driver for.
Step = Union[Action, Emit]
#: A flow: yields steps, is resumed with their outcomes, returns its result.
Flow = Generator[Step, Any, T]


class Runner(Generic[T]):
    """Steps through a flow for a driver: iterating gives each step; after performing
    one (an :class:`Emit` needs nothing), the driver reports the outcome with
    :meth:`reply` or :meth:`fail` (raised in the flow where it waits). When the
    iteration ends, :attr:`result` holds what the flow returned; an exception the flow
    lets through ends it too. Abandoning the iteration closes the flow."""

    result: T

    def __init__(self, flow: Flow[T]) -> None:
        self._flow = flow
        self._reply: Any = None
        self._error: Optional[BaseException] = None

    def reply(self, outcome: Any) -> None:
        """The outcome of the step just given (a response, a function's value)."""
        self._reply = outcome

    def fail(self, error: BaseException) -> None:
        """The step just given failed with ``error``."""
        self._error = error

    def __iter__(self) -> Iterator[Step]:
        try:
            while True:
                reply, error = self._reply, self._error
                self._reply, self._error = None, None
                try:
                    step = self._flow.send(reply) if error is None else self._flow.throw(error)
                except StopIteration as stop:
                    self.result = stop.value
                    return
                yield step
        finally:
            self._flow.close()
