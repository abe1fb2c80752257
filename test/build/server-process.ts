// Starts an orq server process (the standalone binary, or any command) and
// waits for its `orq listening on HOST:PORT` line; keeps everything it prints
// so a failing test can show it. Stops it with SIGTERM and reports the exit code.

import type { Subprocess } from "bun";

const listeningLine = /orq listening on (\S+):(\d+)/;
/** How long a server may take to print its listening line before the test gives up. */
const startTimeoutMs = 20_000;

export interface ServerProcess {
  host: string;
  port: number;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

export async function startServerProcess(command: string[], options: { cwd: string; env: Record<string, string> }): Promise<ServerProcess> {
  const child: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(command, {
    cwd: options.cwd,
    env: options.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  let onText: () => void = () => {};
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      onText();
    }
  };
  void pump(child.stdout);
  void pump(child.stderr);

  const address = await new Promise<{ host: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no listening line within ${startTimeoutMs} ms:\n${text}`));
    }, startTimeoutMs);
    const check = () => {
      const match = listeningLine.exec(text);
      if (match !== null) {
        clearTimeout(timer);
        resolve({ host: match[1] ?? "127.0.0.1", port: Number(match[2]) });
      }
    };
    onText = check;
    void child.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code} before listening:\n${text}`));
    });
    check();
  });
  return {
    ...address,
    output: () => text,
    async stop() {
      child.kill("SIGTERM");
      return child.exited;
    },
  };
}

/** Runs a command to completion and returns its exit code and combined output. */
export async function runToExit(command: string[], options: { cwd: string; env: Record<string, string> }): Promise<{ code: number; output: string }> {
  const child = Bun.spawn(command, { ...options, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, output: stdout + stderr };
}
