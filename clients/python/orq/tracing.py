"""Trace context across orq (the contract's "Trace context"), when
OpenTelemetry's API (``opentelemetry-api``) can be imported; without it
every function here does nothing, and the clients work the same.

An item's ``trace`` is the W3C ``traceparent``, then ``tracestate`` after a
space when there is one. ``current_trace()`` writes the caller's context so
(enqueue sends it); ``consumer_span()`` runs a worker's handler in a consumer
span whose parent is the item's producer.
"""

from __future__ import annotations

import contextlib
from typing import Any, ContextManager, Dict, Optional

try:
    from opentelemetry import trace as _otel_trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    _PROPAGATOR: Any = TraceContextTextMapPropagator()
except ImportError:  # OpenTelemetry is optional: no spans, no trace written
    _otel_trace = None
    _PROPAGATOR = None

__all__ = ["tracing_available", "current_trace", "consumer_span", "TRACE_BYTES_MAX"]

# The contract's bound on an item's trace: a longer context is not sent.
TRACE_BYTES_MAX = 512
_TRACER_NAME = "orq"


def tracing_available() -> bool:
    """Whether OpenTelemetry's API was imported."""
    return _PROPAGATOR is not None


def current_trace() -> Optional[str]:
    """The current span's context as an item's ``trace``, or None (no OpenTelemetry, no valid span, or too long)."""
    if _PROPAGATOR is None:
        return None
    carrier: Dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    parent = carrier.get("traceparent")
    if not parent:
        return None
    state = carrier.get("tracestate")
    trace = f"{parent} {state}" if state else parent
    return trace if len(trace.encode()) <= TRACE_BYTES_MAX else parent


def consumer_span(delivery: Dict[str, Any]) -> ContextManager[Any]:
    """A consumer span for handling ``delivery``, continuing its ``trace``; a no-op context without OpenTelemetry."""
    if _PROPAGATOR is None or _otel_trace is None:
        return contextlib.nullcontext()
    carrier: Dict[str, str] = {}
    trace = delivery.get("trace")
    if isinstance(trace, str) and trace:
        parent, _, state = trace.partition(" ")
        carrier["traceparent"] = parent
        if state:
            carrier["tracestate"] = state
    parent_context = _PROPAGATOR.extract(carrier)
    tracer = _otel_trace.get_tracer(_TRACER_NAME)
    return tracer.start_as_current_span(
        f"process {delivery.get('topic', '')}",
        context=parent_context,
        kind=_otel_trace.SpanKind.CONSUMER,
        attributes={
            "messaging.system": "orq",
            "messaging.operation.type": "process",
            "messaging.destination.name": str(delivery.get("topic", "")),
            "messaging.message.id": str(delivery.get("id", "")),
        },
    )
