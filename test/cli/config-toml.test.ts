// Goal: a config file named *.toml is read as TOML with the same keys and
// checks as JSON (auth tokens, namespaces, every setting); bad TOML is one
// ConfigError line naming the file; a .json file is still JSON.

import { describe, expect, test } from "bun:test";
import { ConfigError, isTomlPath, resolveConfig } from "../../src/cli/config.ts";

function fromFile(path: string, text: string) {
  return resolveConfig({ flags: { config: path }, env: {}, readFile: (p) => (p === path ? text : null) });
}

describe("TOML config", () => {
  test("settings, auth tokens and namespace quotas", () => {
    const config = fromFile(
      "orq.toml",
      [
        "port = 7500",
        'data_dir = "/var/lib/orq"',
        'durability = "relaxed"',
        "",
        "[[auth.tokens]]",
        'token = "s3cret"',
        'namespaces = ["billing", "*"]',
        "",
        "[namespaces.billing]",
        "enqueue_per_minute = 6000",
      ].join("\n"),
    );
    expect(config).toMatchObject({ port: 7500, dataDir: "/var/lib/orq", durability: "relaxed", configPath: "orq.toml" });
    expect(config.tokens).toEqual([{ token: "s3cret", namespaces: ["billing", "*"], role: "write" }]);
    expect(config.namespaces).toEqual({ billing: { enqueuePerMinute: 6000 } });
  });

  test("the same range checks as JSON: max accepted, max+1 refused, unknown key refused", () => {
    expect(fromFile("a.toml", "shards = 1024").shards).toBe(1024);
    expect(() => fromFile("a.toml", "shards = 1025")).toThrow(ConfigError);
    expect(() => fromFile("a.toml", "prot = 1")).toThrow('unknown key "prot"');
  });

  test("invalid TOML is one line naming the file and the format", () => {
    let message = "";
    try {
      fromFile("bad.TOML", "port = = 1");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain("bad.TOML: invalid TOML");
    expect(message).not.toContain("\n");
  });

  test("only *.toml names are TOML", () => {
    expect(isTomlPath("orq.toml")).toBe(true);
    expect(isTomlPath("orq.json")).toBe(false);
    expect(() => fromFile("orq.json", "port = 1")).toThrow("invalid JSON");
  });
});
