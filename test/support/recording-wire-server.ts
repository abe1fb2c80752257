// A stand-in server for client tests of ops a real server may not have yet:
// it speaks the framing (4-byte big-endian length, one MessagePack map),
// records every request as decoded, and answers each with what `answer`
// returns for it (hello is answered for the client's connect). Nothing of
// the engine: the test decides the replies, and checks what was sent.

import { decode, encode } from "@msgpack/msgpack";
import { createServer, type Server, type Socket } from "node:net";

export type WireRequest = Record<string, unknown> & { id: number; op: string };

export interface RecordingWireServer {
  port: number;
  requests: WireRequest[];
  /** The recorded requests of one op, in arrival order. */
  sent(op: string): WireRequest[];
  stop(): Promise<void>;
}

const hello = {
  server: "orq",
  version: "0.0.0",
  protocol: 1,
  node_id: "recording",
  shards: 4,
  max_frame_bytes: 4 << 20,
  limits: {
    payload_bytes_max: 10240,
    metadata_bytes_max: 1024,
    items_per_enqueue_max: 1000,
    count_per_dequeue_max: 1000,
    topic_bytes_max: 255,
    wait_ms_max: 60000,
    lease_ms_max: 3600000,
    ids_per_request_max: 1000,
  },
};

function frame(value: unknown): Uint8Array {
  const body = encode(value, { ignoreUndefined: true });
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
}

export async function startRecordingWireServer(answer: (request: WireRequest) => Record<string, unknown>): Promise<RecordingWireServer> {
  const requests: WireRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let buffered = new Uint8Array(0);
    socket.on("data", (chunk: Uint8Array) => {
      const joined = new Uint8Array(buffered.length + chunk.length);
      joined.set(buffered);
      joined.set(chunk, buffered.length);
      buffered = joined;
      while (buffered.length >= 4) {
        const length = new DataView(buffered.buffer, buffered.byteOffset).getUint32(0);
        if (buffered.length < 4 + length) break;
        const request = decode(buffered.subarray(4, 4 + length)) as WireRequest;
        buffered = buffered.slice(4 + length);
        requests.push(request);
        const result = request.op === "hello" ? hello : answer(request);
        socket.write(frame({ id: request.id, ok: true, ...result }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the recording server has no port");
  return {
    port: address.port,
    requests,
    sent: (op) => requests.filter((request) => request.op === op),
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
