// The load generator's server CPU by thread (bench/load/thread-cpu.ts): stat
// lines are grouped as the Jupiter scenario reports them, and a live reading
// of this test's own process accounts for its threads.

import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { MAIN_SYSTEM, MAIN_USER, describeThreadCpu, parseTaskStat, readThreadCpu, threadCpuUsPer } from "../../bench/load/thread-cpu.ts";

/** A /proc/<pid>/task/<tid>/stat line with `user` and `system` ticks (fields 14 and 15). */
function statLine(tid: number, name: string, user: number, system: number): string {
  const before = ["S", "1", "1", "1", "0", "-1", "4194304", "100", "0", "0", "0"];
  return `${tid} (${name}) ${[...before, String(user), String(system), "0", "0", "20", "0", "12"].join(" ")}`;
}

describe("parseTaskStat", () => {
  test("the main thread's user and system time are two groups, in µs", () => {
    expect(parseTaskStat(statLine(10, "bun", 150, 30), true)).toEqual([
      [MAIN_USER, 1_500_000],
      [MAIN_SYSTEM, 300_000],
    ]);
  });

  test("a helper thread's name loses its number, and its user and system time add up", () => {
    expect(parseTaskStat(statLine(11, "Bun Pool 3", 2, 5), false)).toEqual([["Bun Pool", 70_000]]);
    expect(parseTaskStat(statLine(12, "HeapHelper", 1, 0), false)).toEqual([["HeapHelper", 10_000]]);
  });

  test("a name holding spaces and parentheses is read to its last parenthesis", () => {
    expect(parseTaskStat(statLine(13, "odd (name) 7", 4, 1), false)).toEqual([["odd (name)", 50_000]]);
  });

  test("a line without CPU times is refused, not read as zero", () => {
    expect(() => parseTaskStat("13 (x) S 1", false)).toThrow(/no CPU times/);
    expect(() => parseTaskStat("garbage", false)).toThrow(/not a stat line/);
  });
});

describe("threadCpuUsPer", () => {
  test("what each group spent between two readings, per request, the largest first, idle groups left out", () => {
    const before = new Map([[MAIN_USER, 1_000_000], [MAIN_SYSTEM, 200_000], ["JITWorker", 50_000], ["HeapHelper", 10_000]]);
    const after = new Map([[MAIN_USER, 1_600_000], [MAIN_SYSTEM, 400_000], ["JITWorker", 50_000], ["HeapHelper", 40_000], ["Bun Pool", 100_000]]);
    const per = threadCpuUsPer(before, after, 100);
    expect(per).toEqual({ [MAIN_USER]: 6000, [MAIN_SYSTEM]: 2000, "Bun Pool": 1000, HeapHelper: 300 });
    expect(Object.keys(per ?? {})).toEqual([MAIN_USER, MAIN_SYSTEM, "Bun Pool", "HeapHelper"]);
    expect(describeThreadCpu(per)).toBe(`${MAIN_USER} 6000.0, ${MAIN_SYSTEM} 2000.0, Bun Pool 1000.0, HeapHelper 300.0`);
  });

  test("a group whose threads ended shows nothing rather than a negative time; a missing reading or no requests give null", () => {
    expect(threadCpuUsPer(new Map([["Bun Pool", 90_000]]), new Map([["Bun Pool", 20_000]]), 10)).toEqual({});
    expect(threadCpuUsPer(null, new Map(), 10)).toBeNull();
    expect(threadCpuUsPer(new Map(), new Map(), 0)).toBeNull();
    expect(describeThreadCpu(null)).toBe("unknown");
  });
});

describe("readThreadCpu", () => {
  test("this process: its main thread's time grows with work it does, and no thread is counted twice", () => {
    const before = readThreadCpu(process.pid);
    expect(before).not.toBeNull();
    // Enough work for a few clock ticks (10 ms each) on any machine.
    const until = process.cpuUsage().user + 60_000;
    let spin = 0;
    while (process.cpuUsage().user < until) spin++;
    expect(spin).toBeGreaterThan(0);
    const after = readThreadCpu(process.pid) as Map<string, number>;
    expect(after.get(MAIN_USER) as number).toBeGreaterThan(before?.get(MAIN_USER) as number);
    // Live threads only: threads that ended took their time with them, so the
    // groups add up to at most the process's own user + system time (a thread
    // counted twice would push them past it), within a tick per thread.
    const total = [...after.values()].reduce((a, b) => a + b, 0);
    const { user, system } = process.cpuUsage();
    const threads = readdirSync(`/proc/${process.pid}/task`).length;
    expect(total).toBeLessThanOrEqual(user + system + (threads + 2) * 10_000);
    // The main thread's two groups are its own stat line's, read directly.
    const [[, mainUserUs], [, mainSystemUs]] = parseTaskStat(readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, "utf8"), true) as [[string, number], [string, number]];
    expect(Math.abs((after.get(MAIN_USER) as number) - mainUserUs)).toBeLessThanOrEqual(20_000);
    expect(Math.abs((after.get(MAIN_SYSTEM) as number) - mainSystemUs)).toBeLessThanOrEqual(20_000);
  });

  test("a process that does not exist gives null", () => {
    expect(readThreadCpu(2 ** 22 + 12345)).toBeNull();
    expect(readThreadCpu(null)).toBeNull();
  });
});
