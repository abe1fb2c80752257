// The systems under load, behind one small producer/consumer shape so every
// scenario runs the same way against orq and against beanstalkd:
// a producer enqueues batches, a consumer takes up to `count` items and
// acknowledges them (orq: dequeue + ack; beanstalkd: reserve + delete).
// Every item carries a 100-byte payload; a stamped payload holds its send
// time (performance.now(), float64 at offset 0) for end-to-end delay. A
// system opened with a ProducerShape names its groups on orq's items in turn
// (the contract's `group`; beanstalkd has none, so its items share one tube)
// and draws its producers' priorities from streams of its own.

import { BeanstalkConn } from "./beanstalk-conn.ts";
import { OrqConn, makeTemplate } from "./orq-conn.ts";
import type { RequestTemplate } from "./orq-conn.ts";
import { Priorities, type PriorityOrder } from "./priorities.ts";

export const PAYLOAD_BYTES = 100;
export const NAMESPACE = "bench";
export const TOPIC = "load";

export interface Producer {
  enqueue(batch: number): Promise<void>;
  enqueueStamped(batch: number, sentAtMs: number): Promise<void>;
  /** Enqueue calls (batches) not yet answered: one per call for every system, however many commands a batch takes on the wire. */
  readonly inFlight: number;
  close(): void;
}

export interface Consumer {
  /**
   * Takes up to `count` items (waiting up to `waitMs` when none is ready), acks them, resolves with how many.
   * `onTaken`, when given, is called once the items are in hand and their acks sent (before the acks are
   * answered), so a pipelining caller may ask for more while the acks are in flight; not called on an error.
   */
  take(count: number, waitMs: number, onPayload?: (payload: Uint8Array) => void, onTaken?: () => void): Promise<number>;
  close(): void;
}

export interface System {
  label: string;
  openProducer(): Promise<Producer>;
  openConsumer(): Promise<Consumer>;
}

export function fixedPayload(): Uint8Array {
  return new Uint8Array(PAYLOAD_BYTES).fill(0x78);
}

export function stampedPayload(sentAtMs: number): Uint8Array {
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(0x78);
  new DataView(payload.buffer).setFloat64(0, sentAtMs);
  return payload;
}

export function payloadSentAtMs(payload: Uint8Array): number {
  return new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getFloat64(0);
}

/**
 * A stamped payload's send time, or null for a fixed one: its first 8 bytes
 * (0x78 each) read as a float64 near 1e272, where a send time is a
 * performance.now() reading, far below 2^53 ms.
 */
export function stampedSentAtMs(payload: Uint8Array): number | null {
  const sentAtMs = payloadSentAtMs(payload);
  return sentAtMs >= 0 && sentAtMs < Number.MAX_SAFE_INTEGER ? sentAtMs : null;
}

/** The group names a producer gives its items, one after another. */
export class GroupCycle {
  private next = 0;
  constructor(readonly names: readonly string[]) {
    if (names.length === 0) throw new Error("GroupCycle: no group names");
  }

  take(): string {
    const name = this.names[this.next] as string;
    this.next = this.next + 1 === this.names.length ? 0 : this.next + 1;
    return name;
  }
}

/** `count` group names: prefix-0, prefix-1, ... */
export function groupNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
}

// ---- orq ----

/** An orq item of the load's topic; with `groups`, it names the next of them. */
function orqItem(payload: Uint8Array, priorities: Priorities, groups: GroupCycle | null): Record<string, unknown> {
  const item: Record<string, unknown> = { topic: TOPIC, payload, priority: priorities.next() };
  if (groups !== null) item.group = groups.take();
  return item;
}

export function enqueueTemplate(batch: number, priorities: Priorities = new Priorities("random"), groups: GroupCycle | null = null): RequestTemplate {
  const payload = fixedPayload();
  const items = Array.from({ length: batch }, () => orqItem(payload, priorities, groups));
  return makeTemplate({ op: "enqueue", ns: NAMESPACE, items });
}

export function dequeueTemplate(count: number, waitMs: number): RequestTemplate {
  return makeTemplate({ op: "dequeue", ns: NAMESPACE, topics: [{ topic: TOPIC, count }], wait_ms: waitMs });
}

interface Delivery {
  receipt: string;
  payload: Uint8Array;
}

/**
 * Templates a batch size needs: the priorities' pool, rounded up to whole
 * rounds of the groups (a round is the templates after which the names start
 * again at the first), so that sending the pool in turn gives every group
 * the same number of items.
 */
function templatePoolSize(prioritiesPool: number, batch: number, groups: GroupCycle | null): number {
  if (groups === null) return prioritiesPool;
  let a = groups.names.length;
  let b = batch;
  while (b !== 0) [a, b] = [b, a % b];
  const round = groups.names.length / a;
  return Math.ceil(prioritiesPool / round) * round;
}

export class OrqProducer implements Producer {
  /** By batch size: a pool of templates (templatePoolSize), used in turn. */
  private readonly templates = new Map<number, RequestTemplate[]>();
  private sent = 0;
  constructor(
    readonly conn: OrqConn,
    private readonly priorities: Priorities,
    private readonly groups: GroupCycle | null = null,
  ) {}

  get inFlight(): number {
    return this.conn.inFlight;
  }

  async enqueue(batch: number): Promise<void> {
    let pool = this.templates.get(batch);
    if (pool === undefined) {
      pool = Array.from({ length: templatePoolSize(this.priorities.poolSize, batch, this.groups) }, () => enqueueTemplate(batch, this.priorities, this.groups));
      this.templates.set(batch, pool);
    }
    await this.conn.callTemplate(pool[this.sent++ % pool.length] as RequestTemplate);
  }

  async enqueueStamped(batch: number, sentAtMs: number): Promise<void> {
    const payload = stampedPayload(sentAtMs);
    const items = Array.from({ length: batch }, () => orqItem(payload, this.priorities, this.groups));
    await this.conn.call({ op: "enqueue", ns: NAMESPACE, items });
  }

  close(): void {
    this.conn.close();
  }
}

export class OrqConsumer implements Consumer {
  private readonly templates = new Map<string, RequestTemplate>();
  constructor(readonly conn: OrqConn) {}

  take(count: number, waitMs: number, onPayload?: (payload: Uint8Array) => void, onTaken?: () => void): Promise<number> {
    const key = `${count}/${waitMs}`;
    let template = this.templates.get(key);
    if (template === undefined) {
      template = dequeueTemplate(count, waitMs);
      this.templates.set(key, template);
    }
    return new Promise((resolve, reject) => {
      this.conn.sendTemplate(template, (reply) => {
        if (reply.ok !== true) {
          if (reply.error?.code === "CLOSED") resolve(0);
          else reject(new Error(`dequeue: ${reply.error?.code}: ${reply.error?.message}`));
          return;
        }
        const items = reply.items as Delivery[];
        if (items.length === 0) {
          onTaken?.();
          resolve(0);
          return;
        }
        const receipts = new Array<string>(items.length);
        for (let i = 0; i < items.length; i++) {
          const item = items[i] as Delivery;
          receipts[i] = item.receipt;
          if (onPayload !== undefined) onPayload(item.payload);
        }
        this.conn.send({ op: "ack", ns: NAMESPACE, receipts }, (ackReply) => {
          if (ackReply.ok !== true) {
            if (ackReply.error?.code === "CLOSED") resolve(items.length);
            else reject(new Error(`ack: ${ackReply.error?.code}: ${ackReply.error?.message}`));
            return;
          }
          const stale = ackReply.stale as unknown[] | undefined;
          if (stale !== undefined && stale.length > 0) reject(new Error(`ack: ${stale.length} stale receipts`));
          else resolve(items.length);
        });
        onTaken?.();
      });
    });
  }

  close(): void {
    this.conn.close();
  }
}

/** Each producer gets its own seeded sequence (seeded by its stream: its order of opening from the shape's first), so runs repeat. */
function producerPriorities(order: PriorityOrder, stream: number): Priorities {
  return new Priorities(order, 0x5eed + stream);
}

/**
 * What a system's producers send beyond the plain load: the groups their
 * items name in turn (orq only), and the first of their priority streams,
 * so two sets of producers on one server (a flood beside small tenants)
 * draw different sequences from the same distribution. beanstalkd draws the
 * same streams as orq does for the same shape.
 */
export interface ProducerShape {
  groups: readonly string[] | null;
  firstStream: number;
}

/** The plain load's producers: no groups, streams from 0. */
export const plainProducers: ProducerShape = { groups: null, firstStream: 0 };

/**
 * orq under the load. With the shape's groups, each producer names them on
 * its items in turn, every producer from the first name on (so two
 * producers at one rate give each group the same share).
 */
export function orqSystem(label: string, host: string, port: number, order: PriorityOrder = "random", shape: ProducerShape = plainProducers): System {
  let opened = 0;
  const { groups, firstStream } = shape;
  return {
    label,
    openProducer: async () =>
      new OrqProducer(await OrqConn.connect(host, port), producerPriorities(order, firstStream + opened++), groups === null ? null : new GroupCycle(groups)),
    openConsumer: async () => new OrqConsumer(await OrqConn.connect(host, port)),
  };
}

// ---- beanstalkd ----

export class BeanstalkProducer implements Producer {
  private readonly payload = fixedPayload();
  /** Batches (enqueue calls) not yet fully answered: beanstalkd has no batch put, so a batch is `batch` pipelined puts. */
  private batchesInFlight = 0;
  constructor(
    readonly conn: BeanstalkConn,
    private readonly priorities: Priorities = new Priorities("random"),
  ) {}

  get inFlight(): number {
    return this.batchesInFlight;
  }

  enqueue(batch: number): Promise<void> {
    return this.putMany(batch, this.payload);
  }

  enqueueStamped(batch: number, sentAtMs: number): Promise<void> {
    return this.putMany(batch, stampedPayload(sentAtMs));
  }

  private putMany(batch: number, payload: Uint8Array): Promise<void> {
    this.batchesInFlight++;
    return new Promise((resolve, reject) => {
      let remaining = batch;
      for (let i = 0; i < batch; i++) {
        this.conn.put(
          payload,
          (line) => {
          remaining--;
          if (remaining === 0) this.batchesInFlight--;
            if (!line.startsWith("INSERTED")) reject(new Error(`put: ${line}`));
            else if (remaining === 0) resolve();
          },
          this.priorities.next(),
        );
      }
    });
  }

  close(): void {
    this.conn.close();
  }
}

export class BeanstalkConsumer implements Consumer {
  constructor(readonly conn: BeanstalkConn) {}

  take(count: number, waitMs: number, onPayload?: (payload: Uint8Array) => void, onTaken?: () => void): Promise<number> {
    const timeoutS = Math.ceil(waitMs / 1000);
    return new Promise((resolve, reject) => {
      const jobIds: string[] = [];
      let repliesLeft = count;
      const onReserve = (line: string, body: Uint8Array | null) => {
        if (line.startsWith("RESERVED ")) {
          jobIds.push(line.split(" ")[1] ?? "");
          if (onPayload !== undefined && body !== null) onPayload(body);
        } else if (line !== "TIMED_OUT" && line !== "CLOSED" && line !== "DEADLINE_SOON") {
          reject(new Error(`reserve: ${line}`));
          return;
        }
        repliesLeft--;
        if (repliesLeft === 0) {
          this.deleteAll(jobIds, resolve, reject);
          onTaken?.();
        }
      };
      for (let i = 0; i < count; i++) this.conn.command(`reserve-with-timeout ${timeoutS}`, onReserve);
    });
  }

  private deleteAll(jobIds: string[], resolve: (count: number) => void, reject: (error: Error) => void): void {
    if (jobIds.length === 0) {
      resolve(0);
      return;
    }
    let remaining = jobIds.length;
    for (const jobId of jobIds) {
      this.conn.command(`delete ${jobId}`, (line) => {
        if (line !== "DELETED" && line !== "CLOSED") {
          reject(new Error(`delete: ${line}`));
          return;
        }
        remaining--;
        if (remaining === 0) resolve(jobIds.length);
      });
    }
  }

  close(): void {
    this.conn.close();
  }
}

export async function openBeanstalk(host: string, port: number): Promise<BeanstalkConn> {
  const conn = await BeanstalkConn.connect(host, port);
  await conn.call(`use ${TOPIC}`, "USING");
  await conn.call(`watch ${TOPIC}`, "WATCHING");
  await conn.call("ignore default", "WATCHING");
  return conn;
}

/** beanstalkd under the load: one tube, so the shape's groups go nowhere; its priority streams are orq's. */
export function beanstalkSystem(label: string, host: string, port: number, order: PriorityOrder = "random", shape: ProducerShape = plainProducers): System {
  let opened = 0;
  return {
    label,
    openProducer: async () => new BeanstalkProducer(await openBeanstalk(host, port), producerPriorities(order, shape.firstStream + opened++)),
    openConsumer: async () => new BeanstalkConsumer(await openBeanstalk(host, port)),
  };
}
