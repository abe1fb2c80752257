// A lean, pipelined orq connection for the load generator: its own 4-byte
// length framing, one reused MessagePack Encoder and Decoder (measured earlier:
// the functional encode() is 3x slower), replies matched to requests by id.
// Deliberately not the TS client: the generator shares the machine with the
// server, so every microsecond it spends is taken from the figure it measures.
// Requests that repeat (enqueue of fixed payloads, dequeue) are encoded once as
// templates and only their id is patched.

import { Decoder, Encoder } from "@msgpack/msgpack";
import { FrameDecoder } from "../../src/protocol/frame-decoder.ts";
import { mapValue, readUint } from "./reply-peek.ts";
import { SocketWriter } from "./socket-writer.ts";

export interface Reply {
  id: number;
  ok?: boolean;
  error?: { code: string; message: string };
  [field: string]: unknown;
}

export type ReplyHandler = (reply: Reply) => void;

/**
 * Runs on a reply's body left undecoded: bytes [start, end) of `bytes`, valid
 * only during the call (the connection's input buffer). For a scenario that
 * reads a field or two where it lies (reply-peek.ts) instead of decoding the
 * whole reply.
 */
export type BodyHandler = (bytes: Uint8Array, start: number, end: number) => void;

/**
 * Ids start at 2^16 and stay below 2^32 so MessagePack always encodes them as
 * uint32 (0xce + 4 bytes): a template's id can then be patched in place.
 */
const ID_FIRST = 0x10000;
const ID_LAST = 0xffffffff;
const MSGPACK_UINT32 = 0xce;
/** fixmap header (1) + fixstr "id" (3): the id value's marker byte sits here when `id` is the first key. */
const TEMPLATE_ID_MARKER_OFFSET = 4;

export interface RequestTemplate {
  body: Uint8Array;
}

const encoder = new Encoder();
const decoder = new Decoder();
/** Largest reply the driver accepts (1 GiB): far above any reply orq sends, so hitting it means a broken stream. */
const replyFrameBytesMax = 1 << 30;

/** Encodes a request once; `id` must be the first key so its offset is fixed. */
export function makeTemplate(request: Record<string, unknown>): RequestTemplate {
  const body = encoder.encode({ id: ID_FIRST, ...request });
  if (body[TEMPLATE_ID_MARKER_OFFSET] !== MSGPACK_UINT32) throw new Error("template id is not at its fixed offset");
  return { body };
}

export class OrqConn {
  private readonly writer = new SocketWriter();
  private readonly pending = new Map<number, ReplyHandler>();
  /** Requests whose replies go to a BodyHandler undecoded; while it is empty, every reply is decoded as before. */
  private readonly bodyPending = new Map<number, BodyHandler>();
  private nextId = ID_FIRST;
  /** Splits reply frames with orq's own FrameDecoder; each body is decoded while it is still valid. */
  private readonly frames = new FrameDecoder(replyFrameBytesMax, {
    frame: (bytes, start, end) => {
      if (this.bodyPending.size === 0 || !this.dispatchBody(bytes, start, end)) this.dispatch(decoder.decode(bytes.subarray(start, end)) as Reply);
      return true;
    },
    frameTooLarge: (lengthBytes) => this.onClose(new Error(`reply frame of ${lengthBytes} bytes`)),
  });
  private closedError: Error | null = null;

  static async connect(host: string, port: number): Promise<OrqConn> {
    const conn = new OrqConn();
    const socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_socket, chunk) => conn.frames.push(chunk),
        drain: () => conn.writer.onDrain(),
        close: () => conn.onClose(new Error("connection closed")),
        error: (_socket, error) => conn.onClose(error),
      },
    });
    socket.setNoDelay(true);
    conn.writer.attach(socket as never);
    conn.socketRef = socket;
    return conn;
  }

  private socketRef: { end(): void } | null = null;

  get inFlight(): number {
    return this.pending.size + this.bodyPending.size;
  }

  /** Sends one request; `onReply` runs synchronously in the data handler, while bin fields still view the input. */
  send(request: Record<string, unknown>, onReply: ReplyHandler): void {
    if (this.closedError !== null) {
      onReply(closedReply(this.closedError));
      return;
    }
    const id = this.takeId();
    const body = encoder.encodeSharedRef({ id, ...request });
    this.writer.appendFrame(body);
    this.pending.set(id, onReply);
  }

  sendTemplate(template: RequestTemplate, onReply: ReplyHandler): void {
    if (this.closedError !== null) {
      onReply(closedReply(this.closedError));
      return;
    }
    this.pending.set(this.writeTemplate(template, template.body, 0, 0), onReply);
  }

  /** Sends a template whose reply goes undecoded to `onBody`. */
  sendTemplateForBody(template: RequestTemplate, onBody: BodyHandler): void {
    this.sendTemplateWithTail(template, template.body, 0, 0, onBody);
  }

  /**
   * Sends one frame made of a template's body and then bytes [tailStart,
   * tailEnd) of `tail`, copied at once (the tail may view another reply's
   * input); its reply goes undecoded to `onBody`. The template must end where
   * the tail's value belongs, e.g. an array header of one element.
   */
  sendTemplateWithTail(template: RequestTemplate, tail: Uint8Array, tailStart: number, tailEnd: number, onBody: BodyHandler): void {
    if (this.closedError !== null) {
      failBody(onBody, this.closedError);
      return;
    }
    this.bodyPending.set(this.writeTemplate(template, tail, tailStart, tailEnd), onBody);
  }

  /** Sends and resolves with the reply; rejects on `ok: false`. */
  call(request: Record<string, unknown>): Promise<Reply> {
    return new Promise((resolve, reject) => this.send(request, (reply) => settle(reply, resolve, reject)));
  }

  callTemplate(template: RequestTemplate): Promise<Reply> {
    return new Promise((resolve, reject) => this.sendTemplate(template, (reply) => settle(reply, resolve, reject)));
  }

  /** Resolves with whatever comes back under the id (the echo floor answers with the request itself). */
  callTemplateRaw(template: RequestTemplate): Promise<Reply> {
    return new Promise((resolve) => this.sendTemplate(template, resolve));
  }

  close(): void {
    this.socketRef?.end();
    this.onClose(new Error("closed by the load generator"));
  }

  /** Appends the template's frame (with bytes [tailStart, tailEnd) of `tail` after its body) under a fresh id; returns the id. */
  private writeTemplate(template: RequestTemplate, tail: Uint8Array, tailStart: number, tailEnd: number): number {
    const id = this.takeId();
    const offset = this.writer.appendFrameWithTail(template.body, tail, tailStart, tailEnd);
    this.writer.patchUint32(offset + TEMPLATE_ID_MARKER_OFFSET + 1, id);
    return id;
  }

  private takeId(): number {
    if (this.closedError !== null) throw this.closedError;
    const id = this.nextId;
    this.nextId = id === ID_LAST ? ID_FIRST : id + 1;
    return id;
  }

  /** Hands the reply to its BodyHandler when its request has one; false when it has none (decode it). */
  private dispatchBody(bytes: Uint8Array, start: number, end: number): boolean {
    const idAt = mapValue(bytes, start, "id");
    const id = idAt < 0 || idAt >= end ? -1 : readUint(bytes, idAt);
    const onBody = this.bodyPending.get(id);
    if (onBody === undefined) return false;
    this.bodyPending.delete(id);
    onBody(bytes, start, end);
    return true;
  }

  private dispatch(reply: Reply): void {
    const handler = this.pending.get(reply.id);
    if (handler === undefined) {
      this.onClose(new Error(`reply for unknown id ${reply.id}: ${JSON.stringify(reply.error ?? reply)}`));
      return;
    }
    this.pending.delete(reply.id);
    handler(reply);
  }

  private onClose(error: Error): void {
    if (this.closedError !== null) return;
    this.closedError = error;
    const failed = closedReply(error);
    for (const handler of this.pending.values()) handler(failed);
    this.pending.clear();
    for (const onBody of this.bodyPending.values()) failBody(onBody, error);
    this.bodyPending.clear();
  }
}

function failBody(onBody: BodyHandler, error: Error): void {
  const body = encoder.encode(closedReply(error));
  onBody(body, 0, body.length);
}

function closedReply(error: Error): Reply {
  return { id: 0, ok: false, error: { code: "CLOSED", message: error.message } };
}

/** The error a reply that is not `ok: true` stands for (decoded whole: the rare path). */
export function replyError(reply: Reply): Error {
  const error = reply.error ?? { code: "?", message: "reply without ok" };
  return new Error(`${error.code}: ${error.message}`);
}

/** replyError of a body left undecoded. */
export function bodyError(bytes: Uint8Array, start: number, end: number): Error {
  return replyError(decoder.decode(bytes.subarray(start, end)) as Reply);
}

function settle(reply: Reply, resolve: (reply: Reply) => void, reject: (error: Error) => void): void {
  if (reply.ok === true) {
    resolve(reply);
    return;
  }
  reject(replyError(reply));
}
