// Shape checks for the persisted records: run on every record before it is
// encoded and after it is decoded, so a bug or a damaged value stops the
// process instead of spreading. A failed check is an AssertionError.

import { assert } from "../lib/assert.ts";
import type { ItemRecord, MetaRecord, OutcomeRecord, PauseRecord, PolicyRecord } from "./record.ts";

const storedStates: ReadonlySet<string> = new Set(["pending", "leased", "dead"]);
const deliveryModes: ReadonlySet<string> = new Set(["at_least_once", "at_most_once"]);
const outcomes: ReadonlySet<string> = new Set(["acked", "cancelled", "expired"]);

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isTimeMs(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function isNullable<T>(value: unknown, check: (value: unknown) => value is T): boolean {
  return value === null || check(value);
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

/** A name that is never empty (a namespace, topic or group). */
function isName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

/** A whole number of at least 1 (a bound of a policy). */
function isBound(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

export function assertItemRecord(record: ItemRecord): void {
  assert(typeof record === "object" && record !== null, "item record: not an object");
  assert(isString(record.ns) && isString(record.topic), "item record: ns/topic not strings");
  assert(isTimeMs(record.priority), "item record: priority not a finite number");
  assert(record.payload instanceof Uint8Array, "item record: payload not bytes");
  assert(record.metadata instanceof Uint8Array, "item record: metadata not bytes");
  assert(isTimeMs(record.enqueuedAtMs) && isTimeMs(record.deliverAtMs), "item record: times not finite");
  assert(isCount(record.leaseMs), "item record: leaseMs not a count");
  assert(isNullable(record.ttlExpiresAtMs, isTimeMs), "item record: ttlExpiresAtMs");
  // Messages with the value are built only on failure: this runs for every record recovery reads.
  if (!deliveryModes.has(record.delivery)) assert(false, `item record: delivery ${String(record.delivery)}`);
  assert(isCount(record.maxAttempts) && record.maxAttempts <= 0xffff_ffff, "item record: maxAttempts");
  assert(isCount(record.attempt) && record.attempt <= 0xffff_ffff, "item record: attempt");
  assert(isCount(record.deliveries) && record.deliveries <= 0xffff_ffff, "item record: deliveries");
  assert(isCount(record.leaseBoot) && record.leaseBoot <= 0xffff_ffff, "item record: leaseBoot");
  if (!storedStates.has(record.state)) assert(false, `item record: state ${String(record.state)}`);
  assert(isNullable(record.leaseExpiresAtMs, isTimeMs), "item record: leaseExpiresAtMs");
  assert(isNullable(record.deadReason, isString), "item record: deadReason");
  assert(
    record.requires === null || (typeof record.requires === "object" && !Array.isArray(record.requires)),
    "item record: requires not a map",
  );
  assert(record.after === null || (Array.isArray(record.after) && record.after.every(isString)), "item record: after");
  assert(isNullable(record.key, isString), "item record: key");
  assert(isNullable(record.group, isName), "item record: group");
}

export function assertOutcomeRecord(record: OutcomeRecord): void {
  assert(typeof record === "object" && record !== null, "outcome record: not an object");
  assert(isString(record.ns), "outcome record: ns");
  assert(outcomes.has(record.outcome), `outcome record: outcome ${String(record.outcome)}`);
  assert(isTimeMs(record.endedAtMs), "outcome record: endedAtMs");
  const result = record.result ?? null;
  assert(result === null || (result instanceof Uint8Array && record.outcome === "acked"), "outcome record: result");
}

export function assertMetaRecord(record: MetaRecord): void {
  assert(typeof record === "object" && record !== null, "meta record: not an object");
  assert(isCount(record.formatVersion) && record.formatVersion <= 0xffff_ffff, "meta record: formatVersion");
  assert(isCount(record.shards) && record.shards >= 1 && record.shards <= 0xffff_ffff, "meta record: shards");
  assert(isString(record.nodeId) && record.nodeId.length > 0, "meta record: nodeId");
  assert(isCount(record.keysReservedBelow), "meta record: keysReservedBelow");
  assert(isCount(record.boots) && record.boots <= 0xffff_ffff, "meta record: boots");
}

export function assertPauseRecord(record: PauseRecord): void {
  assert(typeof record === "object" && record !== null, "pause record: not an object");
  assert(isName(record.ns), "pause record: ns");
  assert(isName(record.topic), "pause record: topic");
  assert(isNullable(record.group, isName), "pause record: group");
  assert(isNullable(record.untilMs, isTimeMs), "pause record: untilMs");
}

export function assertPolicyRecord(record: PolicyRecord): void {
  assert(typeof record === "object" && record !== null, "policy record: not an object");
  assert(isName(record.ns), "policy record: ns");
  assert(isName(record.topic), "policy record: topic");
  assert(isNullable(record.group, isName), "policy record: group");
  // A weight shares deliveries between groups: the topic's own policy has none.
  assert(record.weight === null || (record.group !== null && Number.isFinite(record.weight) && record.weight > 0), "policy record: weight");
  assert(isNullable(record.maxLeased, isBound), "policy record: maxLeased");
  const rate = record.rate;
  assert(rate === null || (typeof rate === "object" && isBound(rate.count) && isBound(rate.perMs)), "policy record: rate");
}
