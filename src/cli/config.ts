// `orq serve` settings: every flag, its environment variable, its config-file
// key (the flag's snake_case name) and its default, as one table. Precedence:
// flag > environment > config file > default. A bad value or an unknown key is
// a ConfigError whose one-line message names the key; the CLI prints it and
// exits 2. The file is JSON, or TOML when its name ends in .toml. No I/O here except reading the config file through `readFile`.
//
// Keys name their unit last and a bound's `_max` after it (`payload_bytes_max`,
// as limits.ts names them). A key renamed to that order keeps its former
// spelling as an alias in all three places (config key, hidden flag, env
// variable): it is still read, and each former spelling used is reported once
// in `deprecatedNames`, which the server logs as a warning at start.

import type { TokenGrant } from "../server/auth.ts";
import type { LogLevel } from "../server/logger.ts";
import type { Durability } from "../storage/store.ts";
import { checkLimitRelations, clusterLimits, defaultLimits, itemEnvelopeBytes, type Limits, recentValues, shardsMax } from "../limits.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ServeConfig {
  host: string;
  port: number;
  httpPort: number;
  /** The web dashboard's port (0 picks a free one); null when `off`. */
  uiPort: number | null;
  dataDir: string;
  shards: number;
  /** Whether --shards (or its env variable or config key) was given: cluster mode then checks it against the database. */
  shardsGiven: boolean;
  /** `lmdb` (the data dir), `memory` (nothing on disk: a restart starts empty) or a postgres:// URL (cluster mode, docs/CLUSTER.md). */
  store: string;
  /** Whether --data-dir (or its env variable or config key) was given: --store memory then warns that it is left untouched. */
  dataDirGiven: boolean;
  /** Cluster mode: this node's id; "" means host:port. */
  nodeId: string;
  /** Cluster mode: the host:port clients reach this node at; "" means host:port. */
  advertise: string;
  shardLeaseMs: number;
  /** The config file read, or null when none was (the default path is optional). */
  configPath: string | null;
  durability: Durability;
  /** What the server does with garbage after a burst of work (src/server/idle-gc.ts). */
  idleGc: "off" | "hint" | "full";
  /** MiB of the recently committed items' delivery parts the LMDB store keeps in memory (src/storage/lmdb/recent-values.ts); 0 for none. */
  recentValuesMb: number;
  logLevel: LogLevel;
  frameBytesMax: number;
  outcomeRetentionMs: number;
  payloadBytesMax: number;
  resultBytesMax: number;
  metadataBytesMax: number;
  liveItemsMax: number;
  topicsMax: number;
  namespacesMax: number;
  tokens: TokenGrant[];
  namespaces: Record<string, NamespaceConfig>;
  /** The beanstalkd-compatible port (src/beanstalk/), or null when off; 0 picks a free one. */
  beanstalkPort: number | null;
  /** The namespace whose topics are the beanstalkd port's tubes. */
  beanstalkNamespace: string;
  /** Largest job body the beanstalkd port accepts (beanstalkd's -z). */
  beanstalkJobBytesMax: number;
  /** Serve the beanstalkd port on a non-loopback host although tokens are configured. */
  beanstalkAllowUnauthenticated: boolean;
  /** Settings given under a former spelling (read all the same), each once: the server warns of them at start. */
  deprecatedNames: DeprecatedName[];
}

/** One namespace's entry under `namespaces` in the config file. */
export interface NamespaceConfig {
  enqueuePerMinute: number | null;
  /** Present when `"memory"`: the namespace is never written to disk (docs/OPERATIONS.md); absent (`"disk"`, the default): as the store keeps it. */
  durability?: "memory";
}

/** A setting given under its former spelling, and the spelling that replaces it (both as given: key, flag or env name). */
export interface DeprecatedName {
  used: string;
  replacement: string;
}

type SettingName = Exclude<keyof ServeConfig, "configPath" | "tokens" | "namespaces" | "shardsGiven" | "dataDirGiven" | "deprecatedNames">;

/** beanstalk_port's value when the port is off (its default). */
const portOff = "off";

interface Setting {
  name: SettingName;
  /** Config-file key and the base of the flag and env names; `name` is its camelCase (commander's name for the flag's value). */
  key: string;
  /** Former spellings of `key`, still read (as key, hidden flag and env name) with a warning. */
  formerKeys?: readonly string[];
  description: string;
  defaultValue: string | number | boolean;
  /** `flag`: a boolean, true when the flag is given without a value; `portOrOff`: a port number, or null for `off`. */
  kind: "string" | "int" | "choice" | "flag" | "portOrOff";
  min?: number;
  max?: number;
  choices?: readonly string[];
}

const mib = 1024 * 1024;

/** Every setting, in the order `--help` lists them. */
export const settings: readonly Setting[] = [
  { name: "host", key: "host", description: "address to listen on", defaultValue: "127.0.0.1", kind: "string" },
  { name: "port", key: "port", description: "TCP port of the protocol (0 picks a free one)", defaultValue: 7420, kind: "int", min: 0, max: 65535 },
  { name: "httpPort", key: "http_port", description: "HTTP port for /healthz, /readyz, /metrics (0 picks a free one)", defaultValue: 7421, kind: "int", min: 0, max: 65535 },
  { name: "uiPort", key: "ui_port", description: "HTTP port of the web dashboard, on --host (0 picks a free one; off disables it)", defaultValue: 7422, kind: "portOrOff", min: 0, max: 65535 },
  { name: "dataDir", key: "data_dir", description: "directory of the LMDB data files", defaultValue: "./data", kind: "string" },
  { name: "shards", key: "shards", description: "shard count (fixed when the data dir is created)", defaultValue: 16, kind: "int", min: 1, max: shardsMax },
  { name: "store", key: "store", description: "lmdb (the data dir), memory (nothing on disk; a restart starts empty) or postgres://USER[:PASSWORD]@HOST:PORT/DATABASE for cluster mode", defaultValue: "lmdb", kind: "string" },
  { name: "nodeId", key: "node_id", description: "cluster mode: this node's id, unique among live nodes (default host:port)", defaultValue: "", kind: "string" },
  { name: "advertise", key: "advertise", description: "cluster mode: host:port clients reach this node at (default host:port)", defaultValue: "", kind: "string" },
  {
    name: "shardLeaseMs",
    key: "shard_lease_ms",
    description: "cluster mode: how long a node owns a shard after each renewal",
    defaultValue: clusterLimits.shardLeaseMsDefault,
    kind: "int",
    min: clusterLimits.shardLeaseMsMin,
    max: clusterLimits.shardLeaseMsMax,
  },
  { name: "durability", key: "durability", description: "strict = fsync before replying; relaxed = survive a process crash, not power loss", defaultValue: "strict", kind: "choice", choices: ["strict", "relaxed"] },
  { name: "idleGc", key: "idle_gc", description: "after a burst: off (also turns off the heap governor, docs/OPERATIONS.md); hint = ask for a concurrent collection after 1 s idle; full = also a blocking full collection after 11 s with no request at all", defaultValue: "full", kind: "choice", choices: ["off", "hint", "full"] },
  { name: "recentValuesMb", key: "recent_values_mb", description: "MiB of the recently committed items' payloads (with metadata, enqueue instant and trace) kept in memory, so that delivering them skips the LMDB read (0 turns it off)", defaultValue: recentValues.ringBytes / mib, kind: "int", min: 0, max: 16384 },
  { name: "logLevel", key: "log_level", description: "least severe log level written to stderr", defaultValue: "info", kind: "choice", choices: ["debug", "info", "warn", "error"] },
  { name: "frameBytesMax", key: "frame_bytes_max", formerKeys: ["max_frame_bytes"], description: "largest frame accepted", defaultValue: defaultLimits.frameBytesMax, kind: "int", min: 128 * 1024, max: 64 * mib },
  { name: "outcomeRetentionMs", key: "outcome_retention_ms", description: "how long ended items' outcomes are kept", defaultValue: defaultLimits.outcomeRetentionMs, kind: "int", min: 1000, max: 30 * 24 * 3600 * 1000 },
  { name: "payloadBytesMax", key: "payload_bytes_max", description: "largest item payload", defaultValue: defaultLimits.payloadBytesMax, kind: "int", min: 0, max: mib },
  { name: "metadataBytesMax", key: "metadata_bytes_max", description: "largest item metadata", defaultValue: defaultLimits.metadataBytesMax, kind: "int", min: 0, max: 64 * 1024 },
  { name: "resultBytesMax", key: "result_bytes_max", description: "largest ack result (kept for outcome_retention_ms)", defaultValue: defaultLimits.resultBytesMax, kind: "int", min: 0, max: mib },
  { name: "liveItemsMax", key: "live_items_max", description: "live items the server holds at most (every state); past it enqueue is TOO_LARGE", defaultValue: defaultLimits.liveItemsMax, kind: "int", min: 1, max: 2 ** 32 },
  { name: "topicsMax", key: "topics_max", description: "topics over all namespaces at most; a new one past it is TOO_LARGE", defaultValue: defaultLimits.topicsMax, kind: "int", min: 1, max: 2 ** 32 },
  { name: "namespacesMax", key: "namespaces_max", description: "namespaces at most (kept until restart); a new one past it is TOO_LARGE", defaultValue: defaultLimits.namespacesMax, kind: "int", min: 1, max: 2 ** 32 },
  { name: "beanstalkPort", key: "beanstalk_port", description: "TCP port speaking beanstalkd's protocol (0 picks a free one; off disables it)", defaultValue: portOff, kind: "string" },
  { name: "beanstalkNamespace", key: "beanstalk_namespace", description: "namespace whose topics are the beanstalkd port's tubes", defaultValue: "default", kind: "string" },
  { name: "beanstalkJobBytesMax", key: "beanstalk_job_bytes_max", formerKeys: ["beanstalk_max_job_bytes"], description: "largest job body on the beanstalkd port (beanstalkd's -z)", defaultValue: defaultLimits.beanstalkJobBytesMax, kind: "int", min: 0, max: mib },
  { name: "beanstalkAllowUnauthenticated", key: "beanstalk_allow_unauthenticated", description: "serve the unauthenticated beanstalkd port on a non-loopback host although tokens are configured", defaultValue: false, kind: "flag" },
];

export function flagName(key: string): string {
  return `--${key.replaceAll("_", "-")}`;
}

export function envName(key: string): string {
  return `ORQ_${key.toUpperCase()}`;
}

/** The name commander gives a flag's value: the key in camelCase (`frame_bytes_max` → `frameBytesMax`). */
export function attributeName(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export interface ConfigSources {
  /** Flag values as commander parsed them (strings), by setting name; `config` for --config. */
  flags: Record<string, string | undefined>;
  env: Record<string, string | undefined>;
  /** Reads a file; returns null when it does not exist. */
  readFile(path: string): string | null;
}

export const defaultConfigPath = "orq.json";

export function resolveConfig(sources: ConfigSources): ServeConfig {
  const explicitPath = sources.flags.config ?? sources.env.ORQ_CONFIG;
  const configPath = explicitPath ?? defaultConfigPath;
  const text = sources.readFile(configPath);
  if (text === null && explicitPath !== undefined) throw new ConfigError(`config file ${configPath}: not found`);
  const file = text === null ? {} : parseFile(configPath, text);

  const resolved: Record<string, string | number | boolean | null> = {};
  const deprecatedNames: DeprecatedName[] = [];
  for (const setting of settings) {
    const flag = givenAs(setting, (key) => sources.flags[attributeName(key)], flagName, deprecatedNames);
    const env = givenAs(setting, (key) => sources.env[envName(key)], envName, deprecatedNames);
    const inFile = givenAs(setting, (key) => (Object.hasOwn(file, key) ? file[key] : undefined), (key) => key, deprecatedNames);
    // Flag values are strings, or `true` for a flag given bare; env values are strings.
    if (flag !== null) resolved[setting.name] = parseText(setting, flag.value as string | boolean, flag.name);
    else if (env !== null) resolved[setting.name] = parseText(setting, env.value as string, env.name);
    else if (inFile !== null) resolved[setting.name] = checkJson(setting, inFile.value, `${configPath}: ${inFile.name}`);
    else resolved[setting.name] = setting.defaultValue;
  }
  const config = resolved as unknown as ServeConfig;
  config.deprecatedNames = deprecatedNames;
  const given = (key: string): boolean => sources.flags[attributeName(key)] !== undefined || sources.env[envName(key)] !== undefined || Object.hasOwn(file, key);
  config.shardsGiven = given("shards");
  config.dataDirGiven = given("data_dir");
  if (config.store !== "lmdb" && config.store !== "memory" && !/^postgres(ql)?:\/\//.test(config.store)) {
    throw new ConfigError(`--store: "${config.store}" is neither lmdb, memory nor a postgres:// URL`);
  }
  config.configPath = text === null ? null : configPath;
  config.tokens = parseAuth(configPath, file.auth);
  config.namespaces = parseNamespaces(configPath, file.namespaces);
  refuseMemoryWithCluster(config, given);
  if (config.payloadBytesMax + config.metadataBytesMax + itemEnvelopeBytes > config.frameBytesMax) {
    throw new ConfigError(`frame_bytes_max: ${config.frameBytesMax} cannot hold one item of payload_bytes_max + metadata_bytes_max`);
  }
  config.beanstalkPort = parsePortOrOff(resolved.beanstalkPort as string);
  if (Buffer.byteLength(config.beanstalkNamespace) > defaultLimits.namespaceBytesMax) {
    throw new ConfigError(`beanstalk_namespace: longer than ${defaultLimits.namespaceBytesMax} bytes`);
  }
  // Only with the port on: a MessagePack client must be able to read back any job put through it.
  if (config.beanstalkPort !== null && config.beanstalkJobBytesMax + config.metadataBytesMax + itemEnvelopeBytes > config.frameBytesMax) {
    throw new ConfigError(`frame_bytes_max: ${config.frameBytesMax} cannot hold one job of beanstalk_job_bytes_max (a MessagePack client reads it)`);
  }
  try {
    checkLimitRelations(limitsOf(config));
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  return config;
}

/** The limits a server runs with: the defaults, with the configurable ones from `config`. */
export function limitsOf(config: ServeConfig): Limits {
  return {
    ...defaultLimits,
    frameBytesMax: config.frameBytesMax,
    payloadBytesMax: config.payloadBytesMax,
    metadataBytesMax: config.metadataBytesMax,
    resultBytesMax: config.resultBytesMax,
    liveItemsMax: config.liveItemsMax,
    topicsMax: config.topicsMax,
    namespacesMax: config.namespacesMax,
    outcomeRetentionMs: config.outcomeRetentionMs,
    beanstalkJobBytesMax: config.beanstalkJobBytesMax,
  };
}

/**
 * A setting's value in one source (flags, environment or file), read under
 * its key or else a former spelling (then noted in `deprecated`, once per
 * spelling), with the name it was given under; null when absent. Both
 * spellings in one source is an error: which one was meant is unclear.
 */
function givenAs(
  setting: Setting,
  lookup: (key: string) => unknown,
  nameOf: (key: string) => string,
  deprecated: DeprecatedName[],
): { value: unknown; name: string } | null {
  const current = lookup(setting.key);
  for (const former of setting.formerKeys ?? []) {
    const value = lookup(former);
    if (value === undefined) continue;
    const used = nameOf(former);
    const replacement = nameOf(setting.key);
    if (current !== undefined) throw new ConfigError(`${used} and ${replacement} are both given: ${used} is the former name of ${replacement}; keep ${replacement}`);
    if (!deprecated.some((d) => d.used === used)) deprecated.push({ used, replacement });
    return { value, name: used };
  }
  return current === undefined ? null : { value: current, name: nameOf(setting.key) };
}

function parsePortOrOff(value: string): number | null {
  if (value === portOff) return null;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : -1;
  if (port < 0 || port > 65535) throw new ConfigError(`beanstalk_port: "${value}" is not a port (0 to 65535) or ${portOff}`);
  return port;
}

/** A config file whose name ends in .toml is TOML (Bun's parser); any other is JSON. Same keys either way. */
export function isTomlPath(path: string): boolean {
  return path.toLowerCase().endsWith(".toml");
}

function parseFile(path: string, text: string): Record<string, unknown> {
  const format = isTomlPath(path) ? "TOML" : "JSON";
  let value: unknown;
  try {
    value = format === "TOML" ? Bun.TOML.parse(text) : JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path}: invalid ${format} (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${path}: must hold a ${format === "TOML" ? "TOML table" : "JSON object"}`);
  }
  const known = new Set([...settings.flatMap((s) => [s.key, ...(s.formerKeys ?? [])]), "auth", "namespaces"]);
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new ConfigError(`config file ${path}: unknown key "${key}"`);
  }
  return value as Record<string, unknown>;
}

function describe(setting: Setting): string {
  if (setting.kind === "int") return `an integer from ${setting.min} to ${setting.max}`;
  if (setting.kind === "choice") return `one of ${setting.choices!.join(", ")}`;
  if (setting.kind === "flag") return "true or false";
  if (setting.kind === "portOrOff") return `a port from ${setting.min} to ${setting.max}, or off`;
  return "a non-empty string";
}

function parseText(setting: Setting, raw: string | boolean, source: string): string | number | boolean | null {
  // commander hands a flag given without a value over as `true`.
  if (setting.kind === "flag") {
    if (raw === true || raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw new ConfigError(`${source} (${setting.key}): "${String(raw)}" is not ${describe(setting)}`);
  }
  if (typeof raw !== "string") throw new ConfigError(`${source} (${setting.key}): needs a value`);
  if (setting.kind === "portOrOff" && raw.trim() === "off") return null;
  if (setting.kind === "int" || setting.kind === "portOrOff") {
    const trimmed = raw.trim();
    if (!/^-?\d+$/.test(trimmed)) throw new ConfigError(`${source} (${setting.key}): "${raw}" is not ${describe(setting)}`);
    return checkJson(setting, Number(trimmed), source);
  }
  return checkJson(setting, raw, source);
}

function checkJson(setting: Setting, value: unknown, source: string): string | number | boolean | null {
  const bad = (): never => {
    throw new ConfigError(`${source}: ${JSON.stringify(value)} is not ${describe(setting)}`);
  };
  if (setting.kind === "flag") {
    if (typeof value !== "boolean") bad();
    return value as boolean;
  }
  if (setting.kind === "portOrOff" && value === "off") return null;
  if (setting.kind === "int" || setting.kind === "portOrOff") {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < setting.min! || value > setting.max!) bad();
    return value as number;
  }
  if (typeof value !== "string" || value.length === 0) bad();
  if (setting.kind === "choice" && !setting.choices!.includes(value as string)) bad();
  return value as string;
}

function parseAuth(path: string, value: unknown): TokenGrant[] {
  if (value === undefined) return [];
  const where = `config file ${path}: auth`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError(`${where}: must be an object`);
  for (const key of Object.keys(value)) if (key !== "tokens") throw new ConfigError(`${where}: unknown key "${key}"`);
  const tokens = (value as { tokens?: unknown }).tokens;
  if (tokens === undefined) return [];
  if (!Array.isArray(tokens)) throw new ConfigError(`${where}.tokens: must be an array`);
  return tokens.map((entry: unknown, i: number): TokenGrant => {
    const at = `${where}.tokens[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new ConfigError(`${at}: must be an object`);
    for (const key of Object.keys(entry)) {
      if (key !== "token" && key !== "namespaces" && key !== "role") throw new ConfigError(`${at}: unknown key "${key}"`);
    }
    const { token, namespaces, role } = entry as { token?: unknown; namespaces?: unknown; role?: unknown };
    if (role !== undefined && role !== "read" && role !== "write") throw new ConfigError(`${at}.role: must be "read" or "write"`);
    if (typeof token !== "string" || token.length === 0) throw new ConfigError(`${at}.token: must be a non-empty string`);
    if (!Array.isArray(namespaces) || namespaces.length === 0) throw new ConfigError(`${at}.namespaces: must be a non-empty array`);
    namespaces.forEach((ns: unknown, j: number) => {
      if (typeof ns !== "string" || ns.length === 0 || Buffer.byteLength(ns) > defaultLimits.namespaceBytesMax) {
        throw new ConfigError(`${at}.namespaces[${j}]: must be a namespace name (1..${defaultLimits.namespaceBytesMax} bytes) or "*"`);
      }
    });
    return { token, namespaces: namespaces as string[], role: role ?? "write" };
  });
}

/**
 * Memory and cluster mode exclude each other (docs/OPERATIONS.md): a cluster
 * flag with --store memory, or a namespace of durability memory with a
 * postgres:// store, is refused at start.
 */
function refuseMemoryWithCluster(config: ServeConfig, given: (key: string) => boolean): void {
  if (config.store === "memory") {
    for (const key of ["node_id", "advertise", "shard_lease_ms"]) {
      if (given(key)) throw new ConfigError(`${flagName(key)}: a cluster setting, and --store memory is a single node; drop one of them`);
    }
  }
  const inMemory = Object.keys(config.namespaces).find((ns) => config.namespaces[ns]?.durability === "memory");
  if (inMemory !== undefined && config.store !== "lmdb" && config.store !== "memory") {
    throw new ConfigError(`namespaces.${inMemory}.durability: "memory" is not available in cluster mode (--store postgres://)`);
  }
}

function parseNamespaces(path: string, value: unknown): Record<string, NamespaceConfig> {
  const result: Record<string, NamespaceConfig> = {};
  if (value === undefined) return result;
  const where = `config file ${path}: namespaces`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError(`${where}: must be an object`);
  for (const [ns, entry] of Object.entries(value)) {
    const at = `${where}.${ns}`;
    if (ns.length === 0 || Buffer.byteLength(ns) > defaultLimits.namespaceBytesMax) throw new ConfigError(`${at}: bad namespace name`);
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new ConfigError(`${at}: must be an object`);
    for (const key of Object.keys(entry)) {
      if (key !== "enqueue_per_minute" && key !== "durability") throw new ConfigError(`${at}: unknown key "${key}"`);
    }
    const durability = (entry as { durability?: unknown }).durability ?? "disk";
    if (durability !== "disk" && durability !== "memory") throw new ConfigError(`${at}.durability: must be "disk" or "memory"`);
    const rate = (entry as { enqueue_per_minute?: unknown }).enqueue_per_minute;
    if (rate !== undefined && rate !== null && (typeof rate !== "number" || !Number.isSafeInteger(rate) || rate < 1)) {
      throw new ConfigError(`${at}.enqueue_per_minute: must be a positive integer or null`);
    }
    result[ns] = { enqueuePerMinute: (rate as number | null | undefined) ?? null, ...(durability === "memory" ? { durability } : {}) };
  }
  return result;
}
