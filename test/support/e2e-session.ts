// One real `orq serve` and one raw connection to it for an end-to-end test
// file: started before the file's tests and stopped after them, with the
// request helpers the op tests share (a request that must succeed, enqueue,
// dequeue, get) and the reply shapes they read, in the contract's snake_case.

import { afterAll, beforeAll } from "bun:test";
import { RawConnection, type ReplyMap } from "./raw-connection.ts";
import { ServerProcess } from "./server-process.ts";

export type Delivery = { id: string; topic: string; priority: number; payload: Uint8Array; metadata: Uint8Array; attempt: number; receipt: string; lease_expires_at_ms: number; enqueued_at_ms: number };
/** An item state as get returns it; get's entries may also be null (checked with toBeNull). */
export type State = { id: string; state: string } & Record<string, any>;

export type E2eSession = {
  /** The file's server; read it inside tests (it starts in beforeAll). */
  readonly server: ServerProcess;
  /** The file's connection; read it inside tests (it opens in beforeAll). */
  readonly conn: RawConnection;
  /** Sends `request` (on the session's connection unless `via` is given) and throws unless the reply is ok. */
  ok(request: Record<string, unknown>, via?: RawConnection): Promise<ReplyMap>;
  enqueue(ns: string, items: Array<Record<string, unknown>>): Promise<string[]>;
  dequeue(ns: string, topics: Array<{ topic: string; count?: number }>, extra?: Record<string, unknown>): Promise<Delivery[]>;
  get(ns: string, ids: string[]): Promise<State[]>;
};

/** Registers the file's beforeAll/afterAll that start and stop a server run with `serverArgs`. */
export function startE2eSession(serverArgs: string[]): E2eSession {
  let server: ServerProcess | undefined;
  let conn: RawConnection | undefined;

  beforeAll(async () => {
    server = await ServerProcess.start({ args: serverArgs });
    conn = await RawConnection.connect(server.port);
  });

  afterAll(async () => {
    conn?.close();
    await server?.cleanup();
  });

  const ok = async (request: Record<string, unknown>, via?: RawConnection): Promise<ReplyMap> => {
    const reply = await (via ?? session.conn).call(request);
    if (!reply.ok) throw new Error(`${String(request.op)} failed: ${JSON.stringify(reply.error)}`);
    return reply;
  };

  const session: E2eSession = {
    get server(): ServerProcess {
      if (server === undefined) throw new Error("the e2e server starts in beforeAll; use it inside tests");
      return server;
    },
    get conn(): RawConnection {
      if (conn === undefined) throw new Error("the e2e connection opens in beforeAll; use it inside tests");
      return conn;
    },
    ok,
    enqueue: async (ns, items) => (await ok({ op: "enqueue", ns, items })).ids as string[],
    dequeue: async (ns, topics, extra = {}) => (await ok({ op: "dequeue", ns, topics, ...extra })).items as Delivery[],
    get: async (ns, ids) => (await ok({ op: "get", ns, ids })).items as State[],
  };
  return session;
}
