// Goal: orq's beanstalkd port answers scripted sessions exactly as Debian's
// beanstalkd 1.12 does (job ids normalised, process- and clock-dependent stats
// values masked): every command, every error answer, TTR expiry and
// DEADLINE_SOON, a disconnect with a reservation, pause-tube, and the keys of
// the stats YAML. Both servers are real processes on free loopback ports,
// stopped by PID; the scripts wait for conditions, never for a fixed time.
// Without the beanstalkd binary the file is skipped with a message.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ServerProcess } from "../support/server-process.ts";
import { BeanstalkdProcess, beanstalkdPath } from "./support/beanstalkd-process.ts";
import { playScript } from "./support/side-by-side.ts";

const haveBeanstalkd = beanstalkdPath() !== null;
if (!haveBeanstalkd) console.warn("side-by-side.test.ts: skipped, no beanstalkd binary (apt-get install beanstalkd)");

/** Both servers, started once for the file; scripts use their own tubes and leave `default` empty. */
let reference: BeanstalkdProcess;
let orq: ServerProcess;

beforeAll(async () => {
  if (!haveBeanstalkd) return;
  reference = await BeanstalkdProcess.start();
  orq = await ServerProcess.start({ args: ["--beanstalk-port", "0"] });
});

afterAll(async () => {
  if (!haveBeanstalkd) return;
  await reference.stop();
  await orq.cleanup();
});

async function same(steps: readonly string[]): Promise<void> {
  const expected = await playScript(reference.port, steps);
  const actual = await playScript(orq.beanstalkPort!, steps);
  expect(actual).toBe(expected);
}

const inTube = (tube: string): string[] => [`use ${tube}`, `watch ${tube}`, "ignore default"];

describe.skipIf(!haveBeanstalkd)("side by side with beanstalkd", () => {
  test("producer and worker commands: put, reserve, release, bury, kick, peek, touch, delete, stats-job, tubes", async () => {
    await same([
      ...inTube("sbs-a"),
      "put 100 0 10 3\nabc",
      "put 50 0 10 3\ndef",
      "put 50 0 10 3\nghi",
      "peek-ready",
      "reserve",
      "reserve",
      "release {2} 10 0",
      "reserve",
      "bury {2} 7",
      "peek-buried",
      "stats-job {2}",
      "kick 5",
      "stats-job {2}",
      "touch {3}",
      "delete {3}",
      "delete {3}",
      "reserve-with-timeout 0",
      "delete {2}",
      "reserve-with-timeout 0",
      "release {1} 4294967295 100",
      "peek-delayed",
      "stats-job {1}",
      "kick-job {1}",
      "kick-job {1}",
      "peek-ready",
      "reserve-job {1}",
      "reserve-job {1}",
      "stats-tube sbs-a",
      "delete {1}",
      "put 0 0 10 0\n",
      "peek {4}",
      "delete {4}",
      "stats-tube sbs-a",
      "list-tube-used",
      "list-tubes-watched",
      "watch sbs-a-other",
      "watch sbs-a-other",
      "list-tubes-watched",
      "ignore sbs-a-other",
      "ignore sbs-a",
      "ignore never-watched",
      "use default",
    ]);
  });

  test("pipelined puts are answered in order, a refused one among them included", async () => {
    await same([
      ...inTube("sbs-pipe"),
      "!raw put 3 0 10 1\nA\nput 2 0 10 1\nBXY\nput 1 0 10 1\nC\nput 0 0 10 1\nD\nput 9 0 10 2\nE\nlist-tube-used\n",
      "!answer",
      "!answer",
      "!answer",
      "!answer",
      "!answer",
      "!answer",
      "!answer",
      "reserve",
      "delete {3}",
      "reserve",
      "delete {2}",
      "reserve",
      "delete {1}",
      "use default",
    ]);
  });

  test("kick moves buried jobs first, then delayed ones, up to its bound", async () => {
    await same([
      ...inTube("sbs-k"),
      "put 1 100 10 1\na",
      "put 1 100 10 1\nb",
      "put 1 0 10 1\nc",
      "reserve",
      "bury {3} 2",
      "kick 10",
      "kick 1",
      "kick 10",
      "kick 0",
      "stats-tube sbs-k",
      "reserve",
      "delete {1}",
      "reserve",
      "delete {2}",
      "reserve",
      "delete {3}",
      "use default",
    ]);
  });

  test("every error answer of the protocol's grammar", async () => {
    const tooBig = "x".repeat(70_000);
    await same([
      ...inTube("sbs-e"),
      "put 0 0 10 3\nabcXY",
      "!answer",
      `!raw put 0 0 10 70000\n${tooBig}\n`,
      "!answer",
      "list-tube-used",
      "put -1 0 10 3",
      "put 0 0 10 3 x",
      "put 4294967296 0 10 3",
      "put 0 0 10",
      "put 0 0 10 abc",
      "use -foo",
      "use a b",
      "use a\tb",
      `use ${"t".repeat(201)}`,
      `use ${"t".repeat(200)}`,
      `use ${"t".repeat(230)}`,
      "use sbs-e",
      "stats-tube never-made-tube",
      "stats-tube",
      "pause-tube never-made-tube 1",
      "pause-tube -x 1",
      "pause-tube sbs-e",
      "peek 999999999",
      "peek abc",
      "peek 18446744073709551616",
      "peek",
      "delete 1x",
      "delete -1",
      "release 1 2",
      "release 999999999 0 0",
      "bury 999999999 0",
      "bury 999999999",
      "touch 999999999",
      "kick-job 999999999",
      "stats-job 999999999",
      "reserve-job 999999999",
      "kick x",
      "kick",
      "kick 5junk",
      "reservex",
      "reserve-with-timeout x",
      "reserve-with-timeout 0",
      "reserve-with-timeout 0 junk",
      "stats x",
      "list-tubes x",
      "list-tube-used x",
      "list-tubes-watched x",
      "peek-ready x",
      "bogus",
      "",
      "USE foo",
      "ignore sbs-e",
      "use default",
      "1> quitnow",
    ]);
  });

  test("TTR: DEADLINE_SOON in a reservation's last second, while waiting and at once; expiry releases the job", async () => {
    await same([
      ...inTube("sbs-t"),
      "put 0 0 3 1\nx",
      "reserve",
      "reserve-with-timeout 10",
      "reserve",
      "!until ^FOUND peek-ready",
      "stats-job {1}",
      "reserve",
      "delete {1}",
      "use default",
    ]);
  });

  test("a reservation returns to ready when its connection closes", async () => {
    await same([
      "1> use sbs-d",
      "1> put 0 0 100 2\nhi",
      "2> watch sbs-d",
      "2> ignore default",
      "2> reserve",
      "3> watch sbs-d",
      "3> ignore default",
      "3> reserve-with-timeout 0",
      "2> !close",
      "3> reserve-with-timeout 10",
      "3> stats-job {1}",
      "3> delete {1}",
    ]);
  });

  test("pause-tube holds reserves until the pause ends", async () => {
    await same([
      ...inTube("sbs-p"),
      "put 0 0 10 1\np",
      "pause-tube sbs-p 2",
      "reserve-with-timeout 0",
      "stats-tube sbs-p",
      "reserve-with-timeout 10",
      "delete {1}",
      "pause-tube sbs-p 0",
      "stats-tube sbs-p",
      "!until \\npause:.0\\n stats-tube sbs-p",
      "use default",
    ]);
  });

  test("stats: beanstalkd's keys in its order, and the counts of the sessions above", async () => {
    await same(["stats", "list-tubes"]);
  });
});
