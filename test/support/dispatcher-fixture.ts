// A Dispatcher over a FakeEngine, and a RequestSource that records what it is
// sent, for the dispatcher's tests (dispatcher.test.ts, dispatcher-commit.test.ts).

import { ManualClock } from "../../src/lib/clock.ts";
import { defaultLimits } from "../../src/limits.ts";
import type { WireError } from "../../src/protocol/wire-types.ts";
import { allNamespaces, TokenTable, type NamespaceScope } from "../../src/server/auth.ts";
import { Dispatcher, type RequestSource } from "../../src/server/dispatcher.ts";
import { silentLogger, type Logger } from "../../src/server/logger.ts";
import type { Session } from "../../src/server/op-types.ts";
import { FakeEngine } from "./fake-engine.ts";

export class FakeSource implements RequestSource {
  sent: Array<Record<string, unknown>> = [];
  failures: WireError[] = [];
  inflight = 0;
  readonly session: Session;
  constructor(scope: NamespaceScope | null = allNamespaces) {
    this.session = { connectionId: 3, scope, readOnly: false };
  }
  send(reply: Record<string, unknown>): void {
    this.sent.push(reply);
  }
  fail(error: WireError): void {
    this.failures.push(error);
  }
  requestStarted(): void {
    this.inflight++;
  }
  requestFinished(): void {
    this.inflight--;
  }
  last(): Record<string, unknown> & { error?: WireError } {
    return this.sent[this.sent.length - 1]!;
  }
}

export function setup(options: { tokens?: TokenTable; logger?: Logger; testAssertOp?: string } = {}) {
  const engine = new FakeEngine();
  const fatal: Array<{ error: unknown; context: Record<string, unknown> }> = [];
  const dispatcher = new Dispatcher({
    engine,
    limits: defaultLimits,
    clock: new ManualClock(1000),
    tokens: options.tokens ?? new TokenTable([]),
    serverInfo: { version: "0.1.0", nodeId: "n", shards: 4 },
    logger: options.logger ?? silentLogger,
    serverStats: () => ({}),
    fatal: (error, context) => fatal.push({ error, context }),
    testAssertOp: options.testAssertOp ?? null,
  });
  return { engine, dispatcher, fatal };
}
