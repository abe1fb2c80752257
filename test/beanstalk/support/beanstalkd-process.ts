// Starts Debian's real `beanstalkd` for side-by-side tests: in memory (no -b)
// on a free loopback port, stopped by its PID. `beanstalkdPath()` is null when
// the binary is absent, so a test can skip with a clear message.

import { existsSync } from "node:fs";
import type { Subprocess } from "bun";

const candidates = ["/usr/bin/beanstalkd", "/usr/sbin/beanstalkd", "/usr/local/bin/beanstalkd"];

export function beanstalkdPath(): string | null {
  return candidates.find((path) => existsSync(path)) ?? null;
}

/** A port nothing listens on right now (the OS picks it; there is a small window before beanstalkd takes it). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export class BeanstalkdProcess {
  private constructor(
    readonly port: number,
    private readonly proc: Subprocess,
  ) {}

  static async start(extraArgs: string[] = []): Promise<BeanstalkdProcess> {
    const path = beanstalkdPath();
    if (path === null) throw new Error("beanstalkd is not installed");
    const port = freePort();
    const proc = Bun.spawn([path, "-l", "127.0.0.1", "-p", String(port), ...extraArgs], { stdout: "ignore", stderr: "pipe" });
    const server = new BeanstalkdProcess(port, proc);
    // Wait until it accepts connections (or exits): a condition, with a generous bound for a loaded machine.
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`beanstalkd exited with ${proc.exitCode}`);
      if (await canConnect(port)) return server;
      if (Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error("beanstalkd did not accept connections within 20 s");
      }
      await Bun.sleep(20);
    }
  }

  get pid(): number {
    return this.proc.pid;
  }

  async stop(): Promise<void> {
    this.proc.kill("SIGKILL");
    await this.proc.exited;
  }
}

async function canConnect(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}
