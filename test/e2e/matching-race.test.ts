// Goal: issue 5's exclusivity under concurrency, end to end. Against a real
// `orq serve` process, many connections race long-poll dequeues (several
// topics, count > 1) for the same items while producers keep enqueueing.
// Workers come in overlapping kinds; items carry requirements covering every
// constraint form of the contract's table (and none); some are delayed, and
// producers cancel a few while workers race for them. Consumers ack, nack
// (with or without a delay), extend-then-ack, or let short leases expire.
// Checked:
// - at most one outstanding delivery per item: attempts of an item are
//   distinct and contiguous from 1, receipts are unique, and each delivery
//   starts only after the previous one ended (its end was sent, or its lease
//   had expired by the server's clock); nothing is delivered after an ack
//   that was not stale;
// - no item goes to a worker that fails its requirements, judged by an
//   evaluator written here from the contract's table (not src/engine/matching);
// - nothing is lost: every item ends acked or is a dead letter with reason
//   max_attempts, or was cancelled (and then never delivered again nor acked);
//   the items no kind of worker may take stay ready with attempt 0.
// Seeded (ORQ_TEST_SEED replays the workload and every worker's choices; the
// interleaving still depends on timing); the seed is printed.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrqClient, type Delivery, type ItemState } from "../../src/client/index.ts";
import { ServerProcess } from "../support/server-process.ts";
import { seededRandom } from "../support/seeded-random.ts";

const seed = Number(process.env.ORQ_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`matching-race seed ${seed} (replay with ORQ_TEST_SEED=${seed})`);

// ---- The contract's matching table, evaluated independently. ----

type Scalar = string | number | boolean;
type Caps = Record<string, Scalar | Scalar[]>;

function scalarEquals(a: Scalar, b: Scalar): boolean {
  return typeof a === typeof b && a === b;
}

function featureValues(value: Scalar | Scalar[]): Scalar[] {
  return Array.isArray(value) ? value : [value];
}

const rangeOps = ["gte", "gt", "lte", "lt"] as const;

function inRange(value: Scalar, constraint: Record<string, unknown>): boolean {
  if (typeof value !== "number") return false;
  for (const op of rangeOps) {
    const bound = constraint[op];
    if (bound === undefined) continue;
    const n = bound as number;
    if (op === "gte" && !(value >= n)) return false;
    if (op === "gt" && !(value > n)) return false;
    if (op === "lte" && !(value <= n)) return false;
    if (op === "lt" && !(value < n)) return false;
  }
  return true;
}

function constraintHolds(feature: Scalar | Scalar[] | undefined, constraint: unknown): boolean {
  if (typeof constraint !== "object" || constraint === null) {
    if (feature === undefined) return false;
    return featureValues(feature).some((v) => scalarEquals(v, constraint as Scalar));
  }
  const c = constraint as Record<string, unknown>;
  const values = feature === undefined ? [] : featureValues(feature);
  if ("exists" in c && (feature !== undefined) !== c.exists) return false;
  if ("ne" in c && values.some((v) => scalarEquals(v, c.ne as Scalar))) return false;
  if ("in" in c) {
    if (feature === undefined) return false;
    if (!values.some((v) => (c.in as Scalar[]).some((w) => scalarEquals(v, w)))) return false;
  }
  if ("all" in c) {
    if (feature === undefined) return false;
    if (!(c.all as Scalar[]).every((w) => values.some((v) => scalarEquals(v, w)))) return false;
  }
  if (rangeOps.some((op) => op in c)) {
    if (feature === undefined) return false;
    if (!values.some((v) => inRange(v, c))) return false;
  }
  return true;
}

/** Whether a worker with `caps` may take an item with `requires`, per the contract. */
function workerMayTake(caps: Caps | undefined, requires: Record<string, unknown> | undefined): boolean {
  const hasRequires = requires !== undefined && Object.keys(requires).length > 0;
  if (caps === undefined || Object.keys(caps).length === 0) return !hasRequires;
  if (!hasRequires) return true;
  return Object.entries(requires).every(([name, constraint]) => constraintHolds(caps[name], constraint));
}

// A self-check of the evaluator against the contract's own worked cases, so a
// bug here cannot hide one in the server.
test("the test's evaluator agrees with the contract's worked cases", () => {
  expect(workerMayTake({ cores: 8.0 }, { cores: 8 })).toBe(true);
  expect(workerMayTake({ cores: "8" }, { cores: 8 })).toBe(false);
  expect(workerMayTake({ fast: 1 }, { fast: true })).toBe(false);
  expect(workerMayTake({ gpu: ["a100", "t4"] }, { gpu: "t4" })).toBe(true);
  expect(workerMayTake({ tags: "a" }, { tags: { all: ["a", "b"] } })).toBe(false);
  expect(workerMayTake({ v: [4, 20] }, { v: { gte: 5, lte: 10 } })).toBe(false);
  expect(workerMayTake({ v: [4, 7, 20] }, { v: { gte: 5, lte: 10 } })).toBe(true);
  expect(workerMayTake({ mem: "32" }, { mem: { gte: 0 } })).toBe(false);
  expect(workerMayTake({ os: "linux" }, { zone: { ne: "b" } })).toBe(true);
  expect(workerMayTake({ os: "linux" }, { gpu: { exists: false } })).toBe(true);
  expect(workerMayTake({}, { gpu: { exists: false } })).toBe(false);
  expect(workerMayTake(undefined, {})).toBe(true);
  expect(workerMayTake({ os: "linux" }, { gpu: "a100" })).toBe(false);
});

// ---- The workload. ----

const workerKinds: Array<{ name: string; caps: Caps | undefined }> = [
  { name: "a100", caps: { gpu: "a100", mem: 80, zone: ["eu", "us"] } },
  { name: "t4", caps: { gpu: "t4", mem: 16 } },
  { name: "cpu", caps: { cpu: 8 } },
  { name: "mixed", caps: { gpu: ["a100", "t4"], mem: [16, 40], zone: "eu", cpu: 4 } },
  { name: "none", caps: undefined },
];

/** Requirements covering every constraint form, several of them no kind above can meet. */
const requiresCatalog: Array<Record<string, unknown> | undefined> = [
  undefined,
  {},
  { gpu: "a100" },
  { zone: "us" },
  { mem: 16.0 },
  { gpu: { in: ["t4", "v100"] } },
  { zone: { all: ["eu", "us"] } },
  { mem: { gte: 40 } },
  { mem: { gt: 16 } },
  { mem: { lte: 16 } },
  { mem: { lt: 80, gte: 17 } },
  { gpu: { ne: "t4" } },
  { gpu: { exists: false } },
  { cpu: { exists: true }, gpu: { exists: true } },
  { gpu: "a100", zone: "eu", mem: { gte: 64 } },
  { cpu: { gte: 8 }, gpu: { exists: false } },
  { zone: { ne: "eu" }, mem: { gte: 8 } },
  { gpu: { in: ["a100"], ne: "t4" } },
  // Nobody: no kind has these.
  { gpu: "h100" },
  { mem: { gte: 1000 } },
  { zone: { all: ["eu", "us", "ap"] } },
  { cpu: "8" },
];

const topics = ["race-a", "race-b"] as const;
const leaseMs = 400;

interface ItemSpec {
  topic: string;
  requires: Record<string, unknown> | undefined;
  maxAttempts: number;
  matchable: boolean;
}

interface DeliveryRecord {
  delivery: Delivery;
  kind: string;
  /** Order in which the dequeue that brought it was sent, across all connections. */
  sentSeq: number;
  /** Order in which the test received it, across all connections. */
  receivedSeq: number;
  /** Order in which its ack/nack was sent (or Infinity: never, the lease was let go). */
  endSentSeq: number;
  /** Receipt's ack came back not stale. */
  acked: boolean;
  nackedNotStale: boolean;
}

let server: ServerProcess;

beforeAll(async () => {
  server = await ServerProcess.start(); // strict durability, 16 shards: the defaults
});

afterAll(async () => {
  await server?.cleanup();
});

async function runRound(round: number, random: () => number): Promise<void> {
  const ns = `race-${round}`;
  const specs = new Map<string, ItemSpec>();
  const deliveries = new Map<string, DeliveryRecord[]>();
  const violations: string[] = [];
  let seq = 0;
  /** Items a producer tried to cancel: whether the server cancelled it, and when the reply came. */
  const cancels = new Map<string, { cancelled: boolean; replySeq: number }>();
  const handoffs = { afterEnd: 0, afterExpiry: 0 };
  let producing = true;
  let stop = false;

  const producerCount = 4;
  const consumerCount = 24;
  const itemsPerProducer = 80 + Math.floor(random() * 40);
  const clients: OrqClient[] = [];
  const connect = async (): Promise<OrqClient> => {
    const client = await OrqClient.connect({ port: server.port, reconnect: false, requestTimeoutMs: 10_000 });
    clients.push(client);
    return client;
  };

  const producer = async (client: OrqClient, rand: () => number): Promise<void> => {
    let left = itemsPerProducer;
    while (left > 0) {
      const size = Math.min(left, 1 + Math.floor(rand() * 12));
      left -= size;
      const batch = Array.from({ length: size }, () => {
        const requires = requiresCatalog[Math.floor(rand() * requiresCatalog.length)];
        const topic = topics[Math.floor(rand() * topics.length)]!;
        const maxAttempts = rand() < 0.3 ? 2 : 10;
        const delayMs = rand() < 0.15 ? 1 + Math.floor(rand() * 60) : undefined;
        return { topic, requires, maxAttempts, priority: Math.floor(rand() * 5) - 2, delayMs };
      });
      const ids = await client.enqueue(ns, batch);
      ids.forEach((id, i) => {
        const item = batch[i]!;
        const matchable = workerKinds.some((k) => workerMayTake(k.caps, item.requires));
        if (specs.has(id)) violations.push(`enqueue returned id ${id} twice`);
        specs.set(id, { topic: item.topic, requires: item.requires, maxAttempts: item.maxAttempts, matchable });
      });
      // Now and then cancel an item while workers race for it.
      if (rand() < 0.25) {
        const known = [...specs.keys()];
        const victim = known[Math.floor(rand() * known.length)]!;
        if (!cancels.has(victim)) {
          cancels.set(victim, { cancelled: false, replySeq: Infinity });
          const reply = await client.cancel(ns, [victim]);
          cancels.set(victim, { cancelled: reply.cancelled === 1, replySeq: seq++ });
          if (reply.cancelled + reply.missing.length !== 1) violations.push(`cancel of ${victim}: ${JSON.stringify(reply)}`);
        }
      }
    }
  };

  const consumer = async (client: OrqClient, kind: (typeof workerKinds)[number], rand: () => number): Promise<void> => {
    while (!stop) {
      const counts = topics.map((topic) => ({ topic, count: 1 + Math.floor(rand() * 4) }));
      const sentSeq = seq++;
      const got = await client.dequeue(ns, { topics: counts, capabilities: kind.caps, waitMs: 150, leaseMs });
      const records = got.map((delivery) => {
        const record: DeliveryRecord = { delivery, kind: kind.name, sentSeq, receivedSeq: seq++, endSentSeq: Infinity, acked: false, nackedNotStale: false };
        checkDelivery(record);
        return record;
      });
      const acks: DeliveryRecord[] = [];
      const nacks: DeliveryRecord[] = [];
      const extends_: DeliveryRecord[] = [];
      for (const record of records) {
        const roll = rand();
        if (roll < 0.6) acks.push(record);
        else if (roll < 0.72) nacks.push(record);
        else if (roll < 0.84) extends_.push(record);
        // else: let the short lease expire.
      }
      if (extends_.length > 0) {
        // The two-step flow: accept the offer with a longer lease, then finish.
        const extended = await client.extend(ns, extends_.map((r) => ({ receipt: r.delivery.receipt, leaseMs: leaseMs * 3 })));
        for (const r of extends_) if (!extended.stale.includes(r.delivery.receipt)) acks.push(r);
      }
      if (nacks.length > 0) {
        for (const r of nacks) r.endSentSeq = seq++;
        const reply = await client.nack(ns, nacks.map((r) => ({ receipt: r.delivery.receipt, delayMs: rand() < 0.5 ? 0 : 30 })));
        for (const r of nacks) r.nackedNotStale = !reply.stale.includes(r.delivery.receipt);
        if (reply.nacked + reply.stale.length !== nacks.length) violations.push(`nack counted ${reply.nacked} + ${reply.stale.length} of ${nacks.length}`);
      }
      if (acks.length > 0) {
        for (const r of acks) r.endSentSeq = seq++;
        const reply = await client.ack(ns, acks.map((r) => r.delivery.receipt));
        for (const r of acks) r.acked = !reply.stale.includes(r.delivery.receipt);
        if (reply.acked + reply.stale.length !== acks.length) violations.push(`ack counted ${reply.acked} + ${reply.stale.length} of ${acks.length}`);
      }
    }
  };

  /** Checks a new delivery against the contract and the deliveries of its item seen so far. */
  const checkDelivery = (record: DeliveryRecord): void => {
    const d = record.delivery;
    const spec = specs.get(d.id);
    // A delivery may reach the test before the enqueue reply that names its id; the
    // requirement check then runs at the end (see below), the lease checks here.
    const kind = workerKinds.find((k) => k.name === record.kind)!;
    if (spec !== undefined && !workerMayTake(kind.caps, spec.requires)) {
      violations.push(`item ${d.id} (requires ${JSON.stringify(spec.requires)}) delivered to worker ${kind.name}`);
    }
    const cancel = cancels.get(d.id);
    // A dequeue sent after a cancel was answered must not see the item. (One that
    // overlaps the cancel may: its lease came first and its receipt is now stale;
    // the final checks require that no ack of a cancelled item succeeded.)
    if (cancel !== undefined && cancel.cancelled && cancel.replySeq < record.sentSeq) violations.push(`item ${d.id} delivered (attempt ${d.attempt}) by a dequeue sent after it was cancelled`);
    const earlier = deliveries.get(d.id) ?? [];
    for (const prev of earlier) {
      if (prev.delivery.receipt === d.receipt) violations.push(`receipt ${d.receipt} issued twice`);
      if (prev.delivery.attempt === d.attempt) violations.push(`item ${d.id} attempt ${d.attempt} delivered twice (${prev.kind}, ${record.kind})`);
      if (prev.acked) violations.push(`item ${d.id} delivered again (attempt ${d.attempt}) after a successful ack of attempt ${prev.delivery.attempt}`);
      const startMs = d.leaseExpiresAtMs - leaseMs;
      const endSent = prev.endSentSeq < record.receivedSeq;
      const leaseOver = startMs >= prev.delivery.leaseExpiresAtMs;
      if (endSent) handoffs.afterEnd++;
      else if (leaseOver) handoffs.afterExpiry++;
      const prevEnded = endSent || leaseOver;
      if (!prevEnded) {
        violations.push(
          `item ${d.id}: attempt ${d.attempt} (to ${record.kind}, lease from ${startMs}) overlaps attempt ${prev.delivery.attempt} (to ${prev.kind}, lease until ${prev.delivery.leaseExpiresAtMs}, not ended)`,
        );
      }
    }
    earlier.push(record);
    deliveries.set(d.id, earlier);
  };

  const setup = await connect();
  const producerClients = await Promise.all(Array.from({ length: producerCount }, () => connect()));
  const consumerClients = await Promise.all(Array.from({ length: consumerCount }, () => connect()));
  const consumers = consumerClients.map((c, i) => consumer(c, workerKinds[i % workerKinds.length]!, seededRandom(seed + round * 1000 + i)));
  const producers = producerClients.map((c, i) => producer(c, seededRandom(seed + round * 1000 + 500 + i)));
  const stopOnFailure = Promise.all([...consumers, ...producers]).catch((error: unknown) => {
    stop = true;
    throw error;
  });
  await Promise.all(producers);
  producing = false;

  // Wait until every item any kind may take has ended or died: per topic no
  // item is leased or delayed and the ready ones are exactly the unmatchable ones.
  const unmatchableByTopic = new Map<string, number>(topics.map((t) => [t, 0]));
  for (const [id, spec] of specs) if (!spec.matchable && cancels.get(id)?.cancelled !== true) unmatchableByTopic.set(spec.topic, unmatchableByTopic.get(spec.topic)! + 1);
  const settleDeadlineMs = performance.now() + 20_000;
  let lastCounts = "";
  for (;;) {
    const { topics: counts } = await setup.topics(ns);
    lastCounts = JSON.stringify(counts);
    const settled = topics.every((t) => {
      const c = counts.find((x) => x.topic === t);
      const unmatchable = unmatchableByTopic.get(t)!;
      if (c === undefined) return unmatchable === 0;
      return c.leased === 0 && c.delayed === 0 && c.waiting === 0 && c.ready === unmatchable;
    });
    if (settled) break;
    if (performance.now() > settleDeadlineMs) throw new Error(`round ${round} did not settle: ${lastCounts}; violations so far: ${violations.join("; ")}`);
    // Polling a condition (not waiting on a lease): consumers drive the progress.
    await Bun.sleep(50);
  }
  stop = true;
  await stopOnFailure;
  expect(producing).toBe(false);

  // Requirement check for deliveries that arrived before their enqueue reply.
  for (const [id, records] of deliveries) {
    const spec = specs.get(id);
    if (spec === undefined) {
      violations.push(`delivered id ${id} was never enqueued in this namespace`);
      continue;
    }
    for (const r of records) {
      const kind = workerKinds.find((k) => k.name === r.kind)!;
      if (!workerMayTake(kind.caps, spec.requires)) violations.push(`item ${id} (requires ${JSON.stringify(spec.requires)}) delivered to worker ${r.kind}`);
    }
    const attempts = records.map((r) => r.delivery.attempt).sort((a, b) => a - b);
    if (attempts.some((a, i) => a !== i + 1)) violations.push(`item ${id} attempts ${attempts.join(",")} are not 1..${attempts.length}`);
  }

  // Every item accounted for, by the server's own view.
  const ids = [...specs.keys()];
  const states: Array<ItemState | { id: string; state: "ended"; outcome: string } | null> = [];
  for (let i = 0; i < ids.length; i += 1000) states.push(...(await setup.get(ns, ids.slice(i, i + 1000))));
  const tally = { acked: 0, dead: 0, unmatchable: 0, cancelled: 0 };
  ids.forEach((id, i) => {
    const spec = specs.get(id)!;
    const state = states[i];
    const records = deliveries.get(id) ?? [];
    const ackedRecords = records.filter((r) => r.acked);
    const cancel = cancels.get(id);
    if (cancel?.cancelled === true) {
      // Cancelled while live: never acked, ended cancelled.
      if (ackedRecords.length > 0 || state === null || state === undefined || state.state !== "ended" || state.outcome !== "cancelled") {
        violations.push(`cancelled item ${id} is ${JSON.stringify(state)} with ${ackedRecords.length} successful acks`);
      }
      tally.cancelled++;
      return;
    }
    if (cancel !== undefined && (ackedRecords.length !== 1 || state?.state !== "ended")) {
      // Missing at cancel: only an item that had already been acked may be.
      violations.push(`cancel found item ${id} missing, but it is ${JSON.stringify(state)} with ${ackedRecords.length} successful acks`);
    }
    if (!spec.matchable) {
      if (state === null || state === undefined || state.state !== "ready" || (state as ItemState).attempt !== 0 || records.length > 0) {
        violations.push(`unmatchable item ${id} (requires ${JSON.stringify(spec.requires)}) is ${JSON.stringify(state)} after ${records.length} deliveries`);
      }
      tally.unmatchable++;
      return;
    }
    if (state === null || state === undefined) {
      violations.push(`item ${id} lost: get answers null`);
      return;
    }
    if (state.state === "ended") {
      if (state.outcome !== "acked") violations.push(`item ${id} ended ${state.outcome}`);
      if (ackedRecords.length !== 1) violations.push(`item ${id} ended acked, but ${ackedRecords.length} acks of it were not stale`);
      tally.acked++;
      return;
    }
    const s = state as ItemState;
    if (s.state !== "dead" || s.deadReason !== "max_attempts" || s.attempt !== spec.maxAttempts || ackedRecords.length > 0) {
      violations.push(`item ${id} is ${s.state} (reason ${s.deadReason}, attempt ${s.attempt} of ${spec.maxAttempts}, ${ackedRecords.length} acks)`);
    }
    if (records.length !== spec.maxAttempts) violations.push(`dead item ${id} had ${records.length} deliveries, max_attempts ${spec.maxAttempts}`);
    tally.dead++;
  });
  const deadListed = new Set<string>();
  for (const topic of topics) for (const item of await setup.dead(ns, topic)) deadListed.add(item.id);
  if (deadListed.size !== tally.dead) violations.push(`dead lists ${deadListed.size} items, get shows ${tally.dead}`);

  const deliveryCount = [...deliveries.values()].reduce((n, r) => n + r.length, 0);
  console.log(`round ${round}: ${specs.size} items (${tally.acked} acked, ${tally.dead} dead, ${tally.cancelled} cancelled, ${tally.unmatchable} unmatchable), ${deliveryCount} deliveries, redeliveries after ack/nack sent ${handoffs.afterEnd}, after lease expiry ${handoffs.afterExpiry}`);
  for (const client of clients) await client.close();
  expect(violations).toEqual([]);
  expect(tally.acked).toBeGreaterThan(0);
  expect(tally.unmatchable).toBeGreaterThan(0);
}

describe("matching race", () => {
  test(
    "exclusive, requirement-respecting, lossless delivery across 24 racing workers and 4 producers",
    async () => {
      const random = seededRandom(seed);
      const rounds = 4;
      for (let round = 0; round < rounds; round++) await runRound(round, random);
    },
    60_000,
  );
});
