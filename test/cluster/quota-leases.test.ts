// Goal: the leased quota buckets of cluster/quota-leases.ts, in simulated time
// (a ManualClock; the database's bucket is a model with the same rules as
// quota-rows.ts's UPDATE, on the same clock). A node holds a floor once its
// first period ran; a take beyond its tokens is refused with a hint and
// draws at once, never two draws of a namespace at a time; draws follow use
// and idle tokens go back down to the floor; an empty database bucket gives a
// refill hint; a failed draw turns refusals into UNAVAILABLE until a draw
// succeeds; a draw unanswered past the timeout is given up and its late
// answer ignored; and over a random load on three nodes the cluster never
// admits more than a minute's worth plus the refill since the bucket was
// made, while one busy node alone gets all but the others' floors.

import { describe, expect, test } from "bun:test";
import { LeasedBucket, QuotaLeases } from "../../src/cluster/quota-leases.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { clusterLimits } from "../../src/limits.ts";
import type { QuotaDraw, QuotaGrant } from "../../src/storage/postgres/quota-rows.ts";
import { seededRandom } from "../support/seeded-random.ts";

const { quotaDrawPeriodMs: periodMs, quotaDrawRetryAfterMs, quotaDrawTimeoutMs, quotaUnreachableRetryAfterMs } = clusterLimits;

/** The database's bucket: refilled by the (shared, simulated) clock, whole tokens granted, returns capped at capacity. */
class ModelBucket {
  tokens: number;
  private refilledAtMs: number;
  granted = 0;
  returned = 0;

  constructor(
    readonly perMinute: number,
    private readonly clock: ManualClock,
  ) {
    this.tokens = perMinute;
    this.refilledAtMs = clock.nowMs();
  }

  draw(draw: QuotaDraw): QuotaGrant {
    const nowMs = this.clock.nowMs();
    const refilled = Math.min(this.perMinute, this.tokens + (Math.max(0, nowMs - this.refilledAtMs) * this.perMinute) / 60_000);
    this.refilledAtMs = Math.max(this.refilledAtMs, nowMs);
    const granted = draw.want >= 0 ? Math.min(draw.want, Math.floor(refilled)) : draw.want;
    this.tokens = Math.min(this.perMinute, refilled - granted);
    if (granted > 0) this.granted += granted;
    else this.returned -= granted;
    return { granted, left: this.tokens };
  }
}

/** Draws answered when the test says so (answer/fail), to see what happens while one is in flight. */
class HeldDraws {
  readonly sent: QuotaDraw[] = [];
  private readonly pending: Array<{ resolve: (grant: QuotaGrant) => void; reject: (error: Error) => void; draw: QuotaDraw }> = [];
  constructor(private readonly bucket: ModelBucket) {}
  readonly draw = (draw: QuotaDraw): Promise<QuotaGrant> => {
    this.sent.push(draw);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject, draw }));
  };
  async answer(): Promise<void> {
    const next = this.pending.shift()!;
    next.resolve(this.bucket.draw(next.draw));
    await Promise.resolve();
  }
  async fail(message: string): Promise<void> {
    this.pending.shift()!.reject(new Error(message));
    await Promise.resolve();
  }
  get inFlight(): number {
    return this.pending.length;
  }
}

function setup(perMinute: number) {
  const clock = new ManualClock(0);
  const model = new ModelBucket(perMinute, clock);
  const held = new HeldDraws(model);
  const bucket = new LeasedBucket("q", perMinute, held.draw, clock);
  return { clock, model, held, bucket };
}

describe("a node's leased bucket", () => {
  test("the first period draws the floor; beyond it a take is refused, draws at once, and only one draw is in flight", async () => {
    const { clock, held, bucket } = setup(600);
    expect(bucket.floor).toBe(3); // 600 a minute over 250 ms, rounded up
    expect(bucket.take(1, clock.nowMs())).toMatchObject({ ok: false, refusal: "rate_limited" }); // nothing drawn yet: draws at once
    expect(held.sent.map((d) => d.want)).toEqual([3]); // max(floor, the refused 1)
    void bucket.period(clock.nowMs()); // a draw is in flight: the period sends none
    expect(held.inFlight).toBe(1);
    await held.answer();
    expect(bucket.available(clock.nowMs())).toBe(3);
    for (let i = 0; i < 3; i++) expect(bucket.take(1, clock.nowMs())).toEqual({ ok: true });
    const refused = bucket.take(5, clock.nowMs());
    expect(refused).toEqual({ ok: false, refusal: "rate_limited", retryAfterMs: quotaDrawRetryAfterMs }); // the database holds plenty
    expect(held.sent.map((d) => d.want)).toEqual([3, 6]); // at once: twice the use so far (3), above the refused 5
    expect(bucket.take(5, clock.nowMs())).toMatchObject({ ok: false });
    expect(held.inFlight).toBe(1);
    await held.answer();
    expect(bucket.take(5, clock.nowMs())).toEqual({ ok: true });
    expect(bucket.take(601, clock.nowMs())).toEqual({ ok: false, refusal: "too_large", retryAfterMs: 0 });
  });

  test("periodic draws follow the use; an idle node hands back down to its floor", async () => {
    const { clock, model, held, bucket } = setup(6_000); // floor 25
    void bucket.period(clock.nowMs());
    await held.answer();
    expect(bucket.available(0)).toBe(25);
    for (let i = 0; i < 20; i++) expect(bucket.take(1, clock.nowMs()).ok).toBe(true);
    clock.advance(periodMs);
    void bucket.period(clock.nowMs());
    expect(held.sent.at(-1)!.want).toBe(40 - 5); // twice the period's 20, less the 5 held
    await held.answer();
    expect(bucket.available(0)).toBe(40);
    expect(bucket.take(1, clock.nowMs()).ok).toBe(true);
    clock.advance(periodMs);
    void bucket.period(clock.nowMs()); // a period using 1: back to the floor
    expect(held.sent.at(-1)!.want).toBe(-14);
    expect(bucket.available(0)).toBe(25); // handed back before the answer
    await held.answer();
    expect(model.returned).toBe(14);
    for (let i = 0; i < 25; i++) expect(bucket.take(1, clock.nowMs()).ok).toBe(true);
    clock.advance(periodMs);
    void bucket.period(clock.nowMs()); // 25 used: draws 50
    expect(held.sent.at(-1)!.want).toBe(50);
    await held.answer();
    clock.advance(periodMs);
    void bucket.period(clock.nowMs()); // an idle period: back to the floor
    expect(held.sent.at(-1)!.want).toBe(-25);
    await held.answer();
    expect(bucket.available(0)).toBe(25);
    expect(model.returned).toBe(14 + 25);
  });

  test("an empty database bucket: the hint is the refill of the shortfall plus a period", async () => {
    const { clock, model, held, bucket } = setup(60); // one token a second; floor 1
    model.tokens = 0;
    void bucket.period(clock.nowMs());
    await held.answer(); // granted nothing: the database had nothing
    expect(bucket.available(0)).toBe(0);
    const refused = bucket.take(3, clock.nowMs());
    expect(refused).toEqual({ ok: false, refusal: "rate_limited", retryAfterMs: 3_000 + periodMs });
    await held.answer();
    clock.advance(3_000);
    void bucket.period(clock.nowMs()); // the refused 3 are still wanted
    expect(held.sent.at(-1)!.want).toBe(3);
    await held.answer();
    expect(bucket.take(3, clock.nowMs())).toEqual({ ok: true });
  });

  test("a failed draw makes refusals UNAVAILABLE until a draw succeeds; held tokens are still used", async () => {
    const { clock, held, bucket } = setup(600);
    void bucket.period(clock.nowMs());
    await held.answer();
    clock.advance(periodMs);
    void bucket.period(clock.nowMs()); // holds its floor: nothing to draw
    expect(held.inFlight).toBe(0);
    expect(bucket.take(2, clock.nowMs()).ok).toBe(true);
    clock.advance(periodMs);
    void bucket.period(clock.nowMs());
    await held.fail("connection refused");
    expect(bucket.take(1, clock.nowMs())).toEqual({ ok: true }); // its last token
    const refused = bucket.take(1, clock.nowMs());
    expect(refused).toMatchObject({ ok: false, refusal: "unavailable", retryAfterMs: quotaUnreachableRetryAfterMs });
    expect(refused.ok ? "" : refused.message).toContain("connection refused");
    await held.answer(); // the draw that refusal sent gets through
    expect(bucket.take(1, clock.nowMs())).toEqual({ ok: true });
  });

  test("a draw unanswered past the timeout is given up: its late grant is ignored and the next draw goes", async () => {
    const { clock, model, held, bucket } = setup(600);
    void bucket.period(clock.nowMs());
    clock.advance(quotaDrawTimeoutMs);
    void bucket.period(clock.nowMs());
    expect(held.sent).toHaveLength(2);
    await held.answer(); // the first, late: granted in the database, ignored here (lost, not counted twice)
    expect(bucket.available(0)).toBe(0);
    expect(bucket.take(1, clock.nowMs())).toMatchObject({ ok: false, refusal: "unavailable" });
    await held.answer();
    expect(bucket.available(0)).toBe(3);
    expect(model.granted).toBe(6);
  });
});

describe("leased buckets on several nodes", () => {
  /** Draws answered after `delayMs` of simulated time, in the order sent. */
  function cluster(perMinute: number, nodes: number, clock: ManualClock) {
    const model = new ModelBucket(perMinute, clock);
    const queue: Array<{ atMs: number; run: () => void }> = [];
    const draw = (request: QuotaDraw) =>
      new Promise<QuotaGrant>((resolve) => queue.push({ atMs: clock.nowMs() + 3, run: () => resolve(model.draw(request)) }));
    const leases = Array.from({ length: nodes }, () => new QuotaLeases({ q: { enqueuePerMinute: perMinute }, free: { enqueuePerMinute: null } }, draw, clock));
    const deliver = async () => {
      while (queue.length > 0 && queue[0]!.atMs <= clock.nowMs()) queue.shift()!.run();
      for (let turn = 0; turn < 3; turn++) await Promise.resolve();
    };
    return { model, leases, deliver };
  }

  test("random load on three nodes never admits more than a minute's worth plus the refill; the database only ever gains what nodes hand back", async () => {
    const clock = new ManualClock(0);
    const random = seededRandom(7);
    const int = (n: number) => Math.floor(random() * n);
    const { model, leases, deliver } = cluster(600, 3, clock);
    expect(leases[0]!.quotaBuckets("free", 0)).toBeNull();
    let admitted = 0;
    for (let ms = 0; ms < 10_000; ms++) {
      if (ms % periodMs === 0) for (const node of leases) void node.period(clock.nowMs());
      const node = leases[int(3)]!;
      const count = 1 + int(4);
      if (random() < 0.5 && node.quotaBuckets("q", ms)!.take(count, ms).ok) admitted += count;
      clock.advance(1);
      await deliver();
      expect(admitted).toBeLessThanOrEqual(600 + (clock.nowMs() * 600) / 60_000);
    }
    const held = leases.reduce((sum, node) => sum + node.quotaBuckets("q", 0)!.available(0), 0);
    expect(model.granted - model.returned).toBe(admitted + held);
    expect(admitted).toBeGreaterThan(600); // the load asked far more than the quota: the refill was used too
  });

  test("one busy node alone takes the burst, all but the other nodes' floors", async () => {
    const clock = new ManualClock(0);
    const { leases, deliver } = cluster(600, 3, clock);
    for (const node of leases) void node.period(clock.nowMs());
    clock.advance(5);
    await deliver();
    const busy = leases[0]!.quotaBuckets("q", 0)!;
    let admitted = 0;
    for (let ms = 0; ms < 2 * periodMs; ms++) {
      while (busy.take(1, clock.nowMs()).ok) admitted++;
      clock.advance(1);
      await deliver();
    }
    // 600 to start, 3 held by each idle node, 5 refilled over the half second.
    expect(admitted).toBeGreaterThanOrEqual(600 - 2 * 3);
    expect(admitted).toBeLessThanOrEqual(600 + 5 + 1);
  });
});
