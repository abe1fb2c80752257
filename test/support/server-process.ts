// Runs a real `orq serve` child process for end-to-end tests:
//   const server = await ServerProcess.start();          // temp data dir, free ports
//   ... connect to server.host:server.port ...
//   await server.restart();                              // same data dir (and port)
//   await server.restart({ signal: "SIGKILL" });         // crash, then start again
//   const code = await server.stop();                    // SIGTERM, resolves the exit code
//   await server.cleanup();                              // stop if running, remove temp dirs
// The process runs in a temp working directory (so no stray orq.json is read)
// with ORQ_* variables removed from its environment.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

const repoRoot = resolve(import.meta.dir, "../..");
export const bunPath = join(repoRoot, "node_modules/.bin/bun");
export const mainPath = join(repoRoot, "src/cli/main.ts");

export interface StartServerOptions {
  /** Data directory; default a fresh temp dir, removed by cleanup(). */
  dataDir?: string;
  /** Extra command-line arguments (e.g. ["--shards", "4"]). */
  args?: string[];
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Written to a temp JSON file and passed as --config. */
  config?: Record<string, unknown>;
  /** The script bun runs in place of src/cli/main.ts (a bench probe that wraps it); given `serve` and the usual arguments. */
  main?: string;
  /** How long to wait for the listening line (default 20 s). */
  startTimeoutMs?: number;
}

export type StopSignal = "SIGTERM" | "SIGINT" | "SIGKILL";

export class ServerProcess {
  host = "127.0.0.1";
  port = 0;
  readonly stdoutLines: string[] = [];
  readonly stderrLines: string[] = [];
  /** Exit code of the current process once it has exited, else null. */
  exitCode: number | null = null;
  private proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  private exited: Promise<number> = Promise.resolve(0);
  private readonly tempDirs: string[] = [];
  private readonly baseArgs: string[];

  private constructor(
    readonly dataDir: string,
    private readonly workDir: string,
    private readonly options: StartServerOptions,
  ) {
    this.baseArgs = ["--host", "127.0.0.1", "--data-dir", dataDir, "--http-port", "0", "--ui-port", "0"];
    if (options.config !== undefined) {
      const configPath = join(workDir, "orq-test.json");
      writeFileSync(configPath, JSON.stringify(options.config));
      this.baseArgs.push("--config", configPath);
    }
  }

  static async start(options: StartServerOptions = {}): Promise<ServerProcess> {
    const workDir = mkdtempSync(join(tmpdir(), "orq-e2e-"));
    const dataDir = options.dataDir ?? join(workDir, "data");
    const server = new ServerProcess(dataDir, workDir, options);
    server.tempDirs.push(workDir);
    await server.spawn(0);
    return server;
  }

  /** The command line of the running process, for messages. */
  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  get running(): boolean {
    return this.proc !== null && this.exitCode === null;
  }

  /** Send a signal and wait for the exit code (SIGKILL after timeoutMs). */
  async stop(signal: StopSignal = "SIGTERM", timeoutMs = 15_000): Promise<number> {
    const proc = this.proc;
    if (proc === null || this.exitCode !== null) return this.exitCode ?? 0;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  /** Send a signal without waiting (e.g. a second SIGTERM). */
  signal(signal: StopSignal): void {
    this.proc?.kill(signal);
  }

  /** Resolves with the exit code when the process exits. */
  waitForExit(): Promise<number> {
    return this.exited;
  }

  kill(): Promise<number> {
    return this.stop("SIGKILL");
  }

  /** Stop (SIGTERM by default, or SIGKILL for a crash) and start again on the same data dir; same port unless samePort is false. */
  async restart(options: { signal?: StopSignal; samePort?: boolean } = {}): Promise<void> {
    await this.stop(options.signal ?? "SIGTERM");
    await this.spawn(options.samePort === false ? 0 : this.port);
  }

  /** Stop if running and remove the temp dirs this helper created. */
  async cleanup(): Promise<void> {
    if (this.running) await this.stop("SIGKILL");
    for (const dir of this.tempDirs) rmSync(dir, { recursive: true, force: true });
  }

  /** The beanstalkd port from the last `orq beanstalk on HOST:PORT` line (with --beanstalk-port), or null. */
  get beanstalkPort(): number | null {
    for (let i = this.stdoutLines.length - 1; i >= 0; i--) {
      const match = /^orq beanstalk on .+:(\d+)$/.exec(this.stdoutLines[i]!);
      if (match !== null) return Number(match[1]);
    }
    return null;
  }

  logs(): string {
    return this.stderrLines.join("\n");
  }

  private async spawn(port: number): Promise<void> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !key.startsWith("ORQ_")) env[key] = value;
    }
    Object.assign(env, this.options.env ?? {});
    const cmd = [bunPath, this.options.main ?? mainPath, "serve", ...this.baseArgs, "--port", String(port), ...(this.options.args ?? [])];
    this.exitCode = null;
    const proc = Bun.spawn(cmd, { cwd: this.workDir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    this.exited = proc.exited.then((code) => {
      this.exitCode = code;
      return code;
    });
    void collectLines(proc.stderr, this.stderrLines, () => {});
    const timeoutMs = this.options.startTimeoutMs ?? 20_000;
    await new Promise<void>((resolveStart, rejectStart) => {
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        rejectStart(new Error(`orq did not print its listening line within ${timeoutMs} ms:\n${this.logs()}`));
      }, timeoutMs);
      void collectLines(proc.stdout, this.stdoutLines, (line) => {
        const match = /^orq listening on (.+):(\d+)$/.exec(line);
        if (match === null) return;
        clearTimeout(timer);
        this.host = match[1]!;
        this.port = Number(match[2]);
        resolveStart();
      });
      void this.exited.then((code) => {
        clearTimeout(timer);
        rejectStart(new Error(`orq exited with ${code} before listening:\n${this.logs()}`));
      });
    });
  }
}

async function collectLines(stream: ReadableStream<Uint8Array>, into: string[], onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let partial = "";
  for await (const chunk of stream) {
    partial += decoder.decode(chunk, { stream: true });
    let newline = partial.indexOf("\n");
    while (newline >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      into.push(line);
      onLine(line);
      newline = partial.indexOf("\n");
    }
  }
  if (partial.length > 0) {
    into.push(partial);
    onLine(partial);
  }
}

/** Convenience: start a server process (see ServerProcess.start). */
export function startServer(options: StartServerOptions = {}): Promise<ServerProcess> {
  return ServerProcess.start(options);
}
