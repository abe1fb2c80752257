// The Jupiter floor: what the Jupiter scenario's load generator reaches
// against a server that does no work. A bare Bun TCP server with orq's 4-byte
// length framing that answers each request with a reply orq itself sent
// earlier in the same run (a dequeue with its delivery, an ack, a ping), only
// its id patched: the same bytes on the wire and the same decoding in the
// client, no matching, no store, no commit. Its acquisitions/s against its
// ping/s is the most any server could give the scenario's ratio on this
// machine with this client; whatever orq falls short of it is orq's.
//
// The replies come in a file (--replies): a MessagePack map of op name
// ("dequeue", "ack", "ping") to the reply's body, whose first key is `id`
// encoded as a uint32 (the load generator's ids always are: orq-conn.ts).
// A request is answered by its op alone, read at a fixed offset: the load
// generator's requests start with `id` (uint32) and then `op`.
// Run as a child process so it has its own thread, like the server it stands
// in for; prints `jupiter floor listening on HOST:PORT`.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { decode } from "@msgpack/msgpack";
import { startFramedFloor } from "./framed-floor.ts";
import { readUint } from "./reply-peek.ts";

/** Largest request frame the floor splits (1 MiB): the scenario's requests are a few hundred bytes. */
const floorFrameBytesMax = 1 << 20;
/** fixmap header (1) + fixstr "id" (3): the id's uint32 marker; its four bytes follow. */
const ID_MARKER_OFFSET = 4;
const MSGPACK_UINT32 = 0xce;
/** After the id (marker + 4 bytes): fixstr "op" (3 bytes), then the op's fixstr. */
const OP_KEY_OFFSET = 9;
const OP_VALUE_OFFSET = 12;
const FIXSTR_OP = [0xa2, 0x6f, 0x70];

/** Canned reply bodies by op; each has its id's uint32 at ID_MARKER_OFFSET + 1. */
export type FloorReplies = Map<string, Uint8Array>;

export function readFloorReplies(path: string): FloorReplies {
  const decoded = decode(readFileSync(path)) as Record<string, unknown>;
  const replies: FloorReplies = new Map();
  for (const [op, body] of Object.entries(decoded)) {
    if (!(body instanceof Uint8Array) || body[ID_MARKER_OFFSET] !== MSGPACK_UINT32) throw new Error(`jupiter floor: the ${op} reply does not start with a uint32 id`);
    replies.set(op, body);
  }
  return replies;
}

/** The op of a load-generator request (id first, op second), or null when the frame is not laid out that way. */
export function requestOp(bytes: Uint8Array, start: number, end: number): string | null {
  if (end - start <= OP_VALUE_OFFSET || bytes[start + ID_MARKER_OFFSET] !== MSGPACK_UINT32) return null;
  for (let i = 0; i < FIXSTR_OP.length; i++) if (bytes[start + OP_KEY_OFFSET + i] !== FIXSTR_OP[i]) return null;
  const marker = bytes[start + OP_VALUE_OFFSET] as number;
  if ((marker & 0xe0) !== 0xa0) return null;
  const length = marker & 0x1f;
  const from = start + OP_VALUE_OFFSET + 1;
  if (from + length > end) return null;
  let op = "";
  for (let i = 0; i < length; i++) op += String.fromCharCode(bytes[from + i] as number);
  return op;
}

/** Each request answered with its op's reply, the request's id patched in (framed-floor.ts does the rest). */
export function startJupiterFloor(host: string, port: number, replies: FloorReplies): { port: number; stop(): void } {
  return startFramedFloor("jupiter floor", host, port, floorFrameBytesMax, (writer, bytes, start, end) => {
    const op = requestOp(bytes, start, end);
    const reply = op === null ? undefined : replies.get(op);
    if (reply === undefined) throw new Error(`jupiter floor: no reply for a request of op ${op ?? "(unreadable)"}`);
    const offset = writer.appendFrame(reply);
    // The request's id, as it is: both are uint32s at the same offset (requestOp checked the request's marker).
    writer.patchUint32(offset + ID_MARKER_OFFSET + 1, readUint(bytes, start + ID_MARKER_OFFSET));
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string", default: "0" }, replies: { type: "string" } },
  });
  if (values.replies === undefined) throw new Error("jupiter floor: --replies FILE is required");
  const host = values.host ?? "127.0.0.1";
  const server = startJupiterFloor(host, Number(values.port ?? "0"), readFloorReplies(values.replies));
  console.log(`jupiter floor listening on ${host}:${server.port}`);
  process.on("SIGTERM", () => {
    server.stop();
    process.exit(0);
  });
}
