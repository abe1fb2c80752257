// Goal: the listener both front ends stand on, with a stand-in connection:
// it accepts connectionsMax connections and refuses the next with the front
// end's refusal bytes (limit-1, limit, limit+1), refuses every connection once
// it stops accepting, numbers connections from 1, and sends an AssertionError
// thrown from a socket event (data, close) to the fatal handler with the front
// end and the connection, while any other throw is only logged.

import { afterEach, describe, expect, test } from "bun:test";
import { Socket } from "node:net";
import { AssertionError } from "../../src/lib/assert.ts";
import type { LogFields, Logger } from "../../src/server/logger.ts";
import { type ConnectionSocket, Listener, type ListenedConnection, type RefusalReason } from "../../src/server/listener.ts";

class StandIn implements ListenedConnection {
  readonly chunks: string[] = [];
  closedBySocket = false;
  throwOnData: Error | null = null;
  throwOnClose: Error | null = null;
  constructor(
    readonly id: number,
    readonly socket: ConnectionSocket,
  ) {}
  onData(chunk: Uint8Array): void {
    this.chunks.push(Buffer.from(chunk).toString());
    if (this.throwOnData !== null) throw this.throwOnData;
    this.socket.write(new TextEncoder().encode(`ack ${this.id}\n`));
  }
  onDrain(): void {}
  onClose(): void {
    this.closedBySocket = true;
    if (this.throwOnClose !== null) throw this.throwOnClose;
  }
  closeWhenFlushed(): void {
    this.socket.end();
  }
}

interface Fixture {
  listener: Listener<StandIn>;
  accepted: StandIn[];
  fatal: Array<{ error: unknown; context: LogFields }>;
  logged: Array<{ message: string; fields: LogFields | undefined }>;
}

const listeners: Array<Listener<StandIn>> = [];
afterEach(() => {
  for (const listener of listeners.splice(0)) listener.close();
});

function listen(connectionsMax: number): Fixture {
  const accepted: StandIn[] = [];
  const fatal: Fixture["fatal"] = [];
  const logged: Fixture["logged"] = [];
  const record = (message: string, fields?: LogFields) => logged.push({ message, fields });
  const logger: Logger = { debug: record, info: record, warn: record, error: record, fatal: record };
  const listener = new Listener<StandIn>({
    host: "127.0.0.1",
    port: 0,
    connectionsMax,
    frontEnd: "test",
    logger,
    fatal: (error, context) => fatal.push({ error, context }),
    accept: (id, socket) => {
      const connection = new StandIn(id, socket);
      accepted.push(connection);
      return connection;
    },
    refusal: (reason: RefusalReason) => new TextEncoder().encode(`refused: ${reason}\n`),
  });
  listeners.push(listener);
  return { listener, accepted, fatal, logged };
}

/** A client socket and everything it receives until the server closes it. */
async function client(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = new Socket();
  let text = "";
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  await new Promise<void>((resolve) => socket.connect(port, "127.0.0.1", resolve));
  return { socket, received: () => text, closed };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await Bun.sleep(5);
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

describe("accepting", () => {
  test("connectionsMax are accepted and numbered from 1; the next is refused with the front end's bytes and closed", async () => {
    const f = listen(3);
    const clients = [];
    // limit-1 and limit: accepted.
    for (let i = 0; i < 3; i++) {
      clients.push(await client(f.listener.port));
      await until(() => f.listener.connectionCount === i + 1, `connection ${i + 1}`);
    }
    expect(f.accepted.map((c) => c.id)).toEqual([1, 2, 3]);
    // limit+1: refused.
    const refused = await client(f.listener.port);
    await refused.closed;
    expect(refused.received()).toBe("refused: too many connections\n");
    expect(f.listener.connectionCount).toBe(3);
    expect(f.logged.some((l) => l.message === "connection refused" && l.fields?.front_end === "test")).toBe(true);
    // One closes: there is room again.
    clients[0]!.socket.end();
    await until(() => f.listener.connectionCount === 2, "the close");
    expect(f.accepted[0]!.closedBySocket).toBe(true);
    const again = await client(f.listener.port);
    again.socket.write("hi");
    // The refused one took no number.
    await until(() => again.received() === "ack 4\n", "the new connection's answer");
    for (const c of [...clients, again]) c.socket.destroy();
  });

  test("once it stops accepting, the open connections stay and no new one is accepted", async () => {
    const f = listen(10);
    const open = await client(f.listener.port);
    await until(() => f.listener.connectionCount === 1, "the connection");
    f.listener.stopAccepting();
    // The listening socket is gone (connect fails), or a connection caught in the window is told "draining".
    const late = new Socket();
    let lateText = "";
    late.on("data", (chunk: Buffer) => {
      lateText += chunk.toString();
    });
    await new Promise<void>((resolve) => {
      late.on("error", () => resolve());
      late.on("close", () => resolve());
      late.connect(f.listener.port, "127.0.0.1");
    });
    expect(["", "refused: draining\n"]).toContain(lateText);
    open.socket.write("still here");
    await until(() => open.received() === "ack 1\n", "an answer on the open connection");
    expect(f.listener.connectionCount).toBe(1);
    f.listener.close();
    await open.closed;
  });
});

describe("throws from socket events", () => {
  test("an AssertionError from data reaches the fatal handler with the front end and the connection", async () => {
    const f = listen(10);
    const c = await client(f.listener.port);
    await until(() => f.accepted.length === 1, "the connection");
    f.accepted[0]!.throwOnData = new AssertionError("broken in data");
    c.socket.write("x");
    await until(() => f.fatal.length === 1, "the fatal call");
    expect(f.fatal[0]!.error).toBeInstanceOf(AssertionError);
    expect(f.fatal[0]!.context).toEqual({ front_end: "test", connection: 1 });
    c.socket.destroy();
  });

  test("an AssertionError from close reaches the fatal handler; the connection has left the listener", async () => {
    const f = listen(10);
    const c = await client(f.listener.port);
    await until(() => f.accepted.length === 1, "the connection");
    f.accepted[0]!.throwOnClose = new AssertionError("broken in close");
    c.socket.end();
    await until(() => f.fatal.length === 1, "the fatal call");
    expect((f.fatal[0]!.error as Error).message).toContain("broken in close");
    expect(f.listener.connectionCount).toBe(0);
  });

  test("any other throw is logged at debug level, not fatal", async () => {
    const f = listen(10);
    const c = await client(f.listener.port);
    await until(() => f.accepted.length === 1, "the connection");
    f.accepted[0]!.throwOnData = new Error("an ordinary bug");
    c.socket.write("x");
    await until(() => f.logged.some((l) => l.message === "socket error"), "the socket error line");
    expect(f.fatal).toEqual([]);
    c.socket.destroy();
  });
});
