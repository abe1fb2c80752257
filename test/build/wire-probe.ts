// A deliberately minimal protocol-v1 client for black-box tests of a server
// process (the standalone binary): length-prefixed MessagePack frames over
// Bun's TCP socket, replies matched by id. Independent of src/client so a bug
// there cannot hide a bug in the binary.

import { Decoder, Encoder } from "@msgpack/msgpack";
import type { Socket } from "bun";

export type Reply = { id: number; ok: boolean; error?: { code: string; message: string } } & Record<string, unknown>;

export class WireProbe {
  private readonly encoder = new Encoder();
  private readonly decoder = new Decoder();
  private buffered = new Uint8Array(0);
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private closed = false;

  private constructor(private readonly socket: Socket<undefined>) {}

  static async connect(host: string, port: number): Promise<WireProbe> {
    let probe: WireProbe | undefined;
    const socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_, chunk) => probe?.onData(chunk),
        close: () => probe?.onClose(),
      },
    });
    probe = new WireProbe(socket);
    return probe;
  }

  request(op: string, fields: Record<string, unknown> = {}): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error("connection closed"));
    const id = this.nextId;
    this.nextId += 1;
    const body = this.encoder.encode({ id, op, ...fields });
    const frame = new Uint8Array(4 + body.length);
    new DataView(frame.buffer).setUint32(0, body.length);
    frame.set(body, 4);
    const reply = new Promise<Reply>((resolve) => this.pending.set(id, resolve));
    // Test frames are small: a short write here would be a surprise worth failing on.
    const written = this.socket.write(frame);
    if (written !== frame.length) throw new Error(`short write ${written}/${frame.length}`);
    return reply;
  }

  close(): void {
    this.socket.end();
  }

  private onData(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.buffered.length + chunk.length);
    joined.set(this.buffered);
    joined.set(chunk, this.buffered.length);
    let offset = 0;
    while (joined.length - offset >= 4) {
      const length = new DataView(joined.buffer, offset).getUint32(0);
      if (joined.length - offset - 4 < length) break;
      const reply = this.decoder.decode(joined.subarray(offset + 4, offset + 4 + length)) as Reply;
      offset += 4 + length;
      const resolve = this.pending.get(reply.id);
      if (resolve === undefined) throw new Error(`reply for unknown id ${reply.id}`);
      this.pending.delete(reply.id);
      resolve(reply);
    }
    this.buffered = joined.slice(offset);
  }

  private onClose(): void {
    this.closed = true;
    for (const [id, resolve] of this.pending) {
      resolve({ id, ok: false, error: { code: "CONNECTION_LOST", message: "closed before reply" } });
    }
    this.pending.clear();
  }
}
