// The `list` op's page cursor: where the last page stopped. Clients treat it
// as an opaque string (docs/PROTOCOL.md); it holds either the last ready item
// listed, by its place in delivery order (priority, deliverAtMs, key), or the
// last item key a walk in enqueue order reached. Item keys come from one
// counter for every shard and grow across restarts (storage/writer.ts), so
// key order is enqueue order over the whole server and one key is a stable
// place to resume, whatever happened to the items around it.
//
//   r.<priority>.<deliverAtMs>.<key>   ready items, in delivery order
//   e.<key>                            the others, in enqueue order (-1: from the start)

import type { ListCursor, LiveStateName } from "../api.ts";

export function formatListCursor(cursor: ListCursor): string {
  return cursor.phase === "ready" ? `r.${cursor.priority}.${cursor.deliverAtMs}.${cursor.key}` : `e.${cursor.key}`;
}

const readyPattern = /^r\.(-?\d{1,16})\.(-?\d{1,16})\.(\d{1,16})$/;
const enqueuedPattern = /^e\.(-1|\d{1,16})$/;

/**
 * The cursor a `list` request's `after` names, or null when it is not one
 * this server hands out for that state filter (a ready cursor only where
 * ready items are listed: `state` absent or "ready"; an enqueue-order one
 * only where others are: `state` absent or not "ready").
 */
export function parseListCursor(text: string, state: LiveStateName | null): ListCursor | null {
  const ready = readyPattern.exec(text);
  if (ready !== null) {
    if (state !== null && state !== "ready") return null;
    const priority = Number(ready[1]);
    const deliverAtMs = Number(ready[2]);
    const key = Number(ready[3]);
    if (!Number.isSafeInteger(priority) || !Number.isSafeInteger(deliverAtMs) || !Number.isSafeInteger(key)) return null;
    return { phase: "ready", priority, deliverAtMs, key };
  }
  const enqueued = enqueuedPattern.exec(text);
  if (enqueued !== null) {
    if (state === "ready") return null;
    const key = Number(enqueued[1]);
    if (!Number.isSafeInteger(key)) return null;
    return { phase: "enqueued", key };
  }
  return null;
}
