// Goal: OrqClusterClient routes the newer ops as its header says, seen from
// two stand-in nodes that own alternate shards: `wait` goes to each id's
// owner with only its ids, and the answers come back in request order; an
// ack's results travel with their receipts to each owner (and a results
// array of the wrong length is refused before any split); the schedule ops
// go to one node, the seed.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { OrqClusterClient, OrqError } from "../../src/client/index.ts";
import { startRecordingWireServer, type RecordingWireServer, type WireRequest } from "../support/recording-wire-server.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
let seed: RecordingWireServer;
let other: RecordingWireServer;
let cluster: OrqClusterClient;

function nodeAnswer(nodeId: string): (request: WireRequest) => Record<string, unknown> {
  return (request) => {
    switch (request.op) {
      case "cluster":
        return {
          cluster: {
            map_version: 1,
            node_id: nodeId,
            nodes: [
              { node_id: "a", addr: `127.0.0.1:${seed.port}` },
              { node_id: "b", addr: `127.0.0.1:${other.port}` },
            ],
            owners: ["a", "b", "a", "b"],
          },
        };
      case "wait":
        return { items: (request.ids as string[]).map((id) => ({ id, state: "ended", outcome: "acked", result: bytes(`${nodeId}:${id}`) })) };
      case "ack":
        return { acked: (request.receipts as unknown[]).length, stale: [] };
      case "schedule":
        return { name: request.name, next_at_ms: 1 };
      case "unschedule":
        return { removed: true };
      case "schedules":
        return { schedules: [] };
      default:
        return {};
    }
  };
}

beforeAll(async () => {
  seed = await startRecordingWireServer(nodeAnswer("a"));
  other = await startRecordingWireServer(nodeAnswer("b"));
  cluster = await OrqClusterClient.connect({ port: seed.port });
});

afterAll(async () => {
  await cluster.close();
  await seed.stop();
  await other.stop();
});

test("waitFor asks each id's owner for its ids only, and answers in request order", async () => {
  const items = await cluster.waitFor("n", ["0:1", "1:1", "2:5", "3:2"], 1_000);
  expect(seed.sent("wait").map((r) => r.ids)).toEqual([["0:1", "2:5"]]);
  expect(other.sent("wait").map((r) => r.ids)).toEqual([["1:1", "3:2"]]);
  expect(seed.sent("wait")[0]!.wait_ms).toBe(1_000);
  expect(items.map((item) => new TextDecoder().decode((item as { result: Uint8Array }).result))).toEqual(["a:0:1", "b:1:1", "a:2:5", "b:3:2"]);
});

test("an ack's results travel with their receipts to each owner", async () => {
  expect(await cluster.ack("n", ["0:1:1:1", "1:2:1:1", "2:3:1:1"], { results: ["x", null, bytes("z")] })).toEqual({ acked: 3, stale: [] });
  expect(seed.sent("ack").at(-1)).toMatchObject({ receipts: ["0:1:1:1", "2:3:1:1"], results: [bytes("x"), bytes("z")] });
  expect(other.sent("ack").at(-1)).toMatchObject({ receipts: ["1:2:1:1"], results: [null] });
  await cluster.ack("n", ["1:9:1:1"]);
  expect("results" in other.sent("ack").at(-1)!).toBe(false);
});

test("a results array of another length than the receipts is refused before anything is sent", async () => {
  const acksBefore = seed.sent("ack").length + other.sent("ack").length;
  const error = await cluster.ack("n", ["0:1:1:1", "1:2:1:1"], { results: ["only one"] }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OrqError);
  expect((error as OrqError).code).toBe("BAD_REQUEST");
  expect((error as OrqError).details.field).toBe("results");
  expect(seed.sent("ack").length + other.sent("ack").length).toBe(acksBefore);
});

test("the schedule ops go to the seed only", async () => {
  await cluster.schedule("n", { name: "s", everyMs: 1_000, item: { topic: "t" } });
  await cluster.schedules("n");
  await cluster.unschedule("n", "s");
  expect(seed.requests.filter((r) => ["schedule", "schedules", "unschedule"].includes(r.op)).map((r) => r.op)).toEqual(["schedule", "schedules", "unschedule"]);
  expect(other.requests.filter((r) => ["schedule", "schedules", "unschedule"].includes(r.op))).toEqual([]);
});
