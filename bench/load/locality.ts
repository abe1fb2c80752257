// The locality scenario: preferences (the contract's `prefers` and
// `prefer_wait_ms`) under a steady stream, the way a build farm sends a job
// to a worker that already holds its repository. Workers of 10 kinds, one
// connection each with 32 acquisitions in flight, each hold one of 10
// repositories (capabilities `{repo: "r<k>"}`); every item prefers one
// repository (`prefers: {repo: "r<j>"}`, j uniform random) and waits 50 ms
// for a worker that holds it (`prefer_wait_ms`), at random priorities.
// Each kind is the only full fit of a tenth of the items.
//
// A stream, not a backlog: an item is held only for its first 50 ms as
// ready, so a backlog loaded ahead would be past its wait before most of it
// was asked for. The scenario loads `backlog` items, then sends a batch of
// 100 whenever fewer than `backlog` items are ready (enqueues answered less
// acquisitions acked: the 320 acquisitions in flight count as ready until
// acked), with at most `backlog` items more awaiting their enqueue's commit.
// So the items ready stay near `backlog` and an item is taken soon after it
// becomes ready; the stream falls behind the server only when a commit takes
// longer than `backlog` acquisitions do (20 ms at 50,000 a second). After
// `durationS` the enqueues stop and the workers take what is left, so every
// item enqueued is delivered (and acked) once.
//
// A dequeue waits up to 100 ms when nothing is there for its kind (a held
// item is another kind's until its wait ends): a worker parks rather than
// polls, as a real one would. The acquisitions/s and the share of
// deliveries to a full-fit worker are read over the window; the payload's
// first byte names the item's repository (locality-worker.ts). The same pass
// runs without `prefers` on a fresh server: its rate is the comparison, and
// its share is what an assignment that ignores repositories fits (about a
// tenth). The two alternate, LOCALITY_PAIRS times, and each kind's median
// pass is reported: on a shared 2-core box one pass of 3 s moved by several
// percent from one to the next.

import { seededRandom } from "../../test/support/seeded-random.ts";
import { ackHead } from "./jupiter-worker.ts";
import { acquireTagged } from "./locality-worker.ts";
import { OrqConn, makeTemplate, type RequestTemplate } from "./orq-conn.ts";
import { Priorities, type PriorityOrder } from "./priorities.ts";
import { NAMESPACE, fixedPayload } from "./systems.ts";

export const LOCALITY_TOPIC = "locality";
/** Repositories, and worker kinds: kind k holds repository k (10). */
export const LOCALITY_KINDS = 10;
/** Acquisitions each kind's connection keeps in flight (32, as the Jupiter scenario). */
export const LOCALITY_IN_FLIGHT = 32;
/** How long an item waits for a worker that holds its repository (50 ms). */
export const LOCALITY_PREFER_WAIT_MS = 50;
/** Items per enqueue. */
const BATCH = 100;
/** A dequeue's wait when nothing is there for its kind (100 ms): parked, not polling; the run's end waits at most this. */
const DEQUEUE_WAIT_MS = 100;
/** Connections the enqueues go over, apart from the workers'. */
const PRODUCER_CONNECTIONS = 2;
/** The longest the final take of what is left may run (60 s): past it the pass fails rather than hangs. */
const DRAIN_TIMEOUT_MS = 60_000;
/** The seed of the items' repositories (the priorities have their own). */
const REPO_SEED = 52;

export interface LocalityOptions {
  /** Items kept ready through the window (the load's size; a multiple of 100 is used). */
  backlog: number;
  durationS: number;
  /** Whether the items carry `prefers` and `prefer_wait_ms`; without, the same stream for comparison. */
  prefers: boolean;
  order?: PriorityOrder;
}

/** One pass, with or without `prefers`. */
export interface LocalityPass {
  prefers: boolean;
  preferWaitMs: number;
  backlog: number;
  kinds: number;
  inFlightPerConnection: number;
  /** Acquisitions (dequeue 1 + ack) that ended inside the window, and the window's length. */
  acquisitions: number;
  seconds: number;
  acquisitionsPerS: number;
  /** Of them, deliveries whose item prefers the worker's own repository, and their share. */
  fullFit: number;
  fullFitShare: number;
  /** Dequeues in the window that waited DEQUEUE_WAIT_MS and got nothing. */
  emptyDequeues: number;
  /** Over the whole pass, the final take included: items enqueued, items delivered, deliveries that were not a first attempt. */
  enqueued: number;
  delivered: number;
  redelivered: number;
  /** From the window's end until the last item was acked. */
  drainS: number;
  /** The server's own count of deliveries of preferring items by fit (stats engine.preference_deliveries), at the pass's end. */
  serverFit: Record<string, number> | null;
}

export interface LocalityFigures {
  /** The median pass (by acquisitions/s) of each kind. */
  prefers: LocalityPass;
  plain: LocalityPass;
  /** Every pair's rates, in the order run (with prefers, then without, alternated): the spread. */
  pairs?: { prefersPerS: number; plainPerS: number }[];
}

/** Pairs of passes, alternated: one 3 s pass of each swung by several percent on this box, the median of three holds. */
export const LOCALITY_PAIRS = 3;

/** The enqueue templates: a pool of batches, each item of a random repository and priority, its payload's first byte the repository. */
function enqueueTemplates(options: LocalityOptions): RequestTemplate[] {
  const priorities = new Priorities(options.order ?? "random");
  const random = seededRandom(REPO_SEED);
  const payloads = Array.from({ length: LOCALITY_KINDS }, (_, repo) => {
    const payload = fixedPayload();
    payload[0] = repo;
    return payload;
  });
  return Array.from({ length: priorities.poolSize }, () => {
    const items = Array.from({ length: BATCH }, () => {
      const repo = Math.floor(random() * LOCALITY_KINDS);
      const item: Record<string, unknown> = { topic: LOCALITY_TOPIC, payload: payloads[repo], priority: priorities.next() };
      if (options.prefers) {
        item.prefers = { repo: repoName(repo) };
        item.prefer_wait_ms = LOCALITY_PREFER_WAIT_MS;
      }
      return item;
    });
    return makeTemplate({ op: "enqueue", ns: NAMESPACE, items });
  });
}

const repoName = (repo: number): string => `r${repo}`;

/** The stream's producer: enqueues a batch on demand over its own connections, counting the items answered. */
class Refill {
  enqueued = 0;
  pending = 0;
  private sent = 0;
  private failure: Error | null = null;
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly conns: OrqConn[],
    private readonly templates: RequestTemplate[],
  ) {}

  /** Sends one batch; its reply is counted when it comes. */
  send(): void {
    const conn = this.conns[this.sent % this.conns.length] as OrqConn;
    const template = this.templates[this.sent % this.templates.length] as RequestTemplate;
    this.sent++;
    this.pending++;
    const answered = conn.callTemplate(template).then(
      () => {
        this.enqueued += BATCH;
        this.pending--;
      },
      (error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
        this.pending--;
      },
    );
    this.settled = Promise.all([this.settled, answered]).then(() => undefined);
  }

  /** Resolves when every batch sent so far is answered; throws the first enqueue's failure. */
  async flush(): Promise<void> {
    await this.settled;
    if (this.failure !== null) throw this.failure;
  }

  /** The first failure so far (the workers stop on it). */
  get failed(): Error | null {
    return this.failure;
  }
}

/** One pass against the server at host:port, on a fresh topic: load, the window, then the take of what is left. */
export async function runLocality(host: string, port: number, options: LocalityOptions): Promise<LocalityPass> {
  const workers = await Promise.all(Array.from({ length: LOCALITY_KINDS }, () => OrqConn.connect(host, port)));
  const producers = await Promise.all(Array.from({ length: PRODUCER_CONNECTIONS }, () => OrqConn.connect(host, port)));
  try {
    const refill = new Refill(producers, enqueueTemplates(options));
    for (let i = 0; i < Math.max(1, Math.round(options.backlog / BATCH)); i++) refill.send();
    await refill.flush();
    const pass = await acquireStream(workers, refill, options);
    return { ...pass, serverFit: await serverFit(producers[0] as OrqConn) };
  } finally {
    for (const conn of [...workers, ...producers]) conn.close();
  }
}

/** The window and the final take: counts by kind and by fit, with a batch of 100 sent whenever fewer than `backlog` items are ready, while the window lasts. */
async function acquireStream(workers: OrqConn[], refill: Refill, options: LocalityOptions): Promise<Omit<LocalityPass, "serverFit">> {
  const ack = ackHead(NAMESPACE);
  const dequeues = workers.map((_, kind) =>
    makeTemplate({ op: "dequeue", ns: NAMESPACE, topics: [{ topic: LOCALITY_TOPIC, count: 1 }], capabilities: { repo: repoName(kind) }, wait_ms: DEQUEUE_WAIT_MS }),
  );
  const counts = { acquisitions: 0, fullFit: 0, emptyDequeues: 0, delivered: 0, redelivered: 0 };
  const backlog = Math.max(1, Math.round(options.backlog / BATCH)) * BATCH;
  // A batch when fewer than `backlog` are ready, unless `backlog` items already await their commit.
  const topUp = () => {
    if (refill.enqueued - counts.delivered < backlog && refill.pending * BATCH < backlog) refill.send();
  };
  const startMs = performance.now();
  const endMs = startMs + options.durationS * 1000;
  let lastAckMs = endMs;
  // Until the window ends, then until every enqueue is answered and every item delivered (or the drain times out, or an enqueue failed).
  const more = () => {
    const nowMs = performance.now();
    return refill.failed === null && (nowMs < endMs || refill.pending > 0 || counts.delivered < refill.enqueued) && nowMs < endMs + DRAIN_TIMEOUT_MS;
  };
  await Promise.all(
    workers.flatMap((conn, kind) =>
      Array.from({ length: LOCALITY_IN_FLIGHT }, async () => {
        while (more()) {
          const got = await acquireTagged(conn, dequeues[kind] as RequestTemplate, ack);
          const nowMs = performance.now();
          const inWindow = nowMs < endMs;
          if (got === null) {
            if (inWindow) {
              counts.emptyDequeues++;
              topUp();
            }
            continue;
          }
          counts.delivered++;
          lastAckMs = Math.max(lastAckMs, nowMs);
          if (got.attempt !== 1) counts.redelivered++;
          if (!inWindow) continue;
          counts.acquisitions++;
          if (got.repo === kind) counts.fullFit++;
          topUp();
        }
      }),
    ),
  );
  await refill.flush();
  if (counts.delivered < refill.enqueued) throw new Error(`locality: ${refill.enqueued - counts.delivered} of ${refill.enqueued} items not delivered ${DRAIN_TIMEOUT_MS / 1000} s after the window`);
  const seconds = (endMs - startMs) / 1000;
  return {
    prefers: options.prefers,
    preferWaitMs: options.prefers ? LOCALITY_PREFER_WAIT_MS : 0,
    backlog,
    kinds: LOCALITY_KINDS,
    inFlightPerConnection: LOCALITY_IN_FLIGHT,
    acquisitions: counts.acquisitions,
    seconds,
    acquisitionsPerS: counts.acquisitions / seconds,
    fullFit: counts.fullFit,
    fullFitShare: counts.acquisitions === 0 ? 0 : counts.fullFit / counts.acquisitions,
    emptyDequeues: counts.emptyDequeues,
    enqueued: refill.enqueued,
    delivered: counts.delivered,
    redelivered: counts.redelivered,
    drainS: (lastAckMs - endMs) / 1000,
  };
}

/** stats' engine.preference_deliveries (full, partial, released), or null when the reply has none. */
async function serverFit(conn: OrqConn): Promise<Record<string, number> | null> {
  const reply = await conn.call({ op: "stats" });
  const engine = reply.engine as { preference_deliveries?: Record<string, number> } | undefined;
  return engine?.preference_deliveries ?? null;
}

/**
 * LOCALITY_PAIRS pairs of passes, each on a server of its own from `start`
 * (stopped after it): with `prefers`, then without, alternated so both see
 * the same drift of the box; the figures are each kind's median pass.
 */
export async function runLocalityPair(
  start: () => Promise<{ host: string; port: number; stop(): Promise<unknown> }>,
  options: Omit<LocalityOptions, "prefers">,
  pairs = LOCALITY_PAIRS,
): Promise<LocalityFigures> {
  const pass = async (prefers: boolean) => {
    const server = await start();
    try {
      return await runLocality(server.host, server.port, { ...options, prefers });
    } finally {
      await server.stop();
    }
  };
  const withPrefers: LocalityPass[] = [];
  const without: LocalityPass[] = [];
  for (let i = 0; i < pairs; i++) {
    withPrefers.push(await pass(true));
    without.push(await pass(false));
  }
  const median = (passes: LocalityPass[]) => [...passes].sort((a, b) => a.acquisitionsPerS - b.acquisitionsPerS)[passes.length >> 1] as LocalityPass;
  return {
    prefers: median(withPrefers),
    plain: median(without),
    pairs: withPrefers.map((p, i) => ({ prefersPerS: p.acquisitionsPerS, plainPerS: (without[i] as LocalityPass).acquisitionsPerS })),
  };
}
