// `orq serve`: the only place that wires the real store, the real clock and the
// server together, and that owns process signals. Shutdown on SIGINT/SIGTERM:
// stop accepting, answer SHUTTING_DOWN to new work, release parked dequeues,
// wait for commits (writer.drain) and for every reply to be sent, close the
// store, exit 0 — within shutdownMsMax. A second signal exits at once (LMDB
// commits are atomic, so nothing committed is lost), and so does a signal
// before the server serves (start-up and recovery only read). The handlers
// are installed first thing: Bun installs them lazily, and a SIGTERM sent
// right after the listening line once found none and killed the process.
//
// Start-up order: a look at the data dir's lock (a second server on it is
// refused before anything else), then both ports are probed before the data
// dir is created or locked, so a port in use changes nothing on disk. Then the store opens
// (taking the data dir's lock: a second server on it stops here), the HTTP
// side port (--http-port: /, /healthz, /readyz, /metrics) starts and prints
// `orq http on HOST:PORT`, and recovery runs in steps, logging its progress,
// while /healthz answers and /readyz says 503. Last the protocol port listens
// and `orq listening on HOST:PORT` is printed; /readyz is 200 from then until
// shutdown begins.
//
// The web dashboard (--ui-port, default 7422, `off` disables it) starts right
// after the protocol port, on the same host, and prints
// `orq dashboard on http://HOST:PORT/` before the listening line; the HTTP
// side port's index page links it.
//
// `--store memory` serves the same way from an in-memory store, written
// without commits (docs/decisions/035-memory-writer.md): no data dir is looked at, created or locked (a --data-dir
// given with it is left untouched, with a warning), and a restart starts empty.

import { BeanstalkServer, type BeanstalkServerOptions } from "../beanstalk/beanstalk-server.ts";
import { beanstalkRequestLabels } from "../beanstalk/request-labels.ts";
import { isLoopbackHost } from "../server/loopback-host.ts";
import { monotonicStopwatch, systemClock } from "../lib/clock.ts";
import type { Limits } from "../limits.ts";
import { TokenTable } from "../server/auth.ts";
import { exitOnFatal, installFatalHandlers } from "../server/fatal.ts";
import { createJsonLogger, type Logger } from "../server/logger.ts";
import type { RequestDone } from "../server/request-done.ts";
import { OrqServer } from "../server/server.ts";
import type { ServerInfo } from "../server/op-types.ts";
import { openLmdbStore } from "../storage/lmdb/lmdb-store.ts";
import { MemoryStore } from "../storage/memory/memory-store.ts";
import { mapResidentBytes } from "./mapped-pages.ts";
import { collectAfterRecovery, type MemoryCollectors, startMemoryCollectors } from "./memory-collectors.ts";
import { refuseIfDataDirHeld } from "../storage/lmdb/data-dir-lock.ts";
import { ShardCountMismatchError } from "../storage/postgres/schema.ts";
import { type Store, StoreOpenError } from "../storage/store.ts";
import { openClusterBackend, recoverLocalBackend, type ServeBackend } from "./serve-backend.ts";
import { limitsOf, type ServeConfig } from "./config.ts";
import { checkNativeAddons } from "./self-check.ts";
import { listenFailure, probeListen } from "./listen-check.ts";
import { CommitSampler, commitPollMs } from "../observability/commit-sampler.ts";
import { gaugeSnapshot } from "../observability/gauge-snapshot.ts";
import { startHttpServer, type HttpServerHandle } from "../observability/http-server.ts";
import { createMetrics } from "../observability/metrics.ts";
import { startDashboard, type DashboardHandle } from "../dashboard/dashboard-server.ts";
import { serverPanelFrom } from "../dashboard/server-panel.ts";

/** Longest graceful shutdown: past it the process exits 1 without waiting for slow clients. */
const shutdownMsMax = 10_000;

/** How long shutdown waits for clients to close their side after the server closed its own. */
const closeGraceMs = 1000;

/**
 * Exit codes: 0 clean, 1 start-up failure or shutdown past its bound, 2 bad
 * configuration, 70 a failed assertion (server/fatal.ts).
 */
const startupFailureExitCode = 1;
const configErrorExitCode = 2;

export async function runServe(config: ServeConfig, version: string): Promise<void> {
  const clock = systemClock;
  const logger = createJsonLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`), () => clock.nowMs());
  // A failed assertion anywhere (a request, a timer, a commit callback) stops the process: exit 70 after a fatal line.
  const fatal = exitOnFatal(logger);
  installFatalHandlers(fatal);
  const testAssertOp = testAssertOpFromEnv();
  if (testAssertOp !== null) logger.warn("test-only assertion trigger is on (ORQ_TEST_ASSERT_OP)", { op: testAssertOp });
  for (const name of config.deprecatedNames) logger.warn("setting given under its former name; it is still read, but use the new one", { ...name });
  const limits: Limits = limitsOf(config);
  refuseUnsupportedBeanstalkPort(config);

  const signals = handleSignals(logger);

  const addons = checkNativeAddons();
  if (!addons.ok) {
    process.stderr.write(`orq: ${addons.message}\n`);
    process.exit(startupFailureExitCode);
  }

  const store = await openStoreAfterChecks(config);
  const metrics = createMetrics({ version, otherRequestLabels: beanstalkRequestLabels });
  // Set once the protocol port listens; /readyz is 503 until then (recovery) and again once draining.
  let server: OrqServer | null = null;
  // Set once the dashboard listens (after recovery); the index at / links it, or says it is off.
  let dashboardUrl: string | null = null;
  let http: HttpServerHandle;
  try {
    http = await startHttpServer({
      host: config.host,
      port: config.httpPort,
      metrics,
      isReady: () => server !== null && !signals.shuttingDown && !server.draining,
      indexLinks: () =>
        dashboardUrl !== null
          ? [{ path: dashboardUrl, description: "web dashboard" }]
          : [{ path: null, description: config.uiPort === null ? "web dashboard: off" : "web dashboard: starting" }],
      logError: (message) => logger.error("http request failed", { message }),
    });
  } catch (error) {
    process.stderr.write(`orq: ${listenFailure(config.host, config.httpPort, "--http-port", error)}\n`);
    process.exit(startupFailureExitCode);
  }
  process.stdout.write(`orq http on ${config.host}:${http.port}\n`);

  const backend = await openBackend(store, config, limits, logger);
  const { writer, engine, local } = backend;
  collectAfterRecovery(config.idleGc, engine.itemCount, logger);
  const lmdbDataDir = config.store === "lmdb" ? config.dataDir : null;
  const collectors = startMemoryCollectors(config.idleGc, lmdbDataDir, () => engine.itemCount, logger, backend.shardsMoving);
  const tokens = new TokenTable(config.tokens);
  const serverInfo: ServerInfo = {
    version, nodeId: backend.nodeId, shards: backend.shards, clusterMap: backend.clusterMap, memoryNamespaces: memoryNamespacesOf(config),
  };
  const onRequestDone = requestDoneHook(metrics, collectors);
  let started: OrqServer;
  try {
    started = OrqServer.start({
      host: config.host,
      port: config.port,
      engine,
      limits,
      clock,
      tokens,
      serverInfo,
      logger,
      fatal,
      testAssertOp,
      onRequestDone,
    });
  } catch (error) {
    // Free at the probe, taken during recovery by someone else.
    process.stderr.write(`orq: ${listenFailure(config.host, config.port, "--port", error)}\n`);
    process.exit(startupFailureExitCode);
  }
  server = started;

  engine.onEarlierDeadline = () => started.rearmDeadlines();
  try {
    serverInfo.nodeId = await backend.afterListen(config.host, started.port);
  } catch (error) {
    process.stderr.write(`orq: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(startupFailureExitCode);
  }

  // The beanstalkd port needs the single node's whole engine (config.ts refuses --beanstalk-port
  // with --store postgres). The dashboard runs on every node: in cluster mode it asks the whole
  // cluster through the cluster client (dashboard/cluster-op-caller.ts).
  const beanstalk =
    config.beanstalkPort !== null && local !== null
      ? startBeanstalk({
          host: config.host, port: config.beanstalkPort, engine: local, namespace: config.beanstalkNamespace,
          limits, clock, version, logger, fatal, onRequestDone, testAssertCommand: testAssertOp,
        })
      : null;

  const commitPoller = feedMetrics(metrics, backend, started, lmdbDataDir);
  const dashboard: DashboardHandle | null =
    config.uiPort !== null
      ? startOrExit("dashboard", config.host, config.uiPort, () =>
          startDashboard({
            host: config.host,
            port: config.uiPort as number,
            requests: started,
            inspector: backend.inspector,
            clusterSeed: backend.advertisedAddr,
            tokens,
            clock,
            serverInfo: { version, nodeId: serverInfo.nodeId, shards: backend.shards, clusterMap: backend.clusterMap },
            serverPanel: () => serverPanelFrom(writer.commitStats(), writer.breakerState(clock.nowMs()), backend.recentValues()),
            logger,
          }),
        )
      : null;
  dashboardUrl = dashboard?.url ?? null;

  logger.info("started", {
    host: started.host, port: started.port, http_port: http.port, ui_port: dashboard?.port ?? null, ...backend.describe,
    shards: backend.shards, durability: config.store === "memory" ? "memory" : config.durability, auth: config.tokens.length > 0, config: config.configPath,
    beanstalk_port: beanstalk?.port ?? null,
  });
  if (beanstalk !== null) process.stdout.write(`orq beanstalk on ${config.host}:${beanstalk.port}\n`);
  if (dashboard !== null) process.stdout.write(`orq dashboard on ${dashboard.url}\n`);
  signals.drainWith(() =>
    shutDown({ logger, collectors, beanstalk, started, engine, backend, writer, commitPoller, http, dashboard }),
  );
  process.stdout.write(`orq listening on ${config.host}:${started.port}\n`);
}

/**
 * Signals are handled from the start, before any port opens, so whoever saw a
 * port never signals an unguarded process. Until the server serves, a signal
 * exits at once: recovery only reads, so there is nothing to drain. From then
 * on the first signal drains and a second one exits at once.
 */
function handleSignals(logger: Logger): { readonly shuttingDown: boolean; drainWith(drain: () => Promise<void>): void } {
  let drain: (() => Promise<void>) | null = null;
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown || drain === null) {
      logger.warn(drain === null ? "signal during start-up: exiting now" : "second signal: exiting now", { signal });
      process.exit(signal === "SIGINT" ? 130 : 143);
    }
    shuttingDown = true;
    logger.info("shutting down", { signal });
    void drain();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    get shuttingDown() {
      return shuttingDown;
    },
    drainWith(next) {
      drain = next;
    },
  };
}

/** Which namespaces live in memory (hello and stats say so): ["*"] for the whole server (--store memory), else those configured so. */
function memoryNamespacesOf(config: ServeConfig): string[] {
  if (config.store === "memory") return ["*"];
  return Object.keys(config.namespaces).filter((ns) => config.namespaces[ns]?.durability === "memory");
}

/** Recovery from the LMDB (or in-memory) store, or joining the cluster; a store that cannot be opened is one line and exit 1 (2 for a shard-count mismatch). */
async function openBackend(store: Store | null, config: ServeConfig, limits: Limits, logger: Logger): Promise<ServeBackend> {
  try {
    return store !== null
      ? await recoverLocalBackend(store, config, limits, systemClock, monotonicStopwatch, logger)
      : await openClusterBackend(config, limits, systemClock, monotonicStopwatch, logger, (error) => {
          process.stderr.write(`orq: ${error.message}\n`);
          process.exit(startupFailureExitCode);
        });
  } catch (error) {
    if (!(error instanceof StoreOpenError)) throw error;
    process.stderr.write(`orq: ${error.message}\n`);
    process.exit(error instanceof ShardCountMismatchError ? configErrorExitCode : startupFailureExitCode);
  }
}

/** /metrics' commit figures (polled every commitPollMs) and gauges (read at each scrape); returns the poller to stop. */
function feedMetrics(metrics: ReturnType<typeof createMetrics>, backend: ServeBackend, started: OrqServer, lmdbDataDir: string | null): ReturnType<typeof setInterval> {
  const { writer, engine } = backend;
  const commits = new CommitSampler(() => writer.commitStats(), metrics);
  const commitPoller = setInterval(() => commits.poll(), commitPollMs);
  commitPoller.unref();
  metrics.setGaugeSource(() => {
    commits.poll();
    const nowMs = systemClock.nowMs();
    const mapBytes = lmdbDataDir === null ? null : mapResidentBytes(lmdbDataDir);
    const postgresCommits = backend.postgresCommits?.() ?? null;
    return gaugeSnapshot({
      engineStats: engine.stats(null, nowMs),
      breaker: writer.breakerState(nowMs),
      connections: started.connectionCount,
      mapResidentBytes: mapBytes,
      recentValues: backend.recentValues(),
      postgresCommits,
      shardReadsAhead: backend.shardReadsAhead?.() ?? null,
      shardsFiledAhead: backend.shardsFiledAhead?.() ?? null,
    });
  });
  return commitPoller;
}

interface Running {
  logger: Logger;
  collectors: MemoryCollectors;
  beanstalk: BeanstalkServer | null;
  started: OrqServer;
  engine: ServeBackend["engine"];
  backend: ServeBackend;
  writer: ServeBackend["writer"];
  commitPoller: ReturnType<typeof setInterval>;
  http: HttpServerHandle;
  dashboard: DashboardHandle | null;
}

/** The graceful shutdown, in order, within shutdownMsMax; exits the process. */
async function shutDown(r: Running): Promise<void> {
  const bound = setTimeout(() => {
    r.logger.error("shutdown took too long: exiting", { bound_ms: shutdownMsMax });
    process.exit(startupFailureExitCode);
  }, shutdownMsMax);
  r.collectors.stop();
  r.beanstalk?.beginDrain();
  r.started.beginDrain();
  // Deferred at_least_once lease writes commit now, so a restart keeps the leases.
  r.engine.flushDeferredWrites();
  await r.backend.handover();
  await r.writer.drain();
  await r.started.whenIdle();
  r.started.close();
  r.beanstalk?.close();
  await r.started.whenAllClosed(closeGraceMs);
  clearInterval(r.commitPoller);
  await r.http.stop();
  await r.dashboard?.stop();
  await r.backend.close();
  clearTimeout(bound);
  r.logger.info("stopped");
  process.exit(0);
}

/** The one hook both ports answer through (server/request-done.ts): their traffic is measured, and arms the memory collectors, alike. */
function requestDoneHook(metrics: ReturnType<typeof createMetrics>, collectors: MemoryCollectors): RequestDone {
  return (op, code, durationMs) => {
    metrics.requestDone(op, code, durationMs);
    collectors.noteRequest();
  };
}

/** The beanstalkd port; a port it cannot take is one line on stderr and exit 1. */
function startBeanstalk(options: BeanstalkServerOptions): BeanstalkServer {
  return startOrExit("beanstalk", options.host, options.port, () => BeanstalkServer.start(options));
}

/** The beanstalkd port's refusals, before anything opens (exit 2). */
function refuseUnsupportedBeanstalkPort(config: ServeConfig): void {
  if (config.beanstalkPort === null) return;
  // The beanstalkd port has no authentication: refuse to expose it beside a protected MessagePack port.
  if (config.tokens.length > 0 && !isLoopbackHost(config.host) && !config.beanstalkAllowUnauthenticated) {
    process.stderr.write(
      `orq: the beanstalkd port has no authentication and tokens are configured: listen on a loopback --host or pass --beanstalk-allow-unauthenticated\n`,
    );
    process.exit(configErrorExitCode);
  }
  // It needs the single node's whole engine (item ops): not in cluster mode yet.
  if (config.store !== "lmdb" && config.store !== "memory") {
    process.stderr.write("orq: --beanstalk-port is not available with --store postgres:// yet (docs/CLUSTER.md)\n");
    process.exit(configErrorExitCode);
  }
}

/**
 * A data dir another server holds is the first thing to say (a second `npm
 * start` shares its ports too); that look creates nothing. Then both ports,
 * before the data dir is created or locked. Then the LMDB store, which locks
 * the data dir: a refused second server has opened no port at all. Null in
 * cluster mode (the items are in PostgreSQL). With --store memory the data
 * dir is not looked at: a given one is named in a warning and left untouched.
 */
async function openStoreAfterChecks(config: ServeConfig): Promise<Store | null> {
  const lmdb = config.store === "lmdb";
  if (config.store === "memory" && config.dataDirGiven) {
    process.stderr.write(`orq: warning: --store memory writes nothing to disk: data dir ${config.dataDir} is left untouched\n`);
  }
  if (lmdb) exitOnStoreOpenError(() => refuseIfDataDirHeld(config.dataDir));
  for (const [port, flag] of [[config.port, "--port"], [config.httpPort, "--http-port"]] as const) {
    const portError = probeListen(config.host, port);
    if (portError === null) continue;
    process.stderr.write(`orq: ${listenFailure(config.host, port, flag, portError)}\n`);
    process.exit(startupFailureExitCode);
  }
  if (config.store === "memory") return new MemoryStore({ shards: config.shards, commitHistory: false });
  if (!lmdb) return null;
  try {
    return await openLmdbStore({ dataDir: config.dataDir, shards: config.shards, durability: config.durability, recentValuesBytes: config.recentValuesMb * 1024 * 1024 });
  } catch (error) {
    return exitOnStoreOpenError(() => {
      throw error;
    });
  }
}

/** Runs `open`; a StoreOpenError is one line on stderr and exit 1, anything else is rethrown. */
function exitOnStoreOpenError<T>(open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (!(error instanceof StoreOpenError)) throw error;
    process.stderr.write(`orq: ${error.message}\n`);
    process.exit(startupFailureExitCode);
  }
}

/** Starts an optional listener (beanstalk, dashboard); a port it cannot take is one line on stderr and exit 1. */
function startOrExit<T>(what: string, host: string, port: number, start: () => T): T {
  try {
    return start();
  } catch (error) {
    process.stderr.write(`orq: cannot listen on ${host}:${port} (${what}): ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(startupFailureExitCode);
  }
}

/**
 * Test-only: ORQ_TEST_ASSERT_OP=<op> makes that op, or the beanstalkd command
 * of that name, fail an assertion inside its handler, so a test can watch a
 * real server stop with exit 70 and recover on restart (docs/OPERATIONS.md).
 * Unset in production; logged when set.
 */
function testAssertOpFromEnv(): string | null {
  const op = process.env.ORQ_TEST_ASSERT_OP;
  return op === undefined || op === "" ? null : op;
}
