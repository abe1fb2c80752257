// How the CLI shows protocol values: for --json, the wire's snake_case field
// names, with byte fields as `payload` (a string, when the bytes are valid
// UTF-8) or `payload_base64` (when they are not), so output is unambiguous and
// round-trips; for people, aligned `label  value` blocks and tables, times as
// ISO-8601 UTC, and payloads quoted (or summarised when binary or long).

import type { Delivery, EndedItemState, GroupCounts, ItemState, Policy, PolicyRate, TopicCounts } from "../client/types.ts";
import { liveStateNames } from "../protocol/live-states.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Longest payload shown in human output (200 characters); --json shows it whole. */
export const humanPayloadCharsMax = 200;

function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    // Not UTF-8: the caller shows the bytes another way.
    return null;
  }
}

/** `{name: text}` when the bytes are UTF-8, else `{name_base64: ...}`. */
export function bytesToJson(name: string, bytes: Uint8Array): Record<string, string> {
  const text = utf8OrNull(bytes);
  return text !== null ? { [name]: text } : { [`${name}_base64`]: Buffer.from(bytes).toString("base64") };
}

export function bytesForHuman(bytes: Uint8Array): string {
  if (bytes.length === 0) return "(empty)";
  const text = utf8OrNull(bytes);
  // Control characters (other than newline and tab) would garble a terminal.
  if (text === null || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) {
    const hex = Buffer.from(bytes.subarray(0, 32)).toString("hex");
    return `(${bytes.length} bytes, binary) ${hex}${bytes.length > 32 ? "…" : ""}`;
  }
  const shown = JSON.stringify(text.length > humanPayloadCharsMax ? text.slice(0, humanPayloadCharsMax) : text);
  return text.length > humanPayloadCharsMax ? `${shown}… (${bytes.length} bytes)` : shown;
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function deliveryToJson(d: Delivery): Record<string, unknown> {
  return {
    id: d.id,
    topic: d.topic,
    priority: d.priority,
    ...bytesToJson("payload", d.payload),
    ...bytesToJson("metadata", d.metadata),
    attempt: d.attempt,
    receipt: d.receipt,
    lease_expires_at_ms: d.leaseExpiresAtMs,
    enqueued_at_ms: d.enqueuedAtMs,
    ...(d.group === undefined ? {} : { group: d.group }),
    ...(d.trace === undefined ? {} : { trace: d.trace }),
  };
}

export function itemStateToJson(s: ItemState | EndedItemState | null): Record<string, unknown> | null {
  if (s === null) return null;
  if (s.state === "ended") return { id: s.id, state: s.state, outcome: s.outcome, ...resultToJson(s) };
  const out: Record<string, unknown> = {
    id: s.id,
    topic: s.topic,
    state: s.state,
    priority: s.priority,
    ...bytesToJson("payload", s.payload),
    ...bytesToJson("metadata", s.metadata),
    attempt: s.attempt,
    deliver_at_ms: s.deliverAtMs,
    enqueued_at_ms: s.enqueuedAtMs,
  };
  if (s.leaseExpiresAtMs !== undefined) out.lease_expires_at_ms = s.leaseExpiresAtMs;
  if (s.requires !== undefined) out.requires = s.requires;
  if (s.after !== undefined) out.after = s.after;
  if (s.key !== undefined) out.key = s.key;
  if (s.group !== undefined) out.group = s.group;
  if (s.prefers !== undefined) out.prefers = s.prefers;
  if (s.preferWaitMs !== undefined) out.prefer_wait_ms = s.preferWaitMs;
  if (s.trace !== undefined) out.trace = s.trace;
  if (s.deadReason !== undefined) out.dead_reason = s.deadReason;
  return out;
}

/** An acked item's `ack` result as `result` (or `result_base64`); nothing when it has none. */
function resultToJson(s: EndedItemState): Record<string, string> {
  return s.result === undefined ? {} : bytesToJson("result", s.result);
}

/** Aligned `label  value` lines. */
export function block(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}

/** The column headings of counts by state, in the contract's order. */
export const stateHeadings: readonly string[] = liveStateNames.map((s) => s.toUpperCase());

/** A table with a header row; numbers right-aligned, text left-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)));
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === "number"));
  return cells
    .map((row) => row.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join("  ").trimEnd())
    .join("\n");
}

export function deliveryBlock(d: Delivery): string {
  return block([
    ["id", d.id],
    ["topic", d.topic],
    ...(d.group === undefined ? [] : [["group", d.group] as const]),
    ["priority", String(d.priority)],
    ["attempt", String(d.attempt)],
    ["receipt", d.receipt],
    ["lease until", isoTime(d.leaseExpiresAtMs)],
    ["enqueued", isoTime(d.enqueuedAtMs)],
    ["payload", bytesForHuman(d.payload)],
    ...(d.metadata.length > 0 ? [["metadata", bytesForHuman(d.metadata)] as const] : []),
    ...(d.trace === undefined ? [] : [["trace", traceText(d.trace)] as const]),
  ]);
}

export function itemStateBlock(s: ItemState | EndedItemState): string {
  if (s.state === "ended") {
    const rows: Array<readonly [string, string]> = [["id", s.id], ["state", `ended (${s.outcome})`]];
    if (s.result !== undefined) rows.push(["result", bytesForHuman(s.result)]);
    return block(rows);
  }
  const rows: Array<readonly [string, string]> = [
    ["id", s.id],
    ["topic", s.topic],
    ["state", s.state],
    ["priority", String(s.priority)],
    ["attempt", String(s.attempt)],
    ["deliver at", isoTime(s.deliverAtMs)],
    ["enqueued", isoTime(s.enqueuedAtMs)],
  ];
  if (s.leaseExpiresAtMs !== undefined) rows.push(["lease until", isoTime(s.leaseExpiresAtMs)]);
  if (s.group !== undefined) rows.push(["group", s.group]);
  if (s.key !== undefined) rows.push(["key", s.key]);
  if (s.requires !== undefined) rows.push(["requires", JSON.stringify(s.requires)]);
  if (s.prefers !== undefined) rows.push(["prefers", JSON.stringify(s.prefers)]);
  if (s.preferWaitMs !== undefined) rows.push(["prefer wait", `${s.preferWaitMs} ms`]);
  if (s.after !== undefined) rows.push(["after", s.after.join(", ")]);
  if (s.deadReason !== undefined) rows.push(["dead reason", s.deadReason]);
  rows.push(["payload", bytesForHuman(s.payload)]);
  if (s.metadata.length > 0) rows.push(["metadata", bytesForHuman(s.metadata)]);
  if (s.trace !== undefined) rows.push(["trace", traceText(s.trace)]);
  return block(rows);
}

/** A trace context for people: quoted as JSON, so an empty or oddly spaced one is still visible on one line. */
function traceText(trace: string): string {
  return JSON.stringify(trace);
}

export function topicsTable(topics: readonly TopicCounts[]): string {
  return table(
    ["TOPIC", ...stateHeadings, "PAUSED"],
    topics.map((t) => [t.topic, ...liveStateNames.map((s) => t[s]), pausedText(t)]),
  );
}

/** A topic's or group's pause for people: "-", "yes" (until resume) or "until <time>". */
function pausedText(t: Pick<TopicCounts, "paused" | "pausedUntilMs">): string {
  if (!t.paused) return "-";
  return t.pausedUntilMs === undefined ? "yes" : `until ${isoTime(t.pausedUntilMs)}`;
}

/** One line per item (`orq list`): the payload cut short; `orq get ID` shows it whole. */
export function itemStatesTable(items: readonly ItemState[]): string {
  return table(
    ["ID", "STATE", "PRIORITY", "ATTEMPT", "DELIVER AT", "PAYLOAD"],
    items.map((s) => [s.id, s.state, s.priority, s.attempt, isoTime(s.deliverAtMs), shortText(bytesForHuman(s.payload), payloadColumnChars)]),
  );
}

/** Characters of a payload shown in a table row (60): enough to recognise it, short enough for one line. */
const payloadColumnChars = 60;

function shortText(text: string, chars: number): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length <= chars ? oneLine : `${oneLine.slice(0, chars - 1)}…`;
}

/** A group's name for people: the items without a group show as "(none)", which no group name can be mistaken for in a table. */
function groupName(group: string | null): string {
  return group ?? "(none)";
}

/** A group entry in the wire's snake_case (`group` null for the items without one). */
export function groupToJson(g: GroupCounts): Record<string, unknown> {
  const { pausedUntilMs, ...rest } = g;
  return pausedUntilMs === undefined ? rest : { ...rest, paused_until_ms: pausedUntilMs };
}

export function groupsTable(groups: readonly GroupCounts[]): string {
  return table(
    ["GROUP", ...stateHeadings, "PAUSED"],
    groups.map((g) => [groupName(g.group), ...liveStateNames.map((s) => g[s]), pausedText(g)]),
  );
}

/** A policy in the wire's snake_case, as `policy` and `policies` send it. */
export function policyToJson(p: Policy): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.group !== undefined) out.group = p.group;
  if (p.weight !== undefined) out.weight = p.weight;
  if (p.maxLeased !== undefined) out.max_leased = p.maxLeased;
  if (p.rate !== undefined) out.rate = { count: p.rate.count, per_ms: p.rate.perMs };
  return out;
}

/** Whose policy it is: the topic's own, every group's default ("*"), or one group's. */
function policyScope(p: Pick<Policy, "group">): string {
  if (p.group === undefined) return "(topic)";
  return p.group === "*" ? "* (default)" : p.group;
}

/** A policy's bounds in words ("weight 3, max leased 5, rate 10/1s"), "no bounds" when it has none. */
export function policyBoundsText(p: Policy): string {
  const parts: string[] = [];
  if (p.weight !== undefined) parts.push(`weight ${p.weight}`);
  if (p.maxLeased !== undefined) parts.push(`max leased ${p.maxLeased}`);
  if (p.rate !== undefined) parts.push(`rate ${rateText(p.rate)}`);
  return parts.length === 0 ? "no bounds" : parts.join(", ");
}

export function policiesTable(policies: readonly Policy[]): string {
  return table(
    ["GROUP", "WEIGHT", "MAX LEASED", "RATE"],
    policies.map((p) => [policyScope(p), p.weight ?? "-", p.maxLeased ?? "-", p.rate === undefined ? "-" : rateText(p.rate)]),
  );
}

const durationUnits: ReadonlyArray<readonly [string, number]> = [
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
];

/** A rate as `--rate` takes it: COUNT/PER, PER in the largest unit (h, m, s, ms) that divides it ("10/1s", "5/1500ms"). */
export function rateText(rate: PolicyRate): string {
  const unit = durationUnits.find(([, ms]) => rate.perMs % ms === 0);
  return unit === undefined ? `${rate.count}/${rate.perMs}ms` : `${rate.count}/${rate.perMs / unit[1]}${unit[0]}`;
}
