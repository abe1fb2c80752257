// Builds the OpContext an op handler receives, around a FakeEngine, for unit
// tests of src/server/ops/*.

import { defaultLimits, type Limits } from "../../src/limits.ts";
import { allNamespaces, TokenTable, type NamespaceScope, type TokenGrant } from "../../src/server/auth.ts";
import { LentReply, scratchDequeueInput, type OpContext } from "../../src/server/op-types.ts";
import { RequestReader } from "../../src/server/request-reader.ts";
import { FakeEngine } from "./fake-engine.ts";

export const testNowMs = 1_700_000_000_000;

export function makeOpContext(
  options: { engine?: FakeEngine; limits?: Partial<Limits>; tokens?: TokenGrant[]; scope?: NamespaceScope | null; connectionId?: number; readOnly?: boolean } = {},
): OpContext & { engine: FakeEngine } {
  return {
    engine: options.engine ?? new FakeEngine(),
    limits: { ...defaultLimits, ...options.limits },
    nowMs: testNowMs,
    session: { connectionId: options.connectionId ?? 7, scope: options.scope === undefined ? allNamespaces : options.scope, readOnly: options.readOnly ?? false },
    tokens: new TokenTable(options.tokens ?? []),
    serverInfo: { version: "0.1.0", nodeId: "node-test", shards: 16 },
    serverStats: () => ({ connections: 1 }),
    reader: new RequestReader(),
    lentReply: new LentReply(),
    dequeueInput: scratchDequeueInput(),
  };
}
