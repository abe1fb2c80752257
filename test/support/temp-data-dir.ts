// A fresh data dir under the system temp dir for one test body, removed
// afterwards whatever the body did (the LMDB store tests open and reopen
// stores in it).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function withTempDataDir(prefix: string, run: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  try {
    await run(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
