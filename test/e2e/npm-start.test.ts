// Goal: `npm start` (the README's way to run the server) stops cleanly on
// SIGTERM and SIGINT sent to the npm process, as a service manager or a
// container runtime sends them: the server drains and exits 0, nothing is left
// running, and the data dir is free for the next server (issue 14 item 5).
// npm forwards both signals to its child; the start script execs bun, so
// that child is the server itself and not a shell that would swallow them.

import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const haveNpm = Bun.which("npm") !== null;
let workDir = "";

afterEach(() => {
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
  workDir = "";
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!haveNpm)("npm start", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to npm stops the server: it drains, exits, and frees the data dir`, async () => {
      workDir = mkdtempSync(join(tmpdir(), "orq-npm-start-"));
      const dataDir = join(workDir, "data");
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("ORQ_") && !key.startsWith("npm_")) env[key] = value;
      const npm = Bun.spawn(["npm", "start", "--", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--data-dir", dataDir], {
        cwd: repoRoot,
        env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const stderrText = new Response(npm.stderr).text();
      let stdout = "";
      const decoder = new TextDecoder();
      for await (const chunk of npm.stdout) {
        stdout += decoder.decode(chunk, { stream: true });
        if (/orq listening on /.test(stdout)) break;
      }
      expect(stdout).toContain("orq listening on 127.0.0.1:");
      // The server's PID, from the data dir's lock file.
      const serverPid = Number(readFileSync(join(dataDir, "orq.lock"), "utf8").trim());
      expect(serverPid).not.toBe(npm.pid);
      expect(alive(serverPid)).toBe(true);

      npm.kill(signal);
      await npm.exited;
      const logs = await stderrText;
      expect(logs).toContain(`"msg":"shutting down","signal":"${signal}"`);
      expect(logs).toContain(`"msg":"stopped"`);
      expect(alive(serverPid)).toBe(false);
      // The lock is free: a new server on the same data dir starts.
      const next = await ServerProcess.start({ dataDir });
      const nextCode = await next.stop();
      if (nextCode !== 0) console.log("NEXT LOGS", next.logs());
      expect(nextCode).toBe(0);
      await next.cleanup();
      expect(existsSync(dataDir)).toBe(true);
    });
  }
});
