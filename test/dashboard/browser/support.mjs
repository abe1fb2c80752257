// Node-side helpers for the dashboard's browser tests (run by `node --test`,
// since Playwright misbehaves under Bun): start a real `orq serve` process on
// free ports in a temp dir (stopped by its PID), talk to it over TCP with
// MessagePack frames, launch Debian's chromium through playwright-core, and
// wait for conditions with bounded polling (never a sleep for timing).

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { decode, encode } from "@msgpack/msgpack";

export const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../..");
const bunPath = join(repoRoot, "node_modules/.bin/bun");
const mainPath = join(repoRoot, "src/cli/main.ts");
export const chromiumPath = process.env.ORQ_CHROMIUM ?? "/usr/bin/chromium";
export const chromiumArgs = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** Polls `check` every intervalMs until it returns a truthy value or timeoutMs passes (then throws with `what`). */
export async function waitFor(what, check, { timeoutMs = 20_000, intervalMs = 50 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export class OrqProcess {
  static async start({ config } = {}) {
    const workDir = mkdtempSync(join(tmpdir(), "orq-ui-"));
    const args = [mainPath, "serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--ui-port", "0", "--data-dir", join(workDir, "data"), "--shards", "4", "--log-level", "warn"];
    if (config !== undefined) {
      writeFileSync(join(workDir, "orq-test.json"), JSON.stringify(config));
      args.push("--config", join(workDir, "orq-test.json"));
    }
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORQ_")));
    const child = spawn(bunPath, args, { cwd: workDir, env, stdio: ["ignore", "pipe", "pipe"] });
    const server = new OrqProcess(child, workDir);
    await server.ready;
    return server;
  }

  constructor(child, workDir) {
    this.child = child;
    this.workDir = workDir;
    this.output = "";
    this.exited = new Promise((done) => child.once("exit", (code) => done(code)));
    this.ready = new Promise((done, fail) => {
      const onData = (chunk) => {
        this.output += chunk.toString();
        const ui = /orq dashboard on (\S+)/.exec(this.output);
        const tcp = /orq listening on ([^\s:]+):(\d+)/.exec(this.output);
        const http = /orq http on ([^\s:]+):(\d+)/.exec(this.output);
        if (ui && tcp && http) {
          this.url = ui[1].replace(/\/$/, "");
          this.port = Number(tcp[2]);
          this.httpUrl = `http://${http[1]}:${http[2]}`;
          done();
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", (chunk) => (this.output += chunk.toString()));
      this.exited.then((code) => fail(new Error(`orq exited ${code} before listening:\n${this.output}`)));
    });
  }

  async stop() {
    if (this.child.exitCode === null) process.kill(this.child.pid, "SIGTERM");
    const timer = setTimeout(() => this.child.exitCode === null && process.kill(this.child.pid, "SIGKILL"), 15_000);
    await this.exited;
    clearTimeout(timer);
    rmSync(this.workDir, { recursive: true, force: true });
  }

  /** A TCP client connection, after hello (with `token` when given). */
  async connect(token) {
    const client = await OrqClient.open("127.0.0.1", this.port);
    const hello = await client.call("hello", token === undefined ? { protocol: 1 } : { protocol: 1, token });
    if (!hello.ok) throw new Error(`hello failed: ${JSON.stringify(hello.error)}`);
    return client;
  }
}

/** A minimal protocol client: length-prefixed MessagePack frames, replies matched by id. */
export class OrqClient {
  static open(host, port) {
    return new Promise((done, fail) => {
      const socket = net.connect({ host, port }, () => done(new OrqClient(socket)));
      socket.once("error", fail);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.nextId = 1;
    this.pending = new Map();
    this.buffer = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4) {
        const length = this.buffer.readUInt32BE(0);
        if (this.buffer.length < 4 + length) break;
        const reply = decode(this.buffer.subarray(4, 4 + length));
        this.buffer = this.buffer.subarray(4 + length);
        this.pending.get(reply.id)?.(reply);
        this.pending.delete(reply.id);
      }
    });
  }

  call(op, fields = {}) {
    const id = this.nextId++;
    const body = encode({ id, op, ...fields });
    const frame = Buffer.alloc(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    frame.set(body, 4);
    return new Promise((done) => {
      this.pending.set(id, done);
      this.socket.write(frame);
    });
  }

  /** The op's ok reply, or throws with its error. */
  async ok(op, fields = {}) {
    const reply = await this.call(op, fields);
    if (!reply.ok) throw new Error(`${op}: ${reply.error.code}: ${reply.error.message}`);
    return reply;
  }

  close() {
    this.socket.destroy();
  }
}

export function chromiumAvailable() {
  return existsSync(chromiumPath);
}

export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
}

/**
 * A page that records console errors, page errors and dialogs (an alert()
 * would mean an injected script ran).
 */
export async function watchedPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("dialog", (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { page, problems };
}

/** The page's refresh count (app.js counts each live refresh on body[data-refreshes]). */
export async function refreshes(page) {
  return Number(await page.evaluate(() => document.body.dataset.refreshes));
}

export const payloadOf = (text) => new TextEncoder().encode(text);
