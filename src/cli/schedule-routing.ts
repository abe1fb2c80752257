// Where the schedule commands send their requests. On a single node, to
// --server. In cluster mode a schedule lives on one node's shard
// (docs/CLUSTER.md, "Schedules across nodes"): `schedule` and `unschedule`
// sent elsewhere are answered MOVED naming the owner's address, and are sent
// there once; `schedules` asks every node in the map and merges their lists
// by name (each node lists its own shards' schedules).

import { OrqError } from "../client/orq-error.ts";
import type { Session } from "./client-command.ts";

type WireMap = Record<string, unknown>;

/** `op` at --server, or once more at the owner a MOVED names. */
export async function requestOwner(session: Session, op: "schedule" | "unschedule", fields: WireMap): Promise<WireMap> {
  try {
    return await (await session.client()).request(op, fields);
  } catch (error) {
    const addr = error instanceof OrqError && error.code === "MOVED" ? error.details.addr : undefined;
    if (addr === undefined) throw error;
    return await (await session.clientAt(addr)).request(op, fields);
  }
}

/** The addresses of every node when --server is a cluster node, or null on a single node. */
async function clusterAddresses(session: Session): Promise<string[] | null> {
  try {
    const map = (await (await session.client()).request("cluster")).cluster as { nodes: Array<{ node_id: string; addr: string }> };
    return map.nodes.map((node) => node.addr);
  } catch (error) {
    // A single node answers `cluster` BAD_REQUEST.
    if (error instanceof OrqError && error.code === "BAD_REQUEST") return null;
    throw error;
  }
}

/** One `schedules` page from --server, or on a cluster every node's schedules after `after`, merged by name, cut to `limit` (default 1,000). */
export async function schedulesPage(session: Session, fields: { ns: string; limit?: number; after?: string }): Promise<{ schedules: WireMap[]; next: string | null }> {
  const addresses = await clusterAddresses(session);
  const wire: WireMap = { ns: fields.ns };
  if (fields.after !== undefined) wire.after = fields.after;
  if (addresses === null) {
    if (fields.limit !== undefined) wire.limit = fields.limit;
    const reply = await (await session.client()).request("schedules", wire);
    return { schedules: reply.schedules as WireMap[], next: typeof reply.next === "string" ? reply.next : null };
  }
  const limit = fields.limit ?? 1000;
  const merged: WireMap[] = [];
  for (const addr of addresses) {
    // Each node's first `limit` after `after` are enough: the merged page takes at most `limit` of all of them.
    const reply = await (await session.clientAt(addr)).request("schedules", { ...wire, limit });
    merged.push(...(reply.schedules as WireMap[]));
  }
  merged.sort((a, b) => (String(a.name) < String(b.name) ? -1 : String(a.name) > String(b.name) ? 1 : 0));
  const page = merged.slice(0, limit);
  return { schedules: page, next: merged.length > page.length ? String(page[page.length - 1]?.name) : null };
}
