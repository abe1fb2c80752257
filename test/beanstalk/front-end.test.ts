// Goal: the beanstalkd port on a real engine inside the test process: what
// the MessagePack side sees of a beanstalkd job (priority p - 2^31, TTR as
// lease_ms, bury as a dead letter "buried", release with a new priority),
// that an item enqueued over MessagePack is an ordinary job here, DRAINING
// once shutdown begins, and OUT_OF_MEMORY when storage fails or the server
// holds its most live items or topics.

import { afterEach, describe, expect, test } from "bun:test";
import { BeanstalkServer } from "../../src/beanstalk/beanstalk-server.ts";
import { jobIdOf, orqIdOf } from "../../src/beanstalk/job-mapping.ts";
import { silentLogger } from "../../src/server/logger.ts";
import { Harness, item } from "../engine/support/harness.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

let server: BeanstalkServer | null = null;

afterEach(() => {
  server?.close();
  server = null;
});

function start(h: Harness): BeanstalkServer {
  server = BeanstalkServer.start({ host: "127.0.0.1", port: 0, engine: h.engine, namespace: "jobs", limits: h.limits, clock: h.clock, version: "test", logger: silentLogger });
  return server;
}

describe("what the MessagePack side sees", () => {
  test("priority, TTR, delay, bury and release map onto the item", async () => {
    const h = new Harness();
    const wire = await BeanstalkWire.connect(start(h).port);
    await wire.command("use mapped");
    const inserted = /^INSERTED (\d+)$/.exec(await wire.command("put 7 0 45 4\r\nbody"))![1]!;
    const orqId = orqIdOf(inserted)!;
    const item = h.engine.inspect("jobs", orqId, h.now)!;
    expect([item.topic, item.priority, item.leaseMs, Buffer.from(item.payload).toString()]).toEqual(["mapped", 7 - 2 ** 31, 45_000, "body"]);
    await wire.command("watch mapped");
    expect(await wire.command("reserve")).toBe(`RESERVED ${inserted} 4\nbody`);
    expect(h.engine.inspect("jobs", orqId, h.now)!.leaseExpiresAtMs).toBe(h.now + 45_000);
    expect(await wire.command(`release ${inserted} 4294967295 0`)).toBe("RELEASED");
    expect(h.engine.inspect("jobs", orqId, h.now)!.priority).toBe(2 ** 31 - 1);
    await wire.command("reserve");
    expect(await wire.command(`bury ${inserted} 0`)).toBe("BURIED");
    const dead = h.engine.dead("jobs", "mapped", 10).items;
    expect(dead.map((d) => [d.id, d.priority, d.deadReason])).toEqual([[orqId, -(2 ** 31), "buried"]]);
    // A redrive over MessagePack is a kick: the job is ready again here.
    await h.settle(h.engine.redrive("jobs", "mapped", null, h.now));
    expect(await wire.command("peek-ready")).toBe(`FOUND ${inserted} 4\nbody`);
    wire.close();
  });

  test("an item enqueued over MessagePack is a job: its numeric id works in peek, reserve and delete", async () => {
    const h = new Harness();
    const [orqId] = await h.enqueue("jobs", [item("from-msgpack", { priority: -5, payload: Buffer.from("hi"), leaseMs: 2500 })]);
    const wire = await BeanstalkWire.connect(start(h).port);
    const jobId = jobIdOf(orqId!);
    expect(await wire.command(`peek ${jobId}`)).toBe(`FOUND ${jobId} 2\nhi`);
    const stats = await wire.command(`stats-job ${jobId}`);
    expect(stats).toContain(`\npri: ${2 ** 31 - 5}\n`);
    expect(stats).toContain("\nttr: 2\n");
    expect(await wire.command("watch from-msgpack")).toBe("WATCHING 2");
    expect(await wire.command("reserve")).toBe(`RESERVED ${jobId} 2\nhi`);
    expect(await wire.command(`delete ${jobId}`)).toBe("DELETED");
    expect(h.engine.get("jobs", [orqId!], h.now)).toEqual({ ok: true, value: { items: [{ id: orqId!, state: "ended", outcome: "acked" }] } });
    // Another namespace's items are not jobs here.
    const [other] = await h.enqueue("elsewhere", [item("from-msgpack")]);
    expect(await wire.command(`peek ${jobIdOf(other!)}`)).toBe("NOT_FOUND");
    wire.close();
  });
});

describe("refusals", () => {
  test("DRAINING for puts once shutdown begins; other commands still answer", async () => {
    const h = new Harness();
    const bs = start(h);
    const wire = await BeanstalkWire.connect(bs.port);
    bs.beginDrain();
    expect(await wire.command("put 0 0 10 1\r\nx")).toBe("DRAINING");
    expect(await wire.command("list-tube-used")).toBe("USING default");
    expect(await wire.command("reserve-with-timeout 0")).toBe("TIMED_OUT");
    wire.close();
  });

  test("OUT_OF_MEMORY when storage fails, and the port recovers with it", async () => {
    const h = new Harness({ shards: 1 });
    const wire = await BeanstalkWire.connect(start(h).port);
    h.store.failShard(0);
    expect(await wire.command("put 0 0 10 1\r\nx")).toBe("OUT_OF_MEMORY");
    h.store.healShard(0);
    let answer = "";
    // The storage breaker reopens on its own schedule: retry on the manual clock, which only the test moves.
    for (let tries = 0; tries < 100 && !answer.startsWith("INSERTED"); tries++) {
      h.advance(1000);
      answer = await wire.command("put 0 0 10 1\r\nx");
    }
    expect(answer).toMatch(/^INSERTED \d+$/);
    wire.close();
  });

  test("OUT_OF_MEMORY past the live-item or topic maximum, and nothing stored", async () => {
    const h = new Harness({ limits: { liveItemsMax: 2, topicsMax: 1 } });
    const wire = await BeanstalkWire.connect(start(h).port);
    await wire.command("use one");
    expect(await wire.command("put 0 0 10 1\r\na")).toMatch(/^INSERTED \d+$/);
    await wire.command("use two");
    expect(await wire.command("put 0 0 10 1\r\nb")).toBe("OUT_OF_MEMORY");
    await wire.command("use one");
    expect(await wire.command("put 0 0 10 1\r\nc")).toMatch(/^INSERTED \d+$/);
    expect(await wire.command("put 0 0 10 1\r\nd")).toBe("OUT_OF_MEMORY");
    expect((h.engine.stats(null, h.now) as { engine: { items: number; topics: number } }).engine).toEqual(expect.objectContaining({ items: 2, topics: 1 }));
    wire.close();
  });
});
