// Goal: `orq serve` settings resolve with precedence flag > env > config file >
// default; every value is range-checked at min-1/min/max/max+1; unknown keys
// and bad auth/namespaces entries are ConfigErrors naming the key. Keys put
// `_max` last, and a renamed key's former spelling is still read, as key,
// flag and env name, and reported once as deprecated.

import { describe, expect, test } from "bun:test";
import { attributeName, ConfigError, resolveConfig, settings, type ConfigSources } from "../../src/cli/config.ts";

function resolve(options: { flags?: Record<string, string>; env?: Record<string, string>; file?: unknown; fileText?: string } = {}) {
  const sources: ConfigSources = {
    flags: options.flags ?? {},
    env: options.env ?? {},
    readFile: (path) =>
      path === "orq.json" && (options.file !== undefined || options.fileText !== undefined)
        ? (options.fileText ?? JSON.stringify(options.file))
        : null,
  };
  return resolveConfig(sources);
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain("\n");
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("ui_port and token roles", () => {
  test("ui_port: default 7422; a port, 0, or off from a flag, the environment or the file", () => {
    expect(resolve().uiPort).toBe(7422);
    expect(resolve({ flags: { uiPort: "0" } }).uiPort).toBe(0);
    expect(resolve({ flags: { uiPort: "off" } }).uiPort).toBeNull();
    expect(resolve({ env: { ORQ_UI_PORT: "off" } }).uiPort).toBeNull();
    expect(resolve({ file: { ui_port: "off" } }).uiPort).toBeNull();
    expect(resolve({ file: { ui_port: 65535 } }).uiPort).toBe(65535);
    expect(errorOf(() => resolve({ file: { ui_port: 65536 } }))).toContain("or off");
    expect(errorOf(() => resolve({ flags: { uiPort: "-1" } }))).toContain("--ui-port");
    expect(errorOf(() => resolve({ flags: { uiPort: "on" } }))).toContain("--ui-port");
  });

  test("a token's role is read or write (the default)", () => {
    const c = resolve({ file: { auth: { tokens: [{ token: "a", namespaces: ["*"] }, { token: "b", namespaces: ["x"], role: "read" }] } } });
    expect(c.tokens.map((t) => t.role)).toEqual(["write", "read"]);
    expect(errorOf(() => resolve({ file: { auth: { tokens: [{ token: "a", namespaces: ["*"], role: "admin" }] } } }))).toContain("tokens[0].role");
  });
});

describe("resolveConfig", () => {
  test("defaults", () => {
    const c = resolve();
    expect(c).toMatchObject({
      host: "127.0.0.1",
      port: 7420,
      httpPort: 7421,
      dataDir: "./data",
      shards: 16,
      durability: "strict",
      idleGc: "full",
      logLevel: "info",
      frameBytesMax: 4 * 1024 * 1024,
      configPath: null,
      deprecatedNames: [],
      tokens: [],
      namespaces: {},
    });
  });

  test("precedence: flag > env > file > default", () => {
    const file = { port: 1000, shards: 4, data_dir: "/file", durability: "relaxed" };
    const env = { ORQ_PORT: "2000", ORQ_SHARDS: "8" };
    const flags = { port: "3000" };
    const c = resolve({ flags, env, file });
    expect(c.port).toBe(3000);
    expect(c.shards).toBe(8);
    expect(c.dataDir).toBe("/file");
    expect(c.durability).toBe("relaxed");
    expect(c.configPath).toBe("orq.json");
  });

  test("port range: -1 and 65536 refused; 0 and 65535 accepted", () => {
    expect(resolve({ flags: { port: "0" } }).port).toBe(0);
    expect(resolve({ flags: { port: "65535" } }).port).toBe(65535);
    expect(errorOf(() => resolve({ flags: { port: "65536" } }))).toContain("--port");
    expect(errorOf(() => resolve({ flags: { port: "-1" } }))).toContain("--port");
    expect(errorOf(() => resolve({ flags: { port: "12ab" } }))).toContain("--port");
    expect(errorOf(() => resolve({ env: { ORQ_HTTP_PORT: "x" } }))).toContain("ORQ_HTTP_PORT");
  });

  test("shards: 1..1024", () => {
    expect(errorOf(() => resolve({ flags: { shards: "0" } }))).toContain("shards");
    expect(resolve({ flags: { shards: "1" } }).shards).toBe(1);
    expect(resolve({ flags: { shards: "1024" } }).shards).toBe(1024);
    expect(errorOf(() => resolve({ flags: { shards: "1025" } }))).toContain("shards");
  });

  test("choices", () => {
    expect(errorOf(() => resolve({ flags: { durability: "sometimes" } }))).toContain("durability");
    expect(errorOf(() => resolve({ env: { ORQ_LOG_LEVEL: "loud" } }))).toContain("ORQ_LOG_LEVEL");
    expect(resolve({ flags: { logLevel: "debug" } }).logLevel).toBe("debug");
    expect(resolve({ env: { ORQ_IDLE_GC: "off" } }).idleGc).toBe("off");
    expect(resolve({ flags: { idleGc: "hint" } }).idleGc).toBe("hint");
    expect(errorOf(() => resolve({ flags: { idleGc: "sometimes" } }))).toContain("idle");
  });

  test("config file: values by snake_case name, JSON types enforced, unknown keys refused", () => {
    const c = resolve({ file: { outcome_retention_ms: 5000, payload_bytes_max: 100, metadata_bytes_max: 10, frame_bytes_max: 131072, log_level: "warn" } });
    expect(c).toMatchObject({ outcomeRetentionMs: 5000, payloadBytesMax: 100, metadataBytesMax: 10, frameBytesMax: 131072, logLevel: "warn" });
    expect(errorOf(() => resolve({ file: { port: "7420" } }))).toContain("port");
    expect(errorOf(() => resolve({ file: { colour: "blue" } }))).toContain('"colour"');
    expect(errorOf(() => resolve({ file: { config: "x.json" } }))).toContain('"config"');
    expect(errorOf(() => resolve({ fileText: "{ nope" }))).toContain("invalid JSON");
    expect(errorOf(() => resolve({ file: [1] }))).toContain("object");
  });

  test("payload must fit in a frame", () => {
    expect(errorOf(() => resolve({ file: { frame_bytes_max: 131072, payload_bytes_max: 131072 } }))).toContain("frame_bytes_max");
  });

  test("auth tokens and namespace quotas", () => {
    const c = resolve({
      file: {
        auth: { tokens: [{ token: "s3cret", namespaces: ["billing", "*"] }] },
        namespaces: { billing: { enqueue_per_minute: 6000 }, free: { enqueue_per_minute: null }, other: {} },
      },
    });
    expect(c.tokens).toEqual([{ token: "s3cret", namespaces: ["billing", "*"], role: "write" }]);
    expect(c.namespaces).toEqual({ billing: { enqueuePerMinute: 6000 }, free: { enqueuePerMinute: null }, other: { enqueuePerMinute: null } });
    expect(errorOf(() => resolve({ file: { auth: { tokens: [{ token: "", namespaces: ["a"] }] } } }))).toContain("auth.tokens[0].token");
    expect(errorOf(() => resolve({ file: { auth: { tokens: [{ token: "t", namespaces: [] }] } } }))).toContain("auth.tokens[0].namespaces");
    expect(errorOf(() => resolve({ file: { auth: { tokens: [{ token: "t", namespaces: ["a"], role: "x" }] } } }))).toContain("auth.tokens[0].role");
    expect(errorOf(() => resolve({ file: { auth: { users: [] } } }))).toContain('"users"');
    expect(errorOf(() => resolve({ file: { namespaces: { billing: { enqueue_per_minute: 0 } } } }))).toContain("billing.enqueue_per_minute");
    expect(errorOf(() => resolve({ file: { namespaces: { billing: { rate: 1 } } } }))).toContain('"rate"');
  });

  test("--store memory and in-memory namespaces: cluster settings and postgres:// are refused with them", () => {
    const memory = resolve({ flags: { store: "memory" }, file: { namespaces: { scratch: { durability: "memory" }, kept: { durability: "disk" } } } });
    expect(memory.store).toBe("memory");
    expect(memory.dataDirGiven).toBe(false);
    expect(memory.namespaces).toEqual({ scratch: { enqueuePerMinute: null, durability: "memory" }, kept: { enqueuePerMinute: null } });
    expect(resolve({ flags: { store: "memory", dataDir: "/x" } }).dataDirGiven).toBe(true);
    expect(errorOf(() => resolve({ flags: { store: "memory", nodeId: "a" } }))).toContain("--node-id");
    expect(errorOf(() => resolve({ flags: { store: "memory" }, env: { ORQ_ADVERTISE: "h:1" } }))).toContain("--advertise");
    expect(errorOf(() => resolve({ flags: { store: "memory" }, file: { shard_lease_ms: 5000 } }))).toContain("--shard-lease-ms");
    expect(errorOf(() => resolve({ flags: { store: "postgres://u@h:1/d" }, file: { namespaces: { scratch: { durability: "memory" } } } }))).toContain(
      "namespaces.scratch.durability",
    );
    expect(errorOf(() => resolve({ file: { namespaces: { scratch: { durability: "ram" } } } }))).toContain("scratch.durability");
    expect(errorOf(() => resolve({ flags: { store: "tape" } }))).toContain("--store");
  });

  test("an explicit config path must exist; the default one is optional", () => {
    expect(errorOf(() => resolve({ flags: { config: "missing.json" } }))).toContain("not found");
    expect(errorOf(() => resolve({ env: { ORQ_CONFIG: "missing.json" } }))).toContain("not found");
    expect(resolve().configPath).toBeNull();
  });
});

describe("key order and former names", () => {
  test("every key puts max last (`payload_bytes_max`), and a setting's name is its key in camelCase (commander's name for the flag)", () => {
    for (const setting of settings) {
      expect(setting.key).not.toMatch(/(^|_)max_/);
      expect(setting.name).toBe(attributeName(setting.key) as typeof setting.name);
      for (const former of setting.formerKeys ?? []) expect(settings.some((other) => other.key === former)).toBe(false);
    }
  });

  test("max_frame_bytes is read as frame_bytes_max from a flag, the environment and the file, each reported once", () => {
    const mib = String(1024 * 1024);
    expect(resolve({ flags: { maxFrameBytes: mib } })).toMatchObject({
      frameBytesMax: 1024 * 1024,
      deprecatedNames: [{ used: "--max-frame-bytes", replacement: "--frame-bytes-max" }],
    });
    expect(resolve({ env: { ORQ_MAX_FRAME_BYTES: mib } })).toMatchObject({
      frameBytesMax: 1024 * 1024,
      deprecatedNames: [{ used: "ORQ_MAX_FRAME_BYTES", replacement: "ORQ_FRAME_BYTES_MAX" }],
    });
    expect(resolve({ file: { max_frame_bytes: 1024 * 1024 } })).toMatchObject({
      frameBytesMax: 1024 * 1024,
      deprecatedNames: [{ used: "max_frame_bytes", replacement: "frame_bytes_max" }],
    });
    // Each source's former spelling is reported, though the flag's value wins.
    const both = resolve({ flags: { maxFrameBytes: mib }, file: { max_frame_bytes: 131072 } });
    expect(both.frameBytesMax).toBe(1024 * 1024);
    expect(both.deprecatedNames.map((d) => d.used)).toEqual(["--max-frame-bytes", "max_frame_bytes"]);
  });

  test("beanstalk_max_job_bytes is read as beanstalk_job_bytes_max, with its warning", () => {
    const c = resolve({ env: { ORQ_BEANSTALK_MAX_JOB_BYTES: "1000" }, file: { beanstalk_max_job_bytes: 2000 } });
    expect(c.beanstalkJobBytesMax).toBe(1000);
    expect(c.deprecatedNames).toEqual([
      { used: "ORQ_BEANSTALK_MAX_JOB_BYTES", replacement: "ORQ_BEANSTALK_JOB_BYTES_MAX" },
      { used: "beanstalk_max_job_bytes", replacement: "beanstalk_job_bytes_max" },
    ]);
  });

  test("a former name's value is checked like the new one's, and the error names the spelling given", () => {
    expect(errorOf(() => resolve({ flags: { maxFrameBytes: String(128 * 1024 - 1) } }))).toContain("--max-frame-bytes");
    expect(errorOf(() => resolve({ file: { max_frame_bytes: "big" } }))).toContain("max_frame_bytes");
  });

  test("both spellings in one source are refused: which was meant is unclear", () => {
    expect(errorOf(() => resolve({ file: { max_frame_bytes: 131072, frame_bytes_max: 131072 } }))).toContain("keep frame_bytes_max");
    expect(errorOf(() => resolve({ flags: { maxFrameBytes: "131072", frameBytesMax: "131072" } }))).toContain("keep --frame-bytes-max");
    expect(errorOf(() => resolve({ env: { ORQ_MAX_FRAME_BYTES: "131072", ORQ_FRAME_BYTES_MAX: "131072" } }))).toContain("keep ORQ_FRAME_BYTES_MAX");
  });
});
