// The contract's ops, by name: the one list. The server's op table must hold
// exactly these (its type is a record keyed by them), the metrics label
// requests by them, and the client and the dashboard name ops with them, so
// adding an op starts here.

export const opNames = [
  "hello",
  "ping",
  "enqueue",
  "dequeue",
  "ack",
  "nack",
  "extend",
  "cancel",
  "get",
  "topics",
  "dead",
  "redrive",
  "stats",
  "list",
  "pause",
  "resume",
  "cluster",
  "policy",
  "policies",
  "groups",
  "explain",
  "wait",
] as const;

export type OpName = (typeof opNames)[number];

const opNameSet: ReadonlySet<string> = new Set(opNames);

export function isOpName(value: unknown): value is OpName {
  return typeof value === "string" && opNameSet.has(value);
}
