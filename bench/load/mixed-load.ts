// Steady mixed load, the pieces: open-loop producers offering a fixed rate of
// stamped items (each payload carries its send time), and pipelined consumers
// that take and ack what is ready, reporting each delivery's enqueue-to-
// delivery delay. runMixed (runners.ts) drives it for one fixed window and
// summarizes; `npm run soak` (bench/soak/main.ts) drives it for an hour and reads
// its counters every 30 s; the noisy-neighbour scenario (noisy-neighbour.ts)
// drives it until a flood of other items, unstamped, has been delivered
// beside it: its consumers take those too, and count them apart.

import type { Consumer, Producer, System } from "./systems.ts";
import { stampedSentAtMs } from "./systems.ts";

export interface MixedLoadOptions {
  /** Offered load, items per second, shared by the producers (open loop). */
  rateItemsPerS: number;
  batch: number;
  producers: number;
  consumers: number;
  consumerDepth: number;
  takeCount: number;
  waitMs: number;
  /** Requests one producer may have unanswered; beyond it the producer falls behind the offered rate. */
  producerInFlightMax: number;
}

/**
 * The connection shape of every mixed run (bench:load's mixed scenario and
 * the soak): 2 producers sending batches of 10 with at most 256 unanswered
 * each, 2 consumers with 4 takes in flight each. Take count and wait are per
 * system (orq: 100 items, 100 ms).
 */
export const mixedShape = { batch: 10, producers: 2, consumers: 2, consumerDepth: 4, producerInFlightMax: 256 } as const;
/** orq's consumers in a mixed run take up to 100 items and wait up to 100 ms for them. */
export const orqMixedTake = { takeCount: 100, waitMs: 100 } as const;

/** How often a producer wakes to send what the rate owes (1 ms): finer than any batch interval at 20,000 items/s in batches of 10. */
const PRODUCER_TICK_MS = 1;
/** How often stop() checks whether the consumers have caught up. */
const CATCH_UP_POLL_MS = 5;

/** Called for every stamped item a consumer receives: its enqueue-to-delivery delay and the receive time (performance.now() ms). */
export type DeliveryObserver = (delayMs: number, nowMs: number) => void;
/** Called for every unstamped item a consumer receives (one the producers of this load did not send), with the count so far. */
export type OtherDeliveryObserver = (received: number, nowMs: number) => void;

export class MixedLoad {
  /** Items whose enqueue was answered ok. */
  enqueued = 0;
  /** Items taken and acked. */
  delivered = 0;
  /** Stamped items handed to a consumer (counted at delivery, before the ack). */
  received = 0;
  /** Unstamped items handed to a consumer: ones other producers sent to the same topic. */
  receivedOther = 0;
  /** The first request error (any error reply ends the run: under a healthy load there should be none). */
  failure: Error | null = null;
  private consuming = true;
  private producing = true;
  private consumersDone: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly producers: Producer[],
    private readonly consumers: Consumer[],
    private readonly options: MixedLoadOptions,
    private readonly observe: DeliveryObserver,
    private readonly observeOther: OtherDeliveryObserver | null,
  ) {}

  static async open(system: System, options: MixedLoadOptions, observe: DeliveryObserver, observeOther: OtherDeliveryObserver | null = null): Promise<MixedLoad> {
    const producers = await Promise.all(Array.from({ length: options.producers }, () => system.openProducer()));
    const consumers = await Promise.all(Array.from({ length: options.consumers }, () => system.openConsumer()));
    return new MixedLoad(producers, consumers, options, observe, observeOther);
  }

  /** Start the consumers: each keeps consumerDepth takes in flight until stop(). */
  startConsuming(): void {
    const onPayload = (payload: Uint8Array) => {
      const nowMs = performance.now();
      const sentAtMs = stampedSentAtMs(payload);
      if (sentAtMs === null) {
        this.receivedOther++;
        this.observeOther?.(this.receivedOther, nowMs);
        return;
      }
      this.received++;
      this.observe(nowMs - sentAtMs, nowMs);
    };
    const consume = async (consumer: Consumer) => {
      const worker = async () => {
        // Pipelined like a production worker: the next take goes out as soon as this one's acks
        // are sent, not when they are answered, so a system whose acks wait for an fsync (orq
        // strict) is not also made to deliver later for it. At most one earlier take's acks stay
        // unanswered per worker (ackedBefore), which bounds what a slow ack path can pile up.
        let ackedBefore: Promise<void> = Promise.resolve();
        while (this.consuming && this.failure === null) {
          let acked: Promise<number> = Promise.resolve(0);
          await new Promise<void>((taken) => {
            acked = consumer.take(this.options.takeCount, this.options.waitMs, onPayload, taken);
            // An error never calls `taken`: settle the wait here instead.
            acked.then(() => taken(), () => taken());
          });
          await ackedBefore;
          // Not `delivered += await ...`: that reads `delivered` before the await and loses other workers' counts.
          ackedBefore = acked.then(
            (got) => void (this.delivered += got),
            (error: Error) => void (this.failure ??= error),
          );
        }
        await ackedBefore;
      };
      await Promise.all(Array.from({ length: this.options.consumerDepth }, worker));
    };
    this.consumersDone = Promise.all(this.consumers.map((consumer) => consume(consumer).catch((error: Error) => (this.failure ??= error))));
  }

  /** Offer the rate from `startMs` until `endMs` (performance.now() ms; Infinity: until stopProducing); resolves when the window is over or a request failed. */
  async produce(startMs: number, endMs: number): Promise<void> {
    await Promise.all(this.producers.map((producer) => this.produceOn(producer, startMs, endMs)));
  }

  /** Ends produce() at the producers' next tick, for a window whose end is an event rather than a time. */
  stopProducing(): void {
    this.producing = false;
  }

  /** Let the consumers catch up with what was enqueued (up to tailMs), then close every connection; throws the first failure. */
  async stop(tailMs: number): Promise<void> {
    const deadlineMs = performance.now() + tailMs;
    while (this.failure === null && performance.now() < deadlineMs && (this.received < this.enqueued || this.producers.some((p) => p.inFlight > 0))) {
      await Bun.sleep(CATCH_UP_POLL_MS);
    }
    this.consuming = false;
    for (const consumer of this.consumers) consumer.close();
    for (const producer of this.producers) producer.close();
    await this.consumersDone;
    if (this.failure !== null) throw this.failure;
  }

  private async produceOn(producer: Producer, startMs: number, endMs: number): Promise<void> {
    const { batch, producerInFlightMax } = this.options;
    const share = this.options.rateItemsPerS / this.producers.length;
    let sent = 0;
    for (;;) {
      const nowMs = performance.now();
      if (nowMs >= endMs || !this.producing || this.failure !== null) return;
      const owed = Math.floor((share * (nowMs - startMs)) / 1000) - sent;
      let batches = Math.floor(owed / batch);
      while (batches > 0 && producer.inFlight < producerInFlightMax) {
        batches--;
        sent += batch;
        producer.enqueueStamped(batch, nowMs).then(
          () => (this.enqueued += batch),
          (error: Error) => (this.failure ??= error),
        );
      }
      await Bun.sleep(PRODUCER_TICK_MS);
    }
  }
}
