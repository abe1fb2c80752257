// The dashboard's way into the queue: requests built as a client would send
// them, handed to the same Dispatcher as the TCP port (Dispatcher.handleRequest),
// with the signed-in token's Session. So authentication, namespace scope, the
// read-only role, field checks and error codes have one code path; the
// dashboard never calls an engine op directly. Replies come back in wire form
// (snake_case, payloads as bytes), exactly what a TCP client would decode.

import type { OpName } from "../protocol/op-names.ts";
import { plainReply } from "../protocol/reply-encoder.ts";
import type { WireError } from "../protocol/wire-types.ts";
import type { RequestSource } from "../server/dispatcher.ts";
import type { Session } from "../server/op-types.ts";
import type { Source } from "../server/request-reader.ts";

export type OpReply = { ok: true; value: Record<string, unknown> } | { ok: false; error: WireError };

/** A failed op, thrown by callOrThrow so a page can answer with the op's own code and message. */
export class OpError extends Error {
  override name = "OpError";
  constructor(
    readonly op: string,
    readonly error: WireError,
  ) {
    super(`${op}: ${error.code}: ${error.message}`);
  }
}

/** The server's dispatcher, as the TCP connections use it (OrqServer.handleRequest). */
export interface RequestHandler {
  handleRequest(source: RequestSource, request: Source): void;
}

export class OpCaller {
  private nextRequestId = 1;

  constructor(private readonly dispatcher: RequestHandler) {}

  /** One op; `metered: false` for the server's own background calls (see RequestSource.metered). */
  call(session: Session, op: OpName, fields: Record<string, unknown>, metered = true): Promise<OpReply> {
    return new Promise((resolve) => {
      let settled = false;
      const source: RequestSource = {
        session,
        metered,
        send(reply: Source): void {
          if (settled) return;
          settled = true;
          const { id: _id, ok, error, ...value } = plainReply(reply as Record<string, unknown>);
          resolve(ok === true ? { ok: true, value } : { ok: false, error: error as WireError });
        },
        fail(error: WireError): void {
          if (settled) return;
          settled = true;
          resolve({ ok: false, error });
        },
        requestStarted(): void {},
        requestFinished(): void {},
      };
      const id = this.nextRequestId;
      this.nextRequestId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
      this.dispatcher.handleRequest(source, { ...fields, id, op });
    });
  }

  async callOrThrow(session: Session, op: OpName, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reply = await this.call(session, op, fields);
    if (!reply.ok) throw new OpError(op, reply.error);
    return reply.value;
  }
}
