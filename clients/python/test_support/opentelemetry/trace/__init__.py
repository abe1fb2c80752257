"""The stand-in's tracer: spans nest through a context variable and are
recorded in FINISHED when they end; ids count up, so they are predictable."""

import contextlib
import contextvars
import enum
import itertools

CURRENT = contextvars.ContextVar("current_span", default=None)
FINISHED = []
_ids = itertools.count(1)


class SpanKind(enum.Enum):
    INTERNAL = 0
    SERVER = 1
    CLIENT = 2
    PRODUCER = 3
    CONSUMER = 4


class _Tracer:
    @contextlib.contextmanager
    def start_as_current_span(self, name, context=None, kind=SpanKind.INTERNAL, attributes=None):
        parent = context.get("span") if context is not None else CURRENT.get()
        trace_id = parent["trace_id"] if parent else f"{next(_ids):032x}"
        span = {"name": name, "kind": kind.name, "trace_id": trace_id, "span_id": f"{next(_ids):016x}",
                "parent_span_id": parent["span_id"] if parent else None, "attributes": dict(attributes or {})}
        token = CURRENT.set(span)
        try:
            yield span
        finally:
            CURRENT.reset(token)
            FINISHED.append(span)


def get_tracer(name, *args, **kwargs):
    return _Tracer()


def current_span_name():
    """Not in the real API: what the test reads inside a span."""
    span = CURRENT.get()
    return span and span["name"]
