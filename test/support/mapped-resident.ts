// How much of a mapped file a process holds resident: the Rss of its
// mappings of that path in /proc/<pid>/smaps (Linux).

import { readFileSync } from "node:fs";

/** Resident KiB of every mapping of `path` in this process. */
export function mappedResidentKiB(pid: number | "self", path: string): number {
  let resident = 0;
  let inMapping = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMapping = line.endsWith(` ${path}`);
    else if (inMapping && line.startsWith("Rss:")) resident += Number(line.split(/\s+/)[1]);
  }
  return resident;
}
