// Goal: MappedFilePages.drop() takes the LMDB map's pages out of the
// process's resident memory (the mapping's Rss in /proc/self/smaps falls to
// almost nothing) and reads afterwards still return the same bytes.

import { describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";
import { MappedFilePages, mappedRanges } from "../../src/storage/lmdb/map-pages.ts";
import { mappedResidentKiB } from "../support/mapped-resident.ts";
import { withTempDataDir } from "../support/temp-data-dir.ts";

describe.skipIf(process.platform !== "linux")("MappedFilePages", () => {
  test("drop() unmaps the resident pages; reads map them again with the same bytes", async () => {
    await withTempDataDir("orq-map-pages-", async (dataDir) => {
      const path = join(dataDir, "data.mdb");
      const env = open({ path, noSubdir: true });
      try {
        const value = new Uint8Array(300);
        await env.transaction(() => {
          for (let key = 0; key < 20_000; key++) env.putSync(key, value.fill(key % 251));
        });
        const readAll = () => {
          let sum = 0;
          for (let key = 0; key < 20_000; key++) sum += (env.getBinaryFast(key) as Uint8Array)[7] as number;
          return sum;
        };
        const expected = readAll();
        const real = realpathSync(path);
        expect(mappedRanges(real).length).toBeGreaterThan(0);
        const touchedKiB = mappedResidentKiB("self", real);
        // 20,000 records of 300 bytes: several MiB of pages, all read.
        expect(touchedKiB).toBeGreaterThan(4096);
        const pages = new MappedFilePages(path);
        expect(pages.supported).toBe(true);
        expect(pages.drop()).toBeGreaterThan(0);
        expect(mappedResidentKiB("self", real)).toBeLessThan(touchedKiB / 10);
        expect(readAll()).toBe(expected);
        expect(mappedResidentKiB("self", real)).toBeGreaterThan(touchedKiB / 2);
      } finally {
        await env.close();
      }
    });
  });

  test("a file this process does not map has no ranges, and drop() advises nothing", async () => {
    await withTempDataDir("orq-map-pages-", async (dataDir) => {
      const path = join(dataDir, "data.mdb");
      const env = open({ path, noSubdir: true });
      await env.close();
      expect(mappedRanges(realpathSync(path))).toEqual([]);
      expect(new MappedFilePages(path).drop()).toBe(0);
    });
  });
});
