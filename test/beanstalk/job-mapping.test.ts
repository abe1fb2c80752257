// Goal: job ids round-trip with orq ids (every shard up to 1,024, keys from 0
// to past 2^32), never read as 0, accept leading zeros, and refuse what names
// no item; priorities keep their order across the 2^31 offset; TTR and delay
// are cut to orq's limits; tube names follow beanstalkd's rules at 200 and 201 bytes.

import { describe, expect, test } from "bun:test";
import { beanstalkPriorityOf, delayMsOfSeconds, jobIdOf, leaseMsOfTtr, orqIdOf, orqPriorityOf } from "../../src/beanstalk/job-mapping.ts";
import { isValidTubeName } from "../../src/beanstalk/tube-names.ts";

describe("job ids", () => {
  test("round trip and shape", () => {
    for (const shard of [0, 1, 9, 15, 999, 1023]) {
      for (const key of [0, 1, 42, 2 ** 32 + 7, 2 ** 40]) {
        const orqId = `${shard}:${key}`;
        const jobId = jobIdOf(orqId);
        expect(jobId).toMatch(/^[1-9]\d{4,}$/);
        expect(orqIdOf(jobId)).toBe(orqId);
        expect(orqIdOf(`000${jobId}`)).toBe(orqId);
      }
    }
    expect(jobIdOf("3:0")).toBe("10003");
    expect(jobIdOf("3:41")).toBe("420003");
  });

  test("ids that name no item", () => {
    for (const text of ["0", "1", "9999", "00009999", "12345678901234567890123", ""]) expect(orqIdOf(text)).toBeNull();
  });
});

describe("priorities, TTR and delay", () => {
  test("priority order is kept and round-trips", () => {
    const samples = [0, 1, 1023, 1024, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];
    for (let i = 0; i < samples.length; i++) {
      const orq = orqPriorityOf(samples[i]!);
      expect(orq).toBeGreaterThanOrEqual(-(2 ** 31));
      expect(orq).toBeLessThanOrEqual(2 ** 31 - 1);
      expect(beanstalkPriorityOf(orq)).toBe(samples[i]!);
      if (i > 0) expect(orq).toBeGreaterThan(orqPriorityOf(samples[i - 1]!));
    }
  });

  test("TTR 0 is 1 s; TTR and delay are cut to orq's maxima", () => {
    expect(leaseMsOfTtr(0, 43_200_000)).toBe(1000);
    expect(leaseMsOfTtr(5, 43_200_000)).toBe(5000);
    expect(leaseMsOfTtr(2 ** 32 - 1, 43_200_000)).toBe(43_200_000);
    expect(delayMsOfSeconds(3, 1000 * 3600)).toBe(3000);
    expect(delayMsOfSeconds(2 ** 32 - 1, 1000 * 3600)).toBe(1000 * 3600);
  });
});

describe("tube names", () => {
  test("beanstalkd's characters, no leading hyphen, 1..200 bytes", () => {
    expect(isValidTubeName("a-Z_0+/;.$()", 200)).toBe(true);
    expect(isValidTubeName("t".repeat(200), 200)).toBe(true);
    expect(isValidTubeName("t".repeat(201), 200)).toBe(false);
    for (const bad of ["", "-a", "a b", "a\tb", "é", "a,b", "a*"]) expect(isValidTubeName(bad, 200)).toBe(false);
  });
});
