// `orq serve`: the only place that wires the real store, the real clock and the
// server together, and that owns process signals. Shutdown on SIGINT/SIGTERM:
// stop accepting, answer SHUTTING_DOWN to new work, release parked dequeues,
// wait for commits (writer.drain) and for every reply to be sent, close the
// store, exit 0 — within shutdownMsMax. A second signal exits at once (LMDB
// commits are atomic, so nothing committed is lost).
//
// The HTTP side port (--http-port: /healthz, /readyz, /metrics) starts right
// after the protocol port, on the same host; its bound port is printed as
// `orq http on HOST:PORT` just before `orq listening on HOST:PORT`, so a
// script that waits for the listening line can already read it. /readyz is
// 200 from then until shutdown begins (recovery is synchronous and finished
// by the time either port listens).

import { systemClock } from "../lib/clock.ts";
import { defaultLimits, type Limits } from "../limits.ts";
import { TokenTable } from "../server/auth.ts";
import { createJsonLogger } from "../server/logger.ts";
import { IdleGc } from "../server/idle-gc.ts";
import { OrqServer } from "../server/server.ts";
import type { ServerInfo } from "../server/op-types.ts";
import { ShardCountMismatchError } from "../storage/postgres/schema.ts";
import { StoreOpenError } from "../storage/store.ts";
import { openClusterBackend, openLmdbBackend, type ServeBackend } from "./serve-backend.ts";
import type { ServeConfig } from "./config.ts";
import { checkNativeAddons } from "./self-check.ts";
import { CommitSampler, commitPollMs } from "../observability/commit-sampler.ts";
import { gaugeSnapshot } from "../observability/gauge-snapshot.ts";
import { startHttpServer, type HttpServerHandle } from "../observability/http-server.ts";
import { createMetrics } from "../observability/metrics.ts";
import type { Clock } from "../lib/clock.ts";

/** Longest graceful shutdown: past it the process exits 1 without waiting for slow clients. */
export const shutdownMsMax = 10_000;

/** How long shutdown waits for clients to close their side after the server closed its own. */
const closeGraceMs = 1000;

/** Exit codes: 0 clean, 1 start-up failure or shutdown past its bound, 2 bad configuration. */
const startupFailureExitCode = 1;
const configErrorExitCode = 2;

/**
 * Times storage commits for the metrics and the breakers' slow-commit rule:
 * monotonic and sub-millisecond, unlike the wall clock (an NTP step must not
 * look like a slow commit). Wired here, where the real clocks are chosen.
 */
const monotonicStopwatch: Clock = { nowMs: () => performance.now() };
/** Items recovered at or above which start-up runs one full collection: below it recovery's garbage is small. */
const recoveryGcItemsMin = 100_000;

export async function runServe(config: ServeConfig, version: string): Promise<void> {
  const clock = systemClock;
  const logger = createJsonLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`), () => clock.nowMs());
  const limits: Limits = {
    ...defaultLimits,
    frameBytesMax: config.maxFrameBytes,
    payloadBytesMax: config.payloadBytesMax,
    metadataBytesMax: config.metadataBytesMax,
    outcomeRetentionMs: config.outcomeRetentionMs,
  };

  const addons = checkNativeAddons();
  if (!addons.ok) {
    process.stderr.write(`orq: ${addons.message}\n`);
    process.exit(startupFailureExitCode);
  }

  let backend: ServeBackend;
  try {
    backend =
      config.store === "lmdb"
        ? await openLmdbBackend(config, limits, clock, monotonicStopwatch)
        : await openClusterBackend(config, limits, clock, monotonicStopwatch, logger, (error) => {
            process.stderr.write(`orq: ${error.message}\n`);
            process.exit(startupFailureExitCode);
          });
  } catch (error) {
    if (!(error instanceof StoreOpenError)) throw error;
    process.stderr.write(`orq: ${error.message}\n`);
    process.exit(error instanceof ShardCountMismatchError ? configErrorExitCode : startupFailureExitCode);
  }
  const { writer, engine } = backend;
  // Recovery leaves its garbage behind (decoded records, heap and table growth): about 50 MiB per 1,000,000 items
  // that the idle collection below never sees, since it counts requests. Collect once now, before the ports open,
  // when a pause (about 0.1-0.3 s at 1,000,000 items) delays no request.
  if (config.idleGc !== "off" && engine.itemCount >= recoveryGcItemsMin) {
    const startedMs = monotonicStopwatch.nowMs();
    Bun.gc(true);
    logger.info("recovery gc", { items: engine.itemCount, blocked_ms: Math.round(monotonicStopwatch.nowMs() - startedMs) });
  }

  const metrics = createMetrics({ version });
  // After a burst, a quiet second: ask for a concurrent collection; after ten quiet seconds more, unless memory
  // has already fallen, collect fully (src/server/idle-gc.ts, docs/OPERATIONS.md). Bun.gc(false) returns in a few ms; Bun.gc(true) blocks until done.
  const idleGc = new IdleGc({
    timers: {
      set: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
      clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    },
    collect: (kind, requests) => {
      // --idle-gc off never collects; hint skips the blocking stage (an operator who cannot take a pause of up to a few hundred ms).
      if (config.idleGc === "off" || (kind === "full" && config.idleGc !== "full")) return;
      const startedMs = monotonicStopwatch.nowMs();
      Bun.gc(kind === "full");
      const blockedMs = Math.round((monotonicStopwatch.nowMs() - startedMs) * 100) / 100;
      logger.debug("idle gc", { kind, requests, blocked_ms: blockedMs });
    },
    residentBytes: () => process.memoryUsage.rss(),
  });
  const serverInfo: ServerInfo = { version, nodeId: backend.nodeId, shards: backend.shards, clusterMap: backend.clusterMap };
  let server: OrqServer;
  try {
    server = OrqServer.start({
      host: config.host,
      port: config.port,
      engine,
      limits,
      clock,
      tokens: new TokenTable(config.tokens),
      serverInfo,
      logger,
      onRequestDone: (op, code, durationMs) => {
        metrics.requestDone(op, code, durationMs);
        idleGc.noteRequest();
      },
    });
  } catch (error) {
    process.stderr.write(`orq: cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(startupFailureExitCode);
  }

  engine.onEarlierDeadline = () => server.rearmDeadlines();
  try {
    serverInfo.nodeId = await backend.afterListen(config.host, server.port);
  } catch (error) {
    process.stderr.write(`orq: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(startupFailureExitCode);
  }

  const commits = new CommitSampler(() => writer.commitStats(), metrics);
  const commitPoller = setInterval(() => commits.poll(), commitPollMs);
  commitPoller.unref();
  metrics.setGaugeSource(() => {
    commits.poll();
    const nowMs = clock.nowMs();
    return gaugeSnapshot({ engineStats: engine.stats(null, nowMs), breakers: writer.breakerStates(nowMs), connections: server.connectionCount });
  });
  let shuttingDown = false;
  let http: HttpServerHandle;
  try {
    http = await startHttpServer({
      host: config.host,
      port: config.httpPort,
      metrics,
      isReady: () => !shuttingDown && !server.draining,
      logError: (message) => logger.error("http request failed", { message }),
    });
  } catch (error) {
    process.stderr.write(`orq: cannot listen on ${config.host}:${config.httpPort} (http): ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(startupFailureExitCode);
  }

  logger.info("started", {
    host: server.host,
    port: server.port,
    http_port: http.port,
    ...backend.describe,
    shards: backend.shards,
    durability: config.durability,
    auth: config.tokens.length > 0,
    config: config.configPath,
  });
  process.stdout.write(`orq http on ${config.host}:${http.port}\norq listening on ${config.host}:${server.port}\n`);

  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn("second signal: exiting now", { signal });
      process.exit(signal === "SIGINT" ? 130 : 143);
    }
    shuttingDown = true;
    logger.info("shutting down", { signal });
    void shutdown();
  };
  const shutdown = async (): Promise<void> => {
    const bound = setTimeout(() => {
      logger.error("shutdown took too long: exiting", { bound_ms: shutdownMsMax });
      process.exit(startupFailureExitCode);
    }, shutdownMsMax);
    idleGc.stop();
    server.beginDrain();
    await backend.handover();
    await writer.drain();
    await server.whenIdle();
    server.close();
    await server.whenAllClosed(closeGraceMs);
    clearInterval(commitPoller);
    await http.stop();
    await backend.close();
    clearTimeout(bound);
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
