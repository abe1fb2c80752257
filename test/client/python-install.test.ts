// Goal: the Python client installs as a package and the README's Python quick
// start runs against it. A fresh virtualenv (`python3 -m venv
// --system-site-packages`, so Debian's python3-msgpack and python3-setuptools
// are its only dependencies: no package index) runs the README's install line
// with `--no-index --no-build-isolation` added, on a copy of the package's
// files (pip builds in place, and the tree stays clean); then the README's
// Python block runs from another temp dir, so `import orq` can only find the
// installed package, against a real server, and prints what it dequeued.
// Skipped when /usr/bin/python3 lacks msgpack, setuptools or ensurepip.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServerProcess } from "../support/server-process.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const python = "/usr/bin/python3";
const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const installLine = "python3 -m pip install ./clients/python";
// What the package is made of: what pyproject.toml names, and nothing of the tests.
const packageFiles = ["pyproject.toml", "README.md", "orq"];

/** Whether Debian's python3 can make a virtualenv with pip and build the package offline. */
function pythonReady(): boolean {
  if (!existsSync(python)) return false;
  return Bun.spawnSync([python, "-c", "import msgpack, setuptools, wheel, ensurepip, venv"]).exitCode === 0;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string[], cwd: string): Promise<Run> {
  const env = { PATH: process.env.PATH ?? "", HOME: cwd, PYTHONDONTWRITEBYTECODE: "1", PIP_DISABLE_PIP_VERSION_CHECK: "1" };
  const child = Bun.spawn(command, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

function pythonQuickStart(): string {
  const block = /^## Quick start with the Python client\n[\s\S]*?^```python\n([\s\S]*?)^```$/m.exec(readme);
  if (block === null) throw new Error("README.md has no Python quick start block");
  return block[1]!;
}

let server: ServerProcess;
let workDir = "";

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), "orq-pyinstall-"));
  server = await ServerProcess.start();
});

afterAll(async () => {
  await server?.cleanup();
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(!pythonReady())("the Python package", () => {
  test("installs offline in a fresh virtualenv, and the README's quick start runs on it", async () => {
    expect(readme).toContain(`\`\`\`sh\n${installLine}\n\`\`\``);
    const venv = join(workDir, "venv");
    const made = await run([python, "-m", "venv", "--system-site-packages", venv], workDir);
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);

    const clone = join(workDir, "clone");
    mkdirSync(join(clone, "clients/python"), { recursive: true });
    for (const file of packageFiles) cpSync(join(repoRoot, "clients/python", file), join(clone, "clients/python", file), { recursive: true });
    // The README's line, with the virtualenv's interpreter and offline flags: the only changes.
    const install = installLine.replace(/^python3 /, `${venv}/bin/python `).split(" ").concat(["--no-index", "--no-build-isolation"]);
    const installed = await run(install, clone);
    expect(installed.stderr).not.toContain("ERROR");
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain("Successfully installed orq-client-");

    const elsewhere = join(workDir, "app");
    mkdirSync(elsewhere);
    const where = await run([`${venv}/bin/python`, "-c", "import orq, os; print(orq.__file__); print(os.path.exists(os.path.join(os.path.dirname(orq.__file__), 'py.typed')))"], elsewhere);
    expect(where.stdout).toBe(`${venv}/lib/python${await pythonVersion()}/site-packages/orq/__init__.py\nTrue\n`);
    const requires = await run([`${venv}/bin/python`, "-m", "pip", "show", "orq-client"], elsewhere);
    expect(requires.stdout).toMatch(/^Requires: msgpack$/m);

    const quickStart = pythonQuickStart();
    expect(quickStart).toContain('Client.open("127.0.0.1", 7420)');
    writeFileSync(join(elsewhere, "quick_start.py"), quickStart.replace('Client.open("127.0.0.1", 7420)', `Client.open("127.0.0.1", ${server.port})`));
    const ran = await run([`${venv}/bin/python`, "quick_start.py"], elsewhere);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("hello\n");
  }, 180_000);
});

async function pythonVersion(): Promise<string> {
  return (await run([python, "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"], workDir)).stdout.trim();
}
