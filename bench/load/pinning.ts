// CPU pinning for round-trip latency runs. On this machine a round trip whose
// two ends sit on different vCPUs costs 2-3x one whose ends share a vCPU
// (measured earlier: waking an idle vCPU dominates), so latency comparisons pin
// the server and this process to CPU 0 with `taskset`, and say whether they could.

import { availableParallelism } from "node:os";

const PIN_CPU = "0";

export function pinningAvailable(): boolean {
  return Bun.which("taskset") !== null;
}

/** Pins every thread of `pid` to CPU 0; false when taskset is missing or refused. */
export function pin(pid: number): boolean {
  return setAffinity(pid, PIN_CPU);
}

export function unpin(pid: number): boolean {
  return setAffinity(pid, `0-${availableParallelism() - 1}`);
}

function setAffinity(pid: number, cpus: string): boolean {
  if (!pinningAvailable()) return false;
  const result = Bun.spawnSync(["taskset", "-a", "-cp", cpus, String(pid)], { stdout: "ignore", stderr: "pipe" });
  return result.exitCode === 0;
}
