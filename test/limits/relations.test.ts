// Goal: the relations between limits that the code relies on
// (limitRelationProblems in src/limits.ts) hold for the defaults, and each one
// broken is reported by name, with the values, and makes checkLimitRelations
// throw (as it would at module load, or for `orq serve`'s configuration).
// The ids and receipts orq makes fit the bounds the server reads them with.

import { describe, expect, test } from "bun:test";
import { formatId, formatReceipt } from "../../src/engine/state/ids.ts";
import { checkLimitRelations, defaultLimits, idBytesLongest, type Limits, limitRelationProblems, receiptBytesLongest } from "../../src/limits.ts";

function problemsWith(change: Partial<Limits>): string[] {
  return limitRelationProblems({ ...defaultLimits, ...change });
}

describe("limit relations", () => {
  test("the defaults keep every relation", () => {
    expect(limitRelationProblems(defaultLimits)).toEqual([]);
    expect(() => checkLimitRelations(defaultLimits)).not.toThrow();
  });

  test.each([
    [{ payloadBytesMax: 4 * 1024 * 1024 }, "frameBytesMax (4194304) cannot hold one item"],
    [{ frameBytesMax: 64 * 1024, payloadBytesMax: 1024, resultBytesMax: 1024 }, "cannot hold an ack of idsPerRequestMax (1000) receipts"],
    [{ resultBytesMax: 4 * 1024 * 1024 }, "cannot hold an ack with one result of resultBytesMax (4194304)"],
    [{ itemWaitsPerConnectionMax: 200_000 }, "itemWaitsPerConnectionMax (200000) is over itemWaitsTotalMax (100000)"],
    [{ idBytesMax: 20 }, "idBytesMax (20) is below the longest id orq makes (33)"],
    [{ receiptBytesMax: 64 }, "receiptBytesMax (64) is below the longest receipt orq makes (67)"],
    [{ leaseMsMax: 10_000 }, "leaseMsMax (10000) is below the default lease (30000)"],
    [{ listPageDefault: 2000 }, "listPageDefault (2000) is over listPageMax (1000)"],
    [{ waitersPerConnectionMax: 200_000 }, "waitersPerConnectionMax (200000) is over waitersTotalMax (100000)"],
    [{ unmatchableAskWindowMs: 5 * 60 * 1000 }, "unmatchableAskWindowMs (300000) is not longer than waitMsMax (300000)"],
    [{ liveItemsMax: 0 }, "liveItemsMax is 0, not an integer of at least 1"],
    [{ deadlinesPerTickMax: 1.5 }, "deadlinesPerTickMax is 1.5, not an integer of at least 1"],
  ] as Array<[Partial<Limits>, string]>)("%o breaks: %s", (change, message) => {
    const problems = problemsWith(change);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
    expect(() => checkLimitRelations({ ...defaultLimits, ...change })).toThrow(message);
  });

  test("zero-byte payloads, metadata, results and beanstalkd jobs are allowed", () => {
    expect(problemsWith({ payloadBytesMax: 0, metadataBytesMax: 0, resultBytesMax: 0, beanstalkJobBytesMax: 0 })).toEqual([]);
  });

  test("every broken relation is named at once", () => {
    expect(problemsWith({ idBytesMax: 1, receiptBytesMax: 1, listPageDefault: 5000 })).toHaveLength(3);
  });

  test("the longest id and receipt orq makes are the lengths the relations assume", () => {
    const largest = Number.MAX_SAFE_INTEGER;
    expect(String(largest)).toHaveLength(16);
    const id = formatId(largest, largest);
    expect(id.length).toBe(idBytesLongest);
    expect(formatReceipt(id, largest, largest).length).toBe(receiptBytesLongest);
  });
});
