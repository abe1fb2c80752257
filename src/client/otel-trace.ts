// OpenTelemetry, optional: the one file that touches @opentelemetry/api (an
// optional peer dependency of the client package). It is loaded on first use
// with a dynamic import; when it is not installed the client traces nothing
// and works the same. The API is a no-op until the application registers an
// SDK, so loading it costs nothing either.
// Producer side: enqueue writes the active span's context as the item's
// `trace`. Consumer side: the worker loop runs each handler in a CONSUMER
// span whose parent is the item's `trace` (trace-context.ts parses it).
// Only the few API members used here are typed, structurally, so the
// client's .d.ts files need no OpenTelemetry types.

import { formatTrace, parseTrace } from "./trace-context.ts";
import type { Delivery } from "./types.ts";

interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string };
}

interface Span {
  spanContext(): SpanContext;
  setStatus(status: { code: number; message?: string }): void;
  recordException(exception: unknown): void;
  end(): void;
}

interface Context {
  readonly __brand?: "otel-context";
}

interface Tracer {
  startActiveSpan<T>(name: string, options: { kind: number; attributes: Record<string, string | number> }, context: Context, fn: (span: Span) => T): T;
}

/** The members of @opentelemetry/api this file uses. */
interface OtelApi {
  trace: {
    getSpan(context: Context): Span | undefined;
    setSpanContext(context: Context, spanContext: SpanContext): Context;
    isSpanContextValid(spanContext: SpanContext): boolean;
    getTracer(name: string): Tracer;
  };
  context: { active(): Context };
  createTraceState(raw?: string): { serialize(): string };
  SpanKind: { CONSUMER: number };
  SpanStatusCode: { ERROR: number };
}

/** The name spans are made under (the instrumentation scope). */
const tracerName = "orq-client";

let loading: Promise<OtelApi | null> | null = null;

/** @opentelemetry/api, or null when it is not installed; imported once. */
export function loadOtel(): Promise<OtelApi | null> {
  loading ??= import("@opentelemetry/api").then(
    (module) => module as unknown as OtelApi,
    // Not installed (or not loadable): tracing is off, which is the documented behaviour without it.
    () => null,
  );
  return loading;
}

/** The active span's context as an item's `trace`, or undefined when no valid span is active. */
export function activeTrace(api: OtelApi): string | undefined {
  const span = api.trace.getSpan(api.context.active());
  if (span === undefined) return undefined;
  const spanContext = span.spanContext();
  if (!api.trace.isSpanContextValid(spanContext)) return undefined;
  return formatTrace({ traceId: spanContext.traceId, spanId: spanContext.spanId, traceFlags: spanContext.traceFlags, traceState: spanContext.traceState?.serialize() });
}

/**
 * Run `handler` in a CONSUMER span named `process <topic>`, child of the
 * delivery's trace context (or of the active context when it has none or an
 * invalid one). A throw marks the span as an error and is rethrown.
 */
export function inConsumerSpan<T>(api: OtelApi, delivery: Delivery, handler: () => Promise<T>): Promise<T> {
  const parent = delivery.trace === undefined ? null : parseTrace(delivery.trace);
  let context = api.context.active();
  if (parent !== null) {
    const traceState = parent.traceState === undefined ? undefined : api.createTraceState(parent.traceState);
    context = api.trace.setSpanContext(context, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.traceFlags, isRemote: true, traceState });
  }
  const attributes = {
    "messaging.system": "orq",
    "messaging.operation.type": "process",
    "messaging.destination.name": delivery.topic,
    "messaging.message.id": delivery.id,
    "messaging.orq.attempt": delivery.attempt,
  };
  return api.trace.getTracer(tracerName).startActiveSpan(`process ${delivery.topic}`, { kind: api.SpanKind.CONSUMER, attributes }, context, async (span) => {
    try {
      return await handler();
    } catch (error) {
      span.recordException(error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
