"""The stand-in's W3C trace-context propagator: writes the current span as
traceparent (and a fixed tracestate), reads one back as a parent context."""

from opentelemetry.trace import CURRENT


class TraceContextTextMapPropagator:
    def inject(self, carrier, context=None, setter=None):
        span = CURRENT.get()
        if span is not None:
            carrier["traceparent"] = f"00-{span['trace_id']}-{span['span_id']}-01"
            carrier["tracestate"] = "vendor=1"

    def extract(self, carrier, context=None, getter=None):
        parts = (carrier.get("traceparent") or "").split("-")
        if len(parts) != 4:
            return {}
        return {"span": {"trace_id": parts[1], "span_id": parts[2]}}
