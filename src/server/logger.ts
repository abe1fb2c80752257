// Structured logs: one JSON object per line (on stderr in the binary). A
// Logger never receives a token: callers log namespaces and connection ids,
// never credentials.

export type LogLevel = "debug" | "info" | "warn" | "error";

const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** The process is about to stop (a broken invariant): always written, whatever the level. */
  fatal(message: string, fields?: LogFields): void;
}

/** Writes lines at `level` and above through `writeLine` (the CLI passes stderr). */
export function createJsonLogger(level: LogLevel, writeLine: (line: string) => void, nowMs: () => number): Logger {
  const threshold = logLevels.indexOf(level);
  const emit = (at: LogLevel | "fatal", message: string, fields?: LogFields): void => {
    if (at !== "fatal" && logLevels.indexOf(at) < threshold) return;
    const record: LogFields = { ts: new Date(nowMs()).toISOString(), level: at, msg: message, ...fields };
    writeLine(JSON.stringify(record, jsonSafe));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    fatal: (m, f) => emit("fatal", m, f),
  };
}

/** Errors serialize as name + message + stack; bigints as strings (JSON has neither). */
function jsonSafe(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === "bigint") return value.toString();
  return value;
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  fatal: () => {},
};
