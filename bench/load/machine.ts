// What machine a run was measured on, recorded beside every figure.

import { readFileSync } from "node:fs";
import { availableParallelism, release, totalmem } from "node:os";
import { beanstalkdPath } from "./processes.ts";

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryMiB: number;
  kernel: string;
  bun: string;
  beanstalkd: string | null;
}

export function describeMachine(): MachineInfo {
  let cpuModel = "unknown";
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const match = /^model name\s*:\s*(.+)$/m.exec(cpuinfo);
  if (match?.[1] !== undefined) cpuModel = match[1].trim();
  const binary = beanstalkdPath();
  let beanstalkd: string | null = null;
  if (binary !== null) {
    const result = Bun.spawnSync([binary, "-v"], { stdout: "pipe", stderr: "pipe" });
    beanstalkd = result.stdout.toString().trim();
  }
  return {
    nproc: availableParallelism(),
    cpuModel,
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    kernel: release(),
    bun: Bun.version,
    beanstalkd,
  };
}
