// Goal: what the beanstalkd port acknowledged survives kill -9. Producers put
// jobs (each answered INSERTED only once durable) while a worker reserves,
// deletes, buries with a new priority and releases with a new priority; at
// a seeded moment (after a seeded number of acknowledged puts: a condition,
// not a time) the server gets SIGKILL and restarts on its data dir. Then
// every INSERTED job not acknowledged DELETED is found with its body, every
// DELETED job is gone, and every BURIED or RELEASED job shows the state and
// priority its answer acknowledged (unless a later acknowledged command
// changed it again).

import { afterAll, describe, expect, test } from "bun:test";
import { ServerProcess } from "../support/server-process.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

const rounds = 3;
const seed = Number(process.env.ORQ_BEANSTALK_CRASH_SEED ?? 1307);
const producers = 3;

interface Expectation {
  body: string;
  /** What the last acknowledged command left: live (any state), deleted, buried with a priority, released with a priority. */
  last: { kind: "live" } | { kind: "deleted" } | { kind: "buried"; priority: number } | { kind: "released"; priority: number } | { kind: "unknown" };
}

/** An integer in [lo, hi] from a seeded generator. */
function intBetween(random: () => number, lo: number, hi: number): number {
  return lo + Math.floor(random() * (hi - lo + 1));
}

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.cleanup();
});

async function produce(port: number, index: number, jobs: Map<string, Expectation>, stop: () => boolean): Promise<void> {
  const wire = await BeanstalkWire.connect(port);
  await wire.command("use crash");
  for (let n = 0; !stop(); n++) {
    const body = `p${index}-${n}-${"x".repeat(n % 50)}`;
    const answer = await wire.command(`put ${n % 7} 0 60 ${body.length}\r\n${body}`);
    const match = /^INSERTED (\d+)$/.exec(answer);
    if (match === null) return;
    jobs.set(match[1]!, { body, last: { kind: "live" } });
  }
}

async function work(port: number, jobs: Map<string, Expectation>, random: () => number, stop: () => boolean): Promise<void> {
  const wire = await BeanstalkWire.connect(port);
  await wire.command("watch crash");
  for (let n = 0; !stop(); n++) {
    const reserved = /^RESERVED (\d+) /.exec(await wire.command("reserve-with-timeout 1"));
    if (reserved === null) continue;
    const id = reserved[1]!;
    const roll = intBetween(random, 0, 9);
    const priority = 100 + n;
    const command = roll < 6 ? `delete ${id}` : roll < 8 ? `bury ${id} ${priority}` : `release ${id} ${priority} 0`;
    const answer = await wire.command(command);
    const job = jobs.get(id);
    if (job === undefined) continue;
    if (answer === "DELETED") job.last = { kind: "deleted" };
    else if (answer === "BURIED") job.last = { kind: "buried", priority };
    else if (answer === "RELEASED") job.last = { kind: "released", priority };
    else {
      // Sent but not answered (the kill): either outcome is allowed.
      job.last = { kind: "unknown" };
      return;
    }
  }
}

describe("beanstalkd port under kill -9", () => {
  test(`${rounds} rounds: acknowledged puts, deletes, buries and releases survive (seed ${seed})`, async () => {
    const random = seededRandom(seed);
    const server = await ServerProcess.start({ args: ["--beanstalk-port", "0"] });
    servers.push(server);
    for (let round = 0; round < rounds; round++) {
      const jobs = new Map<string, Expectation>();
      const killAfterPuts = intBetween(random, 30, 300);
      let killed = false;
      const stop = (): boolean => killed || jobs.size >= killAfterPuts;
      const port = server.beanstalkPort!;
      const load = [
        ...Array.from({ length: producers }, (_, i) => produce(port, i, jobs, stop)),
        work(port, jobs, seededRandom(seed * 31 + round), stop),
      ];
      // Kill as soon as enough puts were acknowledged, with everything else still in flight.
      while (!stop()) await Bun.sleep(1);
      await server.restart({ signal: "SIGKILL", samePort: false });
      killed = true;
      await Promise.allSettled(load);
      const check = await BeanstalkWire.connect(server.beanstalkPort!);
      let checked = 0;
      for (const [id, job] of jobs) {
        const peek = await check.command(`peek ${id}`);
        if (job.last.kind === "unknown") continue;
        if (job.last.kind === "deleted") {
          expect(`${id} ${peek}`).toBe(`${id} NOT_FOUND`);
          continue;
        }
        expect(`${id} ${peek}`).toBe(`${id} FOUND ${id} ${job.body.length}\n${job.body}`);
        if (job.last.kind === "buried" || job.last.kind === "released") {
          const stats = await check.command(`stats-job ${id}`);
          expect(stats).toContain(`\npri: ${job.last.priority}\n`);
          if (job.last.kind === "buried") expect(stats).toContain("\nstate: buried\n");
        }
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
      // Leave the tube empty for the next round.
      await check.command("use crash");
      await check.command("kick 100000");
      check.close();
    }
  });
});
