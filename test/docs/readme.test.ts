// Goal: every code block in README.md runs as written (issue 14). Each shell
// line must be one this test knows how to check, so a new README line fails
// here until it is tested; the TypeScript block runs with Bun in a project
// that installed the client package (orq-client) the way the README says.
// Everything runs against real servers on free ports: the only change to a
// command is where it connects
// (ORQ_SERVER / ORQ_PORT / ORQ_HTTP_PORT / ORQ_DATA_DIR in its environment,
// and the quick start's port 7420), and RECEIPT is the receipt the README's
// dequeue printed. npm runs offline (npm_config_offline): the packages are
// installed already. `npm test` is not run from inside the tests; the test
// checks that CI runs exactly it. The Python install line and the Python
// block run in test/client/python-install.test.ts (a fresh virtualenv).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bunPath, ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const haveNpm = Bun.which("npm") !== null;

interface CodeBlock {
  lang: string;
  body: string;
}

function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, body: match[2]! }));
}

const blocks = codeBlocks(readme);
const shellLines = blocks.filter((block) => block.lang === "sh").flatMap((block) => block.body.split("\n").filter((line) => line.trim() !== ""));
const tsBlocks = blocks.filter((block) => block.lang === "ts");
const pythonBlocks = blocks.filter((block) => block.lang === "python");

/** The README's shell lines, each checked below. */
const knownLines = {
  start: "npm install && npm start",
  test: "npm install && npm test",
  install: "npm install /path/to/orq/clients/typescript",
  // Run, with the Python block, by test/client/python-install.test.ts.
  pythonInstall: "python3 -m pip install ./clients/python",
  ping: "npx orq ping",
  enqueue: "npx orq enqueue --ns shop --topic emails --payload 'hello' --priority 1",
  topics: "npx orq topics --ns shop          # counts by state and pauses; also: get, nack, extend, cancel, dead, redrive, stats",
  list: "npx orq list --ns shop --topic emails --state ready   # a topic's items, in the order they will go",
  dequeue: "npx orq dequeue --ns shop --topic emails --wait-ms 5000     # prints each item with its receipt",
  ack: "npx orq ack --ns shop RECEIPT",
  pause: "npx orq pause --ns shop --topic emails --for-ms 600000   # stop deliveries for 10 minutes (or until: npx orq resume)",
} as const;

let server: ServerProcess | null = null;
let workDir = "";

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-readme-"));
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

/** The environment a README command runs in: this machine's, npm offline and quiet, no ORQ_* but the given ones. */
function commandEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("ORQ_") && !key.startsWith("npm_")) env[key] = value;
  }
  return { ...env, npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", ...extra };
}

async function sh(line: string, options: { cwd: string; env: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(["sh", "-c", line], { cwd: options.cwd, env: options.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe("README.md", () => {
  test("its shell lines are exactly the ones the tests run, and it has one TypeScript and one Python block", () => {
    expect(shellLines).toEqual(Object.values(knownLines));
    expect(tsBlocks).toHaveLength(1);
    expect(pythonBlocks).toHaveLength(1);
    expect(blocks.map((block) => block.lang).filter((lang) => !["sh", "ts", "python"].includes(lang))).toEqual([]);
  });

  test.skipIf(!haveNpm)("`npm install && npm start` starts the server, and SIGTERM stops it", async () => {
    const dataDir = join(workDir, "start-data");
    const child = Bun.spawn(["sh", "-c", knownLines.start], {
      cwd: repoRoot,
      env: commandEnv({ ORQ_PORT: "0", ORQ_HTTP_PORT: "0", ORQ_DATA_DIR: dataDir }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(child.stderr).text();
    let stdout = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      stdout += decoder.decode(chunk, { stream: true });
      if (/orq listening on /.test(stdout)) break;
    }
    expect(stdout).toMatch(/orq listening on 127\.0\.0\.1:\d+/);
    const serverPid = Number(readFileSync(join(dataDir, "orq.lock"), "utf8").trim());
    process.kill(serverPid, "SIGTERM");
    expect(await child.exited).toBe(0);
    const logs = await stderr;
    expect(logs).toContain('"msg":"stopped"');
    // package.json's allowScripts covers every dependency's install script (npm 11.16+ warns otherwise).
    expect(logs).not.toContain("install-scripts");
  });

  test("`npm install && npm test` is what CI runs (npm ci, then npm test)", () => {
    const ci = readFileSync(join(repoRoot, ".ci/run"), "utf8");
    expect(ci).toContain("npm ci ");
    expect(ci).toMatch(/^npm test /m);
  });

  test.skipIf(!haveNpm)("the CLI lines run as written with npx, in order, the ack taking the dequeue's receipt", async () => {
    const env = commandEnv({ ORQ_SERVER: `127.0.0.1:${server!.port}` });
    const run = (line: string) => sh(line, { cwd: repoRoot, env });
    const ping = await run(knownLines.ping);
    expect(ping.stderr).toBe("");
    expect(ping.stdout).toMatch(/^pong from orq \d+\.\d+\.\d+ at 127\.0\.0\.1:\d+/);
    const enqueue = await run(knownLines.enqueue);
    expect(enqueue.stdout).toMatch(/^\d+:\d+\n$/);
    const topics = await run(knownLines.topics);
    expect(topics.code).toBe(0);
    expect(topics.stdout).toMatch(/^emails\s+1\s+0\s+0\s+0\s+0\s+-$/m);
    const list = await run(knownLines.list);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(enqueue.stdout.trim());
    const dequeue = await run(knownLines.dequeue);
    expect(dequeue.stdout).toMatch(new RegExp(`^id\\s+${enqueue.stdout.trim()}$`, "m"));
    expect(dequeue.stdout).toMatch(/^payload\s+"hello"$/m);
    const receipt = /receipt\s+(\S+)/.exec(dequeue.stdout)?.[1];
    expect(receipt).toBeDefined();
    const ack = await run(knownLines.ack.replace("RECEIPT", receipt!));
    expect(ack.code).toBe(0);
    expect(ack.stdout).toBe("acked 1\n");
    const pause = await run(knownLines.pause);
    expect(pause.code).toBe(0);
    expect(pause.stdout).toMatch(/^paused emails until \d{4}-/);
    // The resume the README's comment names; the quick start below uses the same topic.
    const resume = await run("npx orq resume --ns shop --topic emails");
    expect(resume.stdout).toBe("resumed emails\n");
  }, 120_000);

  test.skipIf(!haveNpm)("`npm install /path/to/orq/clients/typescript` in a new project, then the TypeScript quick start runs there and exits", async () => {
    const project = join(workDir, "my-project");
    await sh(`mkdir -p ${project}`, { cwd: workDir, env: commandEnv({}) });
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-project", private: true, type: "module" }));
    const install = await sh(knownLines.install.replace("/path/to/orq", repoRoot), { cwd: project, env: commandEnv({}) });
    expect(install.code).toBe(0);
    const quickStart = tsBlocks[0]!.body;
    expect(quickStart).toContain("port: 7420");
    writeFileSync(join(project, "quick-start.ts"), quickStart.replace("port: 7420", `port: ${server!.port}`));
    // Exiting on its own is part of the check: a client left open would keep the process alive until the test's timeout.
    const child = Bun.spawn([bunPath, "quick-start.ts"], { cwd: project, env: commandEnv({}), stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe("hello\n");
  }, 60_000);
});
