// Goal: the client works from another project, under Node and under Bun
// (issue 14). A project that ran `npm install <this repo>` imports "orq":
// Node gets the built ES module (dist-node/index.js) and talks to a real
// server; Bun gets the TypeScript source; TypeScript type-checks a correct
// use and rejects a wrong one against dist-node/types. And the committed
// dist-node/ is what scripts/build-client.ts builds from the source now, so it
// cannot fall behind. Skips what needs npm or node when they are missing.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { bunPath, ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
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

/** The same round trip in every runtime: enqueue, dequeue, ack; prints what came back. */
const roundTrip = `import { OrqClient } from "orq";
const client = await OrqClient.connect({ port: Number(process.argv[2]) });
const [id] = await client.enqueue("pkg", [{ topic: "t", payload: "from " + process.argv[3] }]);
const [d] = await client.dequeue("pkg", { topics: [{ topic: "t" }] });
const { acked } = await client.ack("pkg", [d.receipt]);
console.log(JSON.stringify({ same: d.id === id, bytes: d.payload instanceof Uint8Array, payload: new TextDecoder().decode(d.payload), acked }));
await client.close();
`;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-client-package-"));
  project = join(workDir, "app");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  if (haveNpm) {
    const install = run(["npm", "install", repoRoot], project);
    if (install.code !== 0) throw new Error(`npm install ${repoRoot} failed:\n${install.stdout}${install.stderr}`);
  }
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

describe("the client package", () => {
  test("the committed dist-node/ is exactly what scripts/build-client.ts builds from the source", () => {
    const fresh = join(workDir, "fresh");
    const build = run([bunPath, join(repoRoot, "scripts/build-client.ts"), "--outdir", fresh], repoRoot);
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    const committed = join(repoRoot, "dist-node");
    expect(filesUnder(committed)).toEqual(filesUnder(fresh));
    const stale = filesUnder(fresh).filter((file) => readFileSync(join(fresh, file), "utf8") !== readFileSync(join(committed, file), "utf8"));
    if (stale.length > 0) throw new Error(`dist-node/ is stale (run \`npm run build:client\` and commit): ${stale.join(", ")}`);
  }, 60_000);

  test.skipIf(!haveNpm || nodePath === null)("under Node, `import ... from \"orq\"` loads dist-node/index.js and talks to a real server", () => {
    writeFileSync(join(project, "node-main.mjs"), roundTrip);
    const resolved = run([nodePath!, "--input-type=module", "-e", 'console.log(import.meta.resolve("orq"))'], project);
    expect(resolved.stdout.trim()).toEndWith("/dist-node/index.js");
    const result = run([nodePath!, "node-main.mjs", String(server!.port), "node"], project);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ same: true, bytes: true, payload: "from node", acked: 1 });
  });

  test.skipIf(!haveNpm)("under Bun, `import ... from \"orq\"` loads the TypeScript source and talks to a real server", () => {
    writeFileSync(join(project, "bun-main.ts"), roundTrip);
    const resolved = run([bunPath, "-e", 'console.log(Bun.resolveSync("orq", process.cwd()))'], project);
    expect(resolved.stdout.trim()).toEndWith("/src/client/index.ts");
    const result = run([bunPath, "bun-main.ts", String(server!.port), "bun"], project);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ same: true, bytes: true, payload: "from bun", acked: 1 });
  });

  test.skipIf(!haveNpm)("TypeScript (nodenext) type-checks a correct use and rejects a wrong one against the package's types", () => {
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, types: [] }, files: ["typed.ts"] }),
    );
    const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
    const correct = `import { OrqClient, OrqError, type Delivery } from "orq";
const client: OrqClient = await OrqClient.connect({ port: 7420, helloRequired: true });
const deliveries: Delivery[] = await client.dequeue("ns", { topics: [{ topic: "t" }], waitMs: 10 });
const payload: Uint8Array | undefined = deliveries[0]?.payload;
console.log(payload, OrqError.name);
await client.close();
`;
    writeFileSync(join(project, "typed.ts"), correct);
    const ok = run([process.execPath, tsc, "-p", "."], project);
    expect(ok.stdout + ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    writeFileSync(join(project, "typed.ts"), correct.replace("const payload: Uint8Array | undefined", "const payload: string | undefined"));
    const wrong = run([process.execPath, tsc, "-p", "."], project);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toContain("typed.ts(4,7): error TS2322");
  }, 60_000);
});
