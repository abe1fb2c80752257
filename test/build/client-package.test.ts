// Goal: the client package (clients/typescript/, orq-client) works from
// another project with nothing of the server: `npm pack` makes its tarball, an
// empty project installs it (offline: @msgpack/msgpack, its one dependency,
// comes from a tarball of the copy already installed here), and then
// - the README's TypeScript quick start, compiled by tsc against the
//   package's types, runs under Node against a real server and prints what
//   the README says; the README's other TypeScript blocks type-check;
// - the same quick start runs under Bun;
// - node_modules holds the package and @msgpack/msgpack only: no bun, no
//   lmdb, no native module;
// - TypeScript (nodenext) rejects a wrong use against the package's types;
// - with @opentelemetry/api installed beside it (its optional peer), the
//   package finds it under Node and writes the active span's traceparent
//   into an enqueued item (seen by a recording stand-in server);
// - the committed dist/ is what scripts/build-client.ts builds from
//   src/client now, so it cannot fall behind the one source.
// Skips what needs npm or node when they are missing.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { startRecordingWireServer } from "../support/recording-wire-server.ts";
import { bunPath, ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const packageDir = join(repoRoot, "clients/typescript");
const readme = readFileSync(join(packageDir, "README.md"), "utf8");
const tscPath = join(repoRoot, "node_modules/typescript/bin/tsc");
const nodePath = Bun.which("node");
const haveNpm = Bun.which("npm") !== null;
let server: ServerProcess | null = null;
let workDir = "";
let project = "";

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) stack.push(path);
      else out.push(relative(dir, path));
    }
  }
  return out.sort();
}

function run(cmd: string[], cwd: string): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("npm_")) env[key] = value;
  Object.assign(env, { npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" });
  const result = Bun.spawnSync(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

/** `npm pack` in `dir` into workDir; the tarball's path. */
function pack(dir: string): string {
  const packed = run(["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", workDir, dir], workDir);
  if (packed.code !== 0) throw new Error(`npm pack ${dir} failed:\n${packed.stdout}${packed.stderr}`);
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
  return join(workDir, info!.filename);
}

const quickStart = tsBlocks(readme)[0] ?? "";

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-client-package-"));
  project = join(workDir, "app");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  if (haveNpm) {
    const client = pack(packageDir);
    const msgpack = pack(join(repoRoot, "node_modules/@msgpack/msgpack"));
    const install = run(["npm", "install", "--offline", "--ignore-scripts", client, msgpack], project);
    if (install.code !== 0) throw new Error(`npm install of the packed client failed:\n${install.stdout}${install.stderr}`);
  }
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

describe("the client package", () => {
  test("the committed dist/ is exactly what scripts/build-client.ts builds from the source", () => {
    const fresh = join(workDir, "fresh");
    const build = run([bunPath, join(repoRoot, "scripts/build-client.ts"), "--outdir", fresh], repoRoot);
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    const committed = join(packageDir, "dist");
    expect(filesUnder(committed)).toEqual(filesUnder(fresh));
    const stale = filesUnder(fresh).filter((file) => readFileSync(join(fresh, file), "utf8") !== readFileSync(join(committed, file), "utf8"));
    if (stale.length > 0) throw new Error(`clients/typescript/dist/ is stale (run \`npm run build:client\` and commit): ${stale.join(", ")}`);
    // Committed, not only built here: a clone must hold every file (a .gitignore rule once hid dist/).
    const tracked = run(["git", "ls-files", "clients/typescript/dist"], repoRoot);
    if (tracked.code === 0) expect(tracked.stdout.split("\n").filter((line) => line !== "").map((line) => relative("clients/typescript/dist", line)).sort()).toEqual(filesUnder(fresh));
  }, 60_000);

  test("its manifest declares @msgpack/msgpack as its one dependency and OpenTelemetry's API as an optional peer", () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as Record<string, Record<string, unknown>>;
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["@msgpack/msgpack"]);
    expect(Object.keys(manifest.peerDependencies ?? {})).toEqual(["@opentelemetry/api"]);
    expect(manifest.peerDependenciesMeta).toEqual({ "@opentelemetry/api": { optional: true } });
  });

  test.skipIf(!haveNpm)("installed from its tarball, node_modules holds it and @msgpack/msgpack only: no bun, no lmdb, no native module", () => {
    const installed = readdirSync(join(project, "node_modules")).filter((name) => !name.startsWith("."));
    expect(installed.sort()).toEqual(["@msgpack", "orq-client"]);
    expect(readdirSync(join(project, "node_modules/@msgpack"))).toEqual(["msgpack"]);
    for (const absent of ["bun", "lmdb", "msgpackr-extract"]) expect(existsSync(join(project, "node_modules", absent))).toBe(false);
    expect(filesUnder(join(project, "node_modules")).filter((file) => file.endsWith(".node"))).toEqual([]);
    // Nothing of the server's source tree ships: the built module and its types only.
    expect(filesUnder(join(project, "node_modules/orq-client")).filter((file) => !file.startsWith("dist/"))).toEqual(["README.md", "package.json"]);
  });

  test.skipIf(!haveNpm || nodePath === null)("the README's quick start, compiled by tsc against the package's types, runs under Node against a real server", () => {
    expect(quickStart).toContain("port: 7420");
    const source = quickStart.replace("port: 7420", `port: ${server!.port}`);
    writeFileSync(join(project, "quick-start.ts"), source);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, outDir: "out", types: [] }, files: ["quick-start.ts"] }),
    );
    const tsc = run([process.execPath, tscPath, "-p", "."], project);
    expect(tsc.stdout + tsc.stderr).toBe("");
    const resolved = run([nodePath!, "--input-type=module", "-e", 'console.log(import.meta.resolve("orq-client"))'], project);
    expect(resolved.stdout.trim()).toEndWith("/node_modules/orq-client/dist/index.js");
    // Exiting on its own is part of the check: a client left open would keep the process alive until the test's timeout.
    const result = run([nodePath!, "out/quick-start.js"], project);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("hello\n");
  }, 60_000);

  test.skipIf(!haveNpm)("the same quick start runs under Bun from the installed package", () => {
    writeFileSync(join(project, "bun-quick-start.ts"), quickStart.replace("port: 7420", `port: ${server!.port}`));
    const resolved = run([bunPath, "-e", 'console.log(Bun.resolveSync("orq-client", process.cwd()))'], project);
    expect(resolved.stdout.trim()).toEndWith("/node_modules/orq-client/dist/index.js");
    const result = run([bunPath, "bun-quick-start.ts"], project);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("hello\n");
  }, 60_000);

  test.skipIf(!haveNpm)("TypeScript (nodenext) type-checks the README's blocks and rejects a wrong use against the package's types", () => {
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, types: [] }, files: ["typed.ts"] }),
    );
    const blocks = tsBlocks(readme);
    expect(blocks.length).toBeGreaterThan(1);
    writeFileSync(join(project, "typed.ts"), blocks.join("\n"));
    const ok = run([process.execPath, tscPath, "-p", "."], project);
    expect(ok.stdout + ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const wrong = `import { OrqClient, type Delivery } from "orq-client";
const client = await OrqClient.connect({ port: 7420 });
const deliveries: Delivery[] = await client.dequeue("ns", { topics: [{ topic: "t" }], waitMs: 10 });
const payload: string | undefined = deliveries[0]?.payload;
console.log(payload);
`;
    writeFileSync(join(project, "typed.ts"), wrong);
    const failed = run([process.execPath, tscPath, "-p", "."], project);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toContain("typed.ts(4,7): error TS2322");
  }, 60_000);

  test.skipIf(!haveNpm || nodePath === null)("under Node, with its optional peer @opentelemetry/api installed, enqueue writes the active span's traceparent", async () => {
    const traced = join(workDir, "traced-app");
    mkdirSync(traced);
    writeFileSync(join(traced, "package.json"), JSON.stringify({ name: "traced-app", private: true, type: "module" }));
    const tarballs = [packageDir, "@msgpack/msgpack", "@opentelemetry/api", "@opentelemetry/context-async-hooks"].map((name) =>
      pack(name === packageDir ? name : join(repoRoot, "node_modules", name)),
    );
    const install = run(["npm", "install", "--offline", "--ignore-scripts", ...tarballs], traced);
    expect(install.code).toBe(0);
    const recording = await startRecordingWireServer((request) => (request.op === "enqueue" ? { ids: ["0:1"] } : {}));
    try {
      writeFileSync(
        join(traced, "main.mjs"),
        `import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OrqClient } from "orq-client";
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const client = await OrqClient.connect({ port: Number(process.argv[2]) });
const span = trace.wrapSpanContext({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 });
await context.with(trace.setSpan(context.active(), span), () => client.enqueue("pkg", [{ topic: "traced" }]));
await client.close();
`,
      );
      const child = Bun.spawn([nodePath!, "main.mjs", String(recording.port)], { cwd: traced, stdout: "pipe", stderr: "pipe" });
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const [item] = recording.sent("enqueue")[0]!.items as Array<Record<string, unknown>>;
      expect(item!.trace).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    } finally {
      await recording.stop();
    }
  }, 60_000);
});
