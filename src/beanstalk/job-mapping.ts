// How a beanstalkd job maps onto an orq item, in one place: its numeric id,
// its priority, and its TTR and delay in orq's units. docs/BEANSTALKD.md
// documents each choice for users of both protocols.
//
// Job ids. An orq id is `<shard>:<key>`; its job id is the decimal number
// (key + 1) * 10,000 + shard: the last four digits are the shard (shards are
// at most 1,024), the digits before them the key plus one, so no job id is 0
// (clients treat 0 as no job). Keys come from one counter across shards, so
// job ids grow with every put like beanstalkd's. Built from strings, so no
// key is too large; a key below 2^53 / 10^4 keeps the id a safe JavaScript
// number.

import { parseId } from "../engine/state/ids.ts";

/** Decimal digits that hold the shard in a job id. */
const shardDigits = 4;

/** beanstalkd's priority is 0..2^32-1 (0 most urgent); orq's is int32. Subtracting 2^31 keeps the order. */
export const priorityOffset = 2 ** 31;

/** beanstalkd's "urgent" jobs have a priority below 1024 (URGENT_THRESHOLD). */
export const urgentPriorityBelow = 1024;

/** Seconds of TTR beanstalkd keeps as a safety margin: a reserve answers DEADLINE_SOON inside it. */
export const safetyMarginMs = 1000;

export function jobIdOf(orqId: string): string {
  const parsed = parseId(orqId);
  if (parsed === null) return "0";
  return `${parsed.key + 1}${String(parsed.shard).padStart(shardDigits, "0")}`;
}

/** The orq id a job id names, or null when it names none (leading zeros allowed, as beanstalkd's strtoumax does). */
export function orqIdOf(jobId: string): string | null {
  const digits = jobId.replace(/^0+/, "");
  if (!/^\d+$/.test(digits) || digits.length <= shardDigits || digits.length > 16 + shardDigits) return null;
  const keyPlusOne = Number(digits.slice(0, digits.length - shardDigits));
  const shard = Number(digits.slice(digits.length - shardDigits));
  if (!Number.isSafeInteger(keyPlusOne) || keyPlusOne < 1) return null;
  return `${shard}:${keyPlusOne - 1}`;
}

export function orqPriorityOf(beanstalkPriority: number): number {
  return beanstalkPriority - priorityOffset;
}

export function beanstalkPriorityOf(orqPriority: number): number {
  return orqPriority + priorityOffset;
}

/** TTR in seconds to a lease in ms: 0 becomes 1 s as in beanstalkd; above orq's longest lease it is cut to it. */
export function leaseMsOfTtr(ttrSeconds: number, leaseMsMax: number): number {
  return Math.min(Math.max(ttrSeconds, 1) * 1000, leaseMsMax);
}

/** A delay in seconds to ms, cut to orq's longest delay. */
export function delayMsOfSeconds(delaySeconds: number, delayMsMax: number): number {
  return Math.min(delaySeconds * 1000, delayMsMax);
}
