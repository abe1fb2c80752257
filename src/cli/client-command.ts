// What every client subcommand of the CLI (`orq enqueue`, `orq get`, ...)
// shares: the common flags (--server, --ns, --token, --json, --timeout-ms),
// the connection (made only after the command's own input parsed, so a usage
// error never waits for a server), printing the result, and the exit codes:
//   0 done; 1 an error from the server or the connection, printed to stderr as
//   `error CODE: message`; 2 bad usage; 3 done, but some receipts were stale or
//   some ids missing (so scripts notice).
// The token is read from --token or ORQ_TOKEN and never printed.

import { Command, InvalidArgumentError, Option } from "commander";
import { OrqClient } from "../client/client.ts";
import { OrqClusterClient } from "../client/cluster-client.ts";
import { OrqError } from "../client/orq-error.ts";

const defaultServer = "127.0.0.1:7420";
const defaultNamespace = "default";
/** A CLI call should fail fast rather than hang a terminal (10 s); long-poll waits come on top. */
const requestTimeoutMsDefault = 10_000;

export const exitCodes = { ok: 0, error: 1, usage: 2, partial: 3 } as const;

/** Bad command-line input found by a command itself (commander finds the rest). */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface CommandResult {
  /** Printed with --json, as one JSON document. */
  json: unknown;
  /** Printed otherwise (a trailing newline is added when missing); may be empty. */
  text: string;
  /** A human note for stderr (not printed with --json), e.g. "no items". */
  note?: string;
  exitCode?: number;
}

export interface Session {
  ns: string;
  json: boolean;
  /** True when --ns was given (or ORQ_NS set), not defaulted: `stats` then shows every namespace. */
  nsExplicit: boolean;
  /** Connects on first use. `helloRequired: false` (ping) stays connected when the hello is refused for want of a token. */
  client(options?: { helloRequired?: boolean }): Promise<OrqClient>;
  /**
   * Connects on first use; routes by shard when the server is a cluster node
   * (docs/CLUSTER.md) and is the plain client otherwise.
   */
  cluster(): Promise<OrqClusterClient>;
}

export interface ServerAddress {
  host: string;
  port: number;
}

/** HOST:PORT, [IPv6]:PORT, HOST (port 7420) or :PORT (host 127.0.0.1). */
export function parseServerAddress(text: string): ServerAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:]*)(?::(\d+))?$/.exec(text);
  const match = bracketed ?? plain;
  if (match === null) throw new UsageError(`--server: "${text}" is not HOST:PORT`);
  const host = match[1] === "" || match[1] === undefined ? "127.0.0.1" : match[1];
  const port = match[2] === undefined ? 7420 : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--server: port ${match[2]} is not 1..65535`);
  return { host, port };
}

/** An argParser for integer flags from min to max. */
export function intArg(min: number, max: number): (value: string) => number {
  return (value) => {
    const trimmed = value.trim();
    const n = Number(trimmed);
    if (!/^-?\d+$/.test(trimmed) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}.`);
    }
    return n;
  };
}

/** An argParser for flags that take a JSON object (--requires, --capabilities). */
export function jsonObjectArg(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`not JSON (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError("must be a JSON object.");
  return parsed as Record<string, unknown>;
}

/** An argParser for comma-separated lists (--after ID,ID); empty entries are dropped. */
export function listArg(value: string): string[] {
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

const rateUnitsMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * An argParser for --rate: COUNT/PER, COUNT tokens per PER, PER in
 * milliseconds or with a unit (ms, s, m, h): "100/60000" and "100/1m" are the
 * same rate. One slash form with units rather than two flags, so a rate reads
 * as it is said ("10 per second": 10/1s).
 */
export function rateArg(value: string): { count: number; perMs: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (match === null) throw new InvalidArgumentError("must be COUNT/PER, e.g. 10/1s, 600/1m or 5/1500 (PER in ms without a unit).");
  const count = Number(match[1]);
  const perMs = Number(match[2]) * rateUnitsMs[match[3] ?? "ms"]!;
  if (!Number.isSafeInteger(count) || count < 1) throw new InvalidArgumentError("COUNT must be an integer of at least 1.");
  if (!Number.isSafeInteger(perMs) || perMs < 1) throw new InvalidArgumentError("PER must be at least 1 ms.");
  return { count, perMs };
}

/** A subcommand with the common flags; its action goes through runCommand. */
export function clientCommand(parent: Command, nameAndArgs: string, description: string): Command {
  const command = parent.command(nameAndArgs);
  // Commander checks required options before unknown ones, so `--topik x` said
  // "required option '--topic <topic>' not specified". The mistyped flag is the
  // real error: report it first. (The first unknown argument is always the
  // first unknown option: commander sends everything after it there too.)
  const parseOptions = command.parseOptions.bind(command);
  command.parseOptions = (argv) => {
    const parsed = parseOptions(argv);
    const first = parsed.unknown[0];
    // --help lands among the unknown arguments too; commander answers it next, and help wins over any error.
    const wantsHelp = parsed.unknown.includes("--help") || parsed.unknown.includes("-h");
    // unknownOption (untyped in commander's .d.ts) prints commander's own message, with its "Did you mean" hint.
    if (first !== undefined && first.startsWith("-") && !wantsHelp) (command as unknown as { unknownOption(flag: string): never }).unknownOption(first);
    return parsed;
  };
  return command
    .description(description)
    .addOption(new Option("--server <host:port>", "server address").env("ORQ_SERVER").default(defaultServer))
    .addOption(new Option("--ns <namespace>", "namespace").env("ORQ_NS").default(defaultNamespace))
    .addOption(new Option("--token <token>", "auth token (prefer the env variable: flags show in `ps`)").env("ORQ_TOKEN"))
    .addOption(new Option("--json", "machine output: one JSON document on stdout"))
    .addOption(
      new Option("--timeout-ms <n>", "request timeout (a dequeue's --wait-ms comes on top)")
        .default(requestTimeoutMsDefault)
        .argParser(intArg(1, 3_600_000)),
    );
}

type Run = (session: Session, args: unknown[], options: Record<string, unknown>) => Promise<CommandResult>;

/** Sets the command's action: parse, connect lazily, run, print, set the exit code. */
export function onRun(command: Command, run: Run): Command {
  return command.action(async () => {
    const options = command.opts();
    const json = options.json === true;
    let client: OrqClient | null = null;
    let cluster: OrqClusterClient | null = null;
    let address: ServerAddress | null = null;
    const connectOptions = (at: ServerAddress) => ({
      host: at.host,
      port: at.port,
      token: options.token as string | undefined,
      clientName: "orq-cli",
      reconnect: false,
      requestTimeoutMs: options.timeoutMs as number,
      connectTimeoutMs: Math.min(options.timeoutMs as number, 5_000),
    });
    const session: Session = {
      ns: options.ns as string,
      json,
      nsExplicit: command.getOptionValueSource("ns") !== "default",
      async client(clientOptions = {}) {
        if (client !== null) return client;
        address ??= parseServerAddress(options.server as string);
        client = await OrqClient.connect({ ...connectOptions(address), helloRequired: clientOptions.helloRequired ?? true });
        return client;
      },
      async cluster() {
        if (cluster !== null) return cluster;
        address ??= parseServerAddress(options.server as string);
        cluster = await OrqClusterClient.connect(connectOptions(address));
        return cluster;
      },
    };
    try {
      address = parseServerAddress(options.server as string);
      const result = await run(session, command.processedArgs, options);
      print(result, json);
      process.exitCode = result.exitCode ?? exitCodes.ok;
    } catch (error) {
      if (error instanceof UsageError) {
        process.stderr.write(`error USAGE: ${error.message}\n`);
        process.exitCode = exitCodes.usage;
      } else if (error instanceof OrqError) {
        process.stderr.write(`error ${error.code}: ${bareMessage(error)}${error.code === "UNAUTHORIZED" ? tokenHint(options.token) : ""}\n`);
        process.exitCode = exitCodes.error;
      } else {
        throw error;
      }
    } finally {
      const open = client as OrqClient | null;
      if (open !== null) await open.close();
      const openCluster = cluster as OrqClusterClient | null;
      if (openCluster !== null) await openCluster.close();
    }
  });
}

function print(result: CommandResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result.json, null, 2)}\n`);
    return;
  }
  if (result.text.length > 0) process.stdout.write(result.text.endsWith("\n") ? result.text : `${result.text}\n`);
  if (result.note !== undefined) process.stderr.write(`${result.note}\n`);
}

/** What to do about UNAUTHORIZED: the server has auth on, and the token is missing or not one it knows. */
function tokenHint(token: unknown): string {
  return token === undefined
    ? " (the server requires a token: set ORQ_TOKEN, or pass --token)"
    : " (the token from ORQ_TOKEN or --token is not one the server knows)";
}

/** OrqError's message is "CODE: message"; the CLI prints the code itself. */
function bareMessage(error: OrqError): string {
  const prefix = `${error.code}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  const retry = error.details.retryAfterMs;
  const field = error.details.field;
  const showField = field !== undefined && !message.includes(field);
  return `${message}${showField ? ` (field ${field})` : ""}${retry !== undefined ? ` (retry after ${retry} ms)` : ""}`;
}
