// A process's CPU time, whole and by thread, from /proc. It is the load
// generator's one reader of a stat line's CPU fields (processes.ts's readCpuS
// and the Jupiter scenario's process totals use it too). By thread
// (/proc/<pid>/task/<tid>/stat) it gives what the Jupiter scenario's server
// spends per acquisition on its main thread, its user and system time apart
// (the system time is the socket and epoll work, and page faults), and on
// each kind of helper thread Bun and JavaScriptCore run beside it
// (JITWorker, JSCWarmUp, HeapHelper, the collector, Bun's pool, where
// lmdb-js's commits write and sync). The process total alone cannot say
// whether a cost is the requests' own or the runtime's.
//
// Threads are grouped by name with trailing digits dropped ("Bun Pool 3" and
// "Bun Pool 4" are one group): helper threads come and go, so a group's time
// is the sum over the threads that existed at either reading.

import { readdirSync, readFileSync } from "node:fs";

/** Linux's USER_HZ is 100 on every architecture Bun runs on. */
const clockTickUs = 10_000;

/** The main thread's group names: its user time and its system time apart. */
export const MAIN_USER = "main (user)";
export const MAIN_SYSTEM = "main (system)";

/** CPU µs so far by thread group (see the file's comment). */
export type ThreadCpu = Map<string, number>;

/**
 * The user and system CPU time, in µs, of a /proc/<pid>/stat or
 * /proc/<pid>/task/<tid>/stat line (fields 14 and 15, in clock ticks). The
 * name (field 2) may hold spaces and parentheses: fields are counted after
 * its last ")". Throws on a line that is not one.
 */
export function statCpuUs(stat: string): { userUs: number; systemUs: number } {
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) throw new Error(`thread-cpu: not a stat line: ${stat.slice(0, 80)}`);
  const fields = stat.slice(close + 2).split(" ");
  const userUs = Number(fields[11]) * clockTickUs;
  const systemUs = Number(fields[12]) * clockTickUs;
  if (!Number.isFinite(userUs) || !Number.isFinite(systemUs)) throw new Error(`thread-cpu: no CPU times in: ${stat.slice(0, 80)}`);
  return { userUs, systemUs };
}

/** User + system CPU time of process `pid` so far (all its threads, ended ones included), in µs, or null when /proc could not be read. */
export function readProcessCpuUs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const { userUs, systemUs } = statCpuUs(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return userUs + systemUs;
  } catch {
    return null;
  }
}

/**
 * One task's stat line as (group, µs) pairs; `isMain` when the task is the
 * process's first thread.
 */
export function parseTaskStat(stat: string, isMain: boolean): Array<[string, number]> {
  const { userUs, systemUs } = statCpuUs(stat);
  if (isMain) return [[MAIN_USER, userUs], [MAIN_SYSTEM, systemUs]];
  const group = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[\s#]*\d+$/, "").trim() || "(unnamed)";
  return [[group, userUs + systemUs]];
}

/** CPU µs so far by thread group of process `pid`, or null when /proc could not be read. */
export function readThreadCpu(pid: number | null): ThreadCpu | null {
  if (pid === null) return null;
  const byGroup: ThreadCpu = new Map();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      } catch {
        continue; // the thread ended between the listing and the read
      }
      for (const [group, us] of parseTaskStat(stat, Number(tid) === pid)) byGroup.set(group, (byGroup.get(group) ?? 0) + us);
    }
  } catch {
    return null;
  }
  return byGroup;
}

/**
 * CPU µs per `count` by thread group between two readings, the largest first,
 * groups that spent nothing left out; null when either reading is missing or
 * `count` is 0. A group whose threads ended between the readings can show
 * less than it had: it is floored at 0.
 */
export function threadCpuUsPer(before: ThreadCpu | null, after: ThreadCpu | null, count: number): Record<string, number> | null {
  if (before === null || after === null || count === 0) return null;
  const per: Array<[string, number]> = [];
  for (const [group, us] of after) {
    const spent = Math.max(0, us - (before.get(group) ?? 0));
    if (spent > 0) per.push([group, spent / count]);
  }
  per.sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(per);
}

/** "main (user) 11.2, main (system) 3.1, Bun Pool 2.0, …" with one decimal, or "unknown". */
export function describeThreadCpu(per: Record<string, number> | null | undefined): string {
  if (per == null) return "unknown";
  return Object.entries(per)
    .map(([group, us]) => `${group} ${us.toFixed(1)}`)
    .join(", ");
}
