// Starts an OrqServer inside the test process on a free port, around a
// FakeEngine (or any EngineApi), for server tests that do not need storage.

import type { EngineApi } from "../../src/engine/api.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { defaultLimits, type Limits } from "../../src/limits.ts";
import { TokenTable, type TokenGrant } from "../../src/server/auth.ts";
import { silentLogger, type Logger } from "../../src/server/logger.ts";
import { OrqServer } from "../../src/server/server.ts";
import { FakeEngine } from "./fake-engine.ts";

export interface InProcessServer<E extends EngineApi> {
  server: OrqServer;
  engine: E;
  port: number;
  limits: Limits;
  stop(): void;
}

export function startInProcessServer<E extends EngineApi = FakeEngine>(
  options: { engine?: E; limits?: Partial<Limits>; tokens?: TokenGrant[]; logger?: Logger; port?: number } = {},
): InProcessServer<E> {
  const engine = (options.engine ?? new FakeEngine()) as E;
  const limits = { ...defaultLimits, ...options.limits };
  const server = OrqServer.start({
    host: "127.0.0.1",
    port: options.port ?? 0,
    engine,
    limits,
    clock: systemClock,
    tokens: new TokenTable(options.tokens ?? []),
    serverInfo: { version: "0.1.0", nodeId: "in-process", shards: 4 },
    logger: options.logger ?? silentLogger,
  });
  return { server, engine, port: server.port, limits, stop: () => server.close() };
}
