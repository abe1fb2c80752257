// Goal: unmodified third-party beanstalkd clients, jackd 2.2 and fivebeans
// 1.5 from npm and Debian's ruby-beaneater 1.1, run a producer/worker session
// against orq's beanstalkd port in a real server process: put,
// use/watch/ignore (tube switching), reserve, release, bury, kick, peek,
// delete, and the stats YAML they parse. The Ruby session is skipped, with a
// message, when ruby or ruby-beaneater is not installed (.ci/run installs both).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import JackdClient from "jackd";
import { ServerProcess } from "../support/server-process.ts";
import { FiveBeans } from "./support/fivebeans-promises.ts";

let orq: ServerProcess;
let port: number;

beforeAll(async () => {
  orq = await ServerProcess.start({ args: ["--beanstalk-port", "0"] });
  port = orq.beanstalkPort!;
});

afterAll(async () => {
  await orq.cleanup();
});

describe("jackd", () => {
  test("producer and worker session", async () => {
    const producer = new JackdClient();
    const worker = new JackdClient();
    await producer.connect({ host: "127.0.0.1", port });
    await worker.connect({ host: "127.0.0.1", port });
    try {
      expect(await producer.use("jackd-jobs")).toBe("jackd-jobs");
      const low = await producer.put("low", { priority: 100, ttr: 30 });
      const high = await producer.put("high \u00e9", { priority: 1, ttr: 30 });
      expect(await worker.watch("jackd-jobs")).toBe(2);
      expect(await worker.ignore("default")).toBe(1);
      const first = await worker.reserve();
      expect(first.id).toBe(high);
      expect(Buffer.from(first.payload as Buffer).toString("utf8")).toBe("high \u00e9");
      await worker.release(first.id, { priority: 200, delay: 0 });
      const second = await worker.reserve();
      expect(second.id).toBe(low);
      await worker.bury(second.id, 5);
      expect((await producer.peekBuried()).id).toBe(low);
      expect(await producer.kick(10)).toBe(1);
      const third = await worker.reserveWithTimeout(5);
      expect(third.id).toBe(low);
      await worker.touch(third.id);
      await worker.delete(third.id);
      const fourth = await worker.reserveJob(Number(high));
      expect(fourth.id).toBe(high);
      await worker.delete(fourth.id);
      const tube = await producer.statsTube("jackd-jobs");
      expect(tube).toContain("name: jackd-jobs");
      expect(tube).toContain("current-jobs-ready: 0");
      expect(tube).toContain("cmd-delete: 2");
      expect(await producer.stats("")).toContain("current-connections: ");
      await expect(worker.reserveWithTimeout(0)).rejects.toThrow("TIMED_OUT");
    } finally {
      await producer.disconnect();
      await worker.disconnect();
    }
  });
});

describe("fivebeans", () => {
  test("producer and worker session", async () => {
    const client = await FiveBeans.connect(port);
    try {
      expect(await client.call<string>("use", "five-jobs")).toBe("five-jobs");
      const a = await client.call<string>("put", 10, 0, 30, "alpha");
      const b = await client.call<string>("put", 20, 0, 30, "beta");
      expect(Number(await client.call("watch", "five-jobs"))).toBe(2);
      expect(Number(await client.call("ignore", "default"))).toBe(1);
      const [id1, body1] = await client.callMany("reserve");
      expect([id1, String(body1)]).toEqual([a, "alpha"]);
      await client.call("release", id1, 30, 0);
      const [id2] = await client.callMany("reserve");
      expect(id2).toBe(b);
      await client.call("bury", id2, 1);
      const [peekId] = await client.callMany("peek_buried");
      expect(peekId).toBe(b);
      expect(Number(await client.call("kick", 5))).toBe(1);
      const [id3] = await client.callMany("reserve_with_timeout", 5);
      expect(id3).toBe(b);
      await client.call("destroy", id3);
      const [id4] = await client.callMany("reserve");
      expect(id4).toBe(a);
      const jobStats = await client.call<Record<string, unknown>>("stats_job", id4);
      expect(jobStats.state).toBe("reserved");
      expect(jobStats.releases).toBe(1);
      expect(jobStats.pri).toBe(30);
      await client.call("destroy", id4);
      const tubeStats = await client.call<Record<string, unknown>>("stats_tube", "five-jobs");
      expect(tubeStats["current-jobs-ready"]).toBe(0);
      expect(tubeStats["cmd-delete"]).toBe(2);
      const stats = await client.call<Record<string, unknown>>("stats");
      expect(stats["max-job-size"]).toBe(65535);
      expect(await client.call<string[]>("list_tubes_watched")).toEqual(["five-jobs"]);
    } finally {
      client.end();
    }
  });
});

const beaneaterInstalled = existsSync("/usr/bin/ruby") && existsSync("/usr/lib/ruby/vendor_ruby/beaneater.rb");
if (!beaneaterInstalled) console.warn("clients.test.ts: ruby-beaneater session skipped (apt-get install ruby ruby-beaneater)");

describe.skipIf(!beaneaterInstalled)("ruby-beaneater", () => {
  test("producer and worker session", async () => {
    const proc = Bun.spawn(["/usr/bin/ruby", join(import.meta.dir, "clients/beaneater-session.rb"), String(port)], { stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(`${stdout}${stderr}`.trim()).toBe("ok");
    expect(code).toBe(0);
  });
});
