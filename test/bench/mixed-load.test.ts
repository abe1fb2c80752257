// Goal: keep the mixed-load driver (bench/load/mixed-load.ts) shaped the way
// BENCHMARKS.md says, for every system alike: a consumer worker asks for its
// next take as soon as its acks are sent (not answered), with at most one
// earlier take's acks unanswered; and a producer's in-flight bound counts
// enqueue calls (batches), also for beanstalkd, whose batch is 10 puts on the
// wire. Fake systems driven by hand: no server, no timing.

import { describe, expect, test } from "bun:test";
import type { BeanstalkConn, BeanstalkHandler } from "../../bench/load/beanstalk-conn.ts";
import { MixedLoad } from "../../bench/load/mixed-load.ts";
import { BeanstalkProducer, fixedPayload, stampedPayload, type Consumer, type Producer, type System } from "../../bench/load/systems.ts";

/** A take the test answers by hand: first its items (onTaken), later its acks. */
interface HeldTake {
  onTaken: (() => void) | undefined;
  answerAcks: (count: number) => void;
  acked: boolean;
}

class HeldConsumer implements Consumer {
  readonly takes: HeldTake[] = [];
  take(_count: number, _waitMs: number, _onPayload?: (payload: Uint8Array) => void, onTaken?: () => void): Promise<number> {
    return new Promise((resolve) => {
      const held: HeldTake = { onTaken, acked: false, answerAcks: (count) => ((held.acked = true), resolve(count)) };
      this.takes.push(held);
    });
  }
  close(): void {
    for (const take of this.takes) if (!take.acked) take.answerAcks(0);
  }
}

const idleProducer: Producer = { enqueue: async () => {}, enqueueStamped: async () => {}, inFlight: 0, close: () => {} };

/** Lets every pending promise reaction run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe("mixed load consumers", () => {
  test("ask for the next take once the acks are sent, with one earlier take's acks unanswered at most", async () => {
    const consumer = new HeldConsumer();
    const system: System = { label: "held", openProducer: async () => idleProducer, openConsumer: async () => consumer };
    const load = await MixedLoad.open(
      system,
      { rateItemsPerS: 1, batch: 1, producers: 1, consumers: 1, consumerDepth: 1, takeCount: 5, waitMs: 0, producerInFlightMax: 1 },
      () => {},
    );
    load.startConsuming();
    await settle();
    expect(consumer.takes.length).toBe(1);

    // Items in hand, acks sent but unanswered: the second take goes out anyway.
    consumer.takes[0]?.onTaken?.();
    await settle();
    expect(consumer.takes.length).toBe(2);

    // The second take's items arrive while the first's acks are still out: no third take yet.
    consumer.takes[1]?.onTaken?.();
    await settle();
    expect(consumer.takes.length).toBe(2);
    expect(load.delivered).toBe(0);

    // The first acks answer: the third take goes out, and the first take's items count as delivered.
    consumer.takes[0]?.answerAcks(5);
    await settle();
    expect(consumer.takes.length).toBe(3);
    expect(load.delivered).toBe(5);

    await load.stop(0);
    expect(load.delivered).toBe(5);
  });

  test("a take that fails without handing over items ends the run with its error instead of hanging", async () => {
    const failing: Consumer = { take: () => Promise.reject(new Error("dequeue: INTERNAL")), close: () => {} };
    const system: System = { label: "failing", openProducer: async () => idleProducer, openConsumer: async () => failing };
    const load = await MixedLoad.open(
      system,
      { rateItemsPerS: 1, batch: 1, producers: 1, consumers: 1, consumerDepth: 2, takeCount: 5, waitMs: 0, producerInFlightMax: 1 },
      () => {},
    );
    load.startConsuming();
    await settle();
    expect(load.failure?.message).toBe("dequeue: INTERNAL");
    await expect(load.stop(0)).rejects.toThrow("dequeue: INTERNAL");
  });
});

describe("mixed load beside other producers' items", () => {
  test("counts unstamped items (a flood's) apart, observes only stamped ones, and stops producing on request", async () => {
    // The first take hands over one stamped and two fixed payloads; later ones wait, as a parked dequeue does, until close.
    let handedOver = false;
    let closeTakes: () => void = () => {};
    const closed = new Promise<number>((resolve) => (closeTakes = () => resolve(0)));
    const consumer: Consumer = {
      take: async (_count, _waitMs, onPayload) => {
        if (handedOver) return closed;
        handedOver = true;
        for (const payload of [stampedPayload(performance.now() - 5), fixedPayload(), fixedPayload()]) onPayload?.(payload);
        return 3;
      },
      close: () => closeTakes(),
    };
    const system: System = { label: "mixed", openProducer: async () => idleProducer, openConsumer: async () => consumer };
    const delays: number[] = [];
    const others: number[] = [];
    const load = await MixedLoad.open(
      system,
      { rateItemsPerS: 1, batch: 1, producers: 1, consumers: 1, consumerDepth: 1, takeCount: 5, waitMs: 0, producerInFlightMax: 1 },
      (delayMs) => delays.push(delayMs),
      (received) => others.push(received),
    );
    load.startConsuming();
    const producing = load.produce(performance.now(), Number.POSITIVE_INFINITY);
    await settle();
    expect({ received: load.received, receivedOther: load.receivedOther, others }).toEqual({ received: 1, receivedOther: 2, others: [1, 2] });
    expect(delays.length).toBe(1);
    expect((delays[0] ?? 0) >= 5).toBe(true);
    load.stopProducing();
    await producing;
    await load.stop(0);
  });
});

describe("beanstalkd producer", () => {
  test("counts a batch of puts as one request in flight, as the orq producer counts one enqueue", async () => {
    const handlers: BeanstalkHandler[] = [];
    const conn = { put: (_body: Uint8Array, handler: BeanstalkHandler) => handlers.push(handler) } as unknown as BeanstalkConn;
    const producer = new BeanstalkProducer(conn);
    const first = producer.enqueueStamped(10, 0);
    const second = producer.enqueueStamped(10, 0);
    expect(handlers.length).toBe(20);
    expect(producer.inFlight).toBe(2);
    for (let i = 0; i < 9; i++) handlers[i]?.(`INSERTED ${i}`, null);
    expect(producer.inFlight).toBe(2);
    handlers[9]?.("INSERTED 9", null);
    await first;
    expect(producer.inFlight).toBe(1);
    for (let i = 10; i < 19; i++) handlers[i]?.(`INSERTED ${i}`, null);
    handlers[19]?.("JOB_TOO_BIG", null);
    await expect(second).rejects.toThrow("put: JOB_TOO_BIG");
    expect(producer.inFlight).toBe(0);
  });
});
