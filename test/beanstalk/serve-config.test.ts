// Goal: the beanstalkd port's settings resolve like every other (flag > env >
// file > default) with their checks at the limits, and `orq serve` refuses
// to start the unauthenticated port on a non-loopback host while tokens are
// configured, unless --beanstalk-allow-unauthenticated is given.

import { describe, expect, test } from "bun:test";
import { isLoopbackHost } from "../../src/server/loopback-host.ts";
import { ConfigError, resolveConfig } from "../../src/cli/config.ts";
import { bunPath, mainPath } from "../support/server-process.ts";

function resolve(flags: Record<string, string | boolean>, file: unknown = undefined, env: Record<string, string> = {}) {
  return resolveConfig({
    flags: flags as Record<string, string>,
    env,
    readFile: (path) => (path === "orq.json" && file !== undefined ? JSON.stringify(file) : null),
  });
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("beanstalk settings", () => {
  test("defaults: off, namespace default, 65,535 bytes, not allowed unauthenticated", () => {
    const config = resolve({});
    expect([config.beanstalkPort, config.beanstalkNamespace, config.beanstalkJobBytesMax, config.beanstalkAllowUnauthenticated]).toEqual([
      null,
      "default",
      65_535,
      false,
    ]);
  });

  test("port: off, 0, 65535; 65536 and words are refused", () => {
    expect(resolve({ beanstalkPort: "0" }).beanstalkPort).toBe(0);
    expect(resolve({ beanstalkPort: "65535" }).beanstalkPort).toBe(65_535);
    expect(resolve({ beanstalkPort: "off" }).beanstalkPort).toBeNull();
    expect(errorOf(() => resolve({ beanstalkPort: "65536" }))).toContain("beanstalk_port");
    expect(errorOf(() => resolve({ beanstalkPort: "eleven" }))).toContain("beanstalk_port");
    expect(resolve({}, { beanstalk_port: "11300" }).beanstalkPort).toBe(11_300);
    expect(resolve({}, {}, { ORQ_BEANSTALK_PORT: "11301" }).beanstalkPort).toBe(11_301);
  });

  test("max job bytes: 0 and 1 MiB; above, or more than a frame holds, is refused", () => {
    expect(resolve({ beanstalkJobBytesMax: "0" }).beanstalkJobBytesMax).toBe(0);
    expect(resolve({ beanstalkJobBytesMax: String(1024 * 1024) }).beanstalkJobBytesMax).toBe(1024 * 1024);
    expect(errorOf(() => resolve({ beanstalkJobBytesMax: String(1024 * 1024 + 1) }))).toContain("--beanstalk-job-bytes-max");
    expect(errorOf(() => resolve({ beanstalkPort: "0", beanstalkJobBytesMax: String(1024 * 1024), frameBytesMax: String(1024 * 1024) }))).toContain("frame_bytes_max");
    // With the port off the job size does not constrain the frame size.
    expect(resolve({ beanstalkJobBytesMax: String(1024 * 1024), frameBytesMax: String(1024 * 1024) }).frameBytesMax).toBe(1024 * 1024);
  });

  test("allow-unauthenticated: a bare flag, an env word, a JSON boolean", () => {
    expect(resolve({ beanstalkAllowUnauthenticated: true }).beanstalkAllowUnauthenticated).toBe(true);
    expect(resolve({}, {}, { ORQ_BEANSTALK_ALLOW_UNAUTHENTICATED: "false" }).beanstalkAllowUnauthenticated).toBe(false);
    expect(resolve({}, { beanstalk_allow_unauthenticated: true }).beanstalkAllowUnauthenticated).toBe(true);
    expect(errorOf(() => resolve({}, { beanstalk_allow_unauthenticated: "yes" }))).toContain("beanstalk_allow_unauthenticated");
  });

  test("loopback hosts", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["0.0.0.0", "10.0.0.5", "::", "example.com"]) expect(isLoopbackHost(host)).toBe(false);
  });
});

describe("orq serve refuses the unauthenticated port beside tokens on a non-loopback host", () => {
  test("exit 2 with one line naming the flag", async () => {
    const dir = `/tmp/orq-bs-refuse-${process.pid}`;
    await Bun.write(`${dir}/orq.json`, JSON.stringify({ auth: { tokens: [{ token: "s3cret", namespaces: ["*"] }] } }));
    const proc = Bun.spawn([bunPath, mainPath, "serve", "--host", "0.0.0.0", "--port", "0", "--http-port", "0", "--beanstalk-port", "0", "--data-dir", `${dir}/data`], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const code = await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    expect(code).toBe(2);
    expect(stderr).toContain("--beanstalk-allow-unauthenticated");
  });
});
