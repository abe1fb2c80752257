// OpenTelemetry for the client's tracing tests: a tracer provider whose spans
// go to an InMemorySpanExporter, and the AsyncLocalStorage context manager, so
// a span made active stays active across awaits. install() registers both
// globally; uninstall() removes them, so other test files see the API's no-op
// defaults again.

import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

export interface MemoryTracing {
  exporter: InMemorySpanExporter;
  uninstall(): Promise<void>;
}

export function installMemoryTracing(): MemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    exporter,
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
