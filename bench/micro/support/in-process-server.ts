// An orq server's request path in one process, without sockets, for the
// benches that measure what the server itself spends per request
// (acquisition-path, enqueue-path): an LMDB store in a fresh temporary data
// dir, its GroupCommitter, the Engine and the Dispatcher, on a ManualClock;
// and a reply sink that encodes each reply as a Connection would.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../../../src/engine/engine.ts";
import { ManualClock } from "../../../src/lib/clock.ts";
import type { Limits } from "../../../src/limits.ts";
import { FrameEncoder } from "../../../src/protocol/frame-encoder.ts";
import type { WireError } from "../../../src/protocol/wire-types.ts";
import { allNamespaces, TokenTable } from "../../../src/server/auth.ts";
import { Dispatcher, type RequestSource } from "../../../src/server/dispatcher.ts";
import { silentLogger } from "../../../src/server/logger.ts";
import type { Session } from "../../../src/server/op-types.ts";
import { OutputBufferPool } from "../../../src/server/output-buffers.ts";
import { OutputQueue } from "../../../src/server/output-queue.ts";
import { GroupCommitter } from "../../../src/storage/group-commit.ts";
import { openLmdbStore } from "../../../src/storage/lmdb/lmdb-store.ts";
import type { Durability, Store } from "../../../src/storage/store.ts";

/** Collects the replies and encodes each into an output queue, as a Connection does (the socket only counts the bytes). */
export class ReplySink implements RequestSource {
  readonly session: Session = { connectionId: 1, scope: allNamespaces, readOnly: false };
  readonly frames = new FrameEncoder();
  replies: Array<Record<string, unknown>> = [];
  bytes = 0;
  /**
   * Its buffer holds a whole round (1 MiB): a bench hands a round's replies
   * (320 dequeue replies, about 100 KB) to one queue in one turn, which with
   * the server's 64 KiB buffers grew a fresh one by doubling every round, a
   * cost no connection pays at a few dozen replies a turn.
   */
  private readonly output = new OutputQueue({ write: (_data, _offset, length) => ((this.bytes += length), length) }, () => {}, new OutputBufferPool(1 << 20));
  send(reply: Record<string, unknown>): void {
    this.frames.encodeTo(reply, this.output);
    this.replies.push(reply);
  }
  fail(error: WireError): void {
    throw new Error(`connection failed: ${error.code} ${error.message}`);
  }
  requestStarted(): void {}
  requestFinished(): void {}
}

export interface InProcessServer {
  store: Store;
  clock: ManualClock;
  writer: GroupCommitter;
  engine: Engine;
  dispatcher: Dispatcher;
  /** Waits for the last commit, closes the store and removes the data dir. */
  close(): Promise<void>;
}

/** A server over 16 LMDB shards in a new temporary dir named `orq-<name>-…`. */
export async function openInProcessServer(name: string, durability: Durability, limits: Limits): Promise<InProcessServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `orq-${name}-`));
  const store = await openLmdbStore({ dataDir, shards: 16, durability });
  const clock = new ManualClock(1_700_000_000_000);
  const writer = new GroupCommitter(store, { clock });
  const engine = Engine.recover({ store, writer, limits, namespaces: {}, nowMs: clock.nowMs() });
  const dispatcher = new Dispatcher({
    engine,
    limits,
    clock,
    tokens: new TokenTable([]),
    serverInfo: { version: "bench", nodeId: "bench", shards: 16 },
    logger: silentLogger,
    serverStats: () => ({}),
    fatal: (error) => {
      throw error;
    },
  });
  async function close(): Promise<void> {
    await writer.drain();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { store, clock, writer, engine, dispatcher, close };
}
