// The matching picks' workload, shared by matching-pick.bench.ts and
// group-pick.bench.ts: 1,000 distinct `requires` signatures to draw items'
// requirements from, and the ten worker kinds whose capabilities the timed
// dequeues carry. Both benches draw the signatures they use from one seeded
// stream, so two runs build the same items.

import { defaultLimits } from "../../../src/limits.ts";
import { parseCapabilities, parseRequires, satisfies, type Requires } from "../../../src/engine/matching/index.ts";

/** 1,000 distinct requirements: gpu (4 forms) x zone (5 forms) x a memory floor (50 values), all on linux. */
export function signatureCorpus(): Array<Record<string, unknown>> {
  const gpuForms: unknown[] = [null, "a100", "t4", { in: ["a100", "h100"] }];
  const zoneForms: unknown[] = [null, "eu-1", { in: ["eu-1", "eu-2"] }, { ne: "us-1" }, { in: ["us-1", "us-2"] }];
  const corpus: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 1000; i++) {
    const raw: Record<string, unknown> = { os: "linux", mem: { gte: 4 + Math.floor(i / 20) } };
    const gpu = gpuForms[i % 4];
    const zone = zoneForms[Math.floor(i / 4) % 5];
    if (gpu !== null) raw.gpu = gpu;
    if (zone !== null) raw.zone = zone;
    corpus.push(raw);
  }
  return corpus;
}

/** Ten worker kinds, from small CPU boxes to GPU hosts in several zones. */
export const workerCapabilities: Array<Record<string, unknown>> = [
  { os: "linux", mem: 16, zone: "eu-1" },
  { os: "linux", mem: 32, zone: "eu-2" },
  { os: "linux", mem: 64, zone: "us-1" },
  { os: "linux", mem: 64, zone: "us-2", gpu: "t4" },
  { os: "linux", mem: 128, zone: "eu-1", gpu: ["a100", "t4"] },
  { os: "linux", mem: 128, zone: "eu-2", gpu: "h100" },
  { os: "linux", mem: 48, zone: "ap-1", gpu: "a100" },
  { os: "linux", mem: 24, zone: "eu-1", gpu: "t4" },
  { os: "linux", mem: 256, zone: "us-1", gpu: ["a100", "h100"] },
  { os: "linux", mem: 8, zone: "eu-2" },
];

/** `count` signatures of the corpus: a seeded shuffle with `random`, then the first `count`, so the chosen ones spread over every form. */
export function chooseSignatures(count: number, random: () => number): Array<Record<string, unknown>> {
  const corpus = signatureCorpus();
  for (let i = corpus.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [corpus[i], corpus[j]] = [corpus[j] as Record<string, unknown>, corpus[i] as Record<string, unknown>];
  }
  return corpus.slice(0, count);
}

/** Per worker kind, the share of `signatures` it may take (1 for every kind when there are none: items without requires). */
export function eligibleShares(signatures: Array<Record<string, unknown>>): number[] {
  const parsed = signatures.map((raw) => (parseRequires(raw, defaultLimits) as { value: Requires }).value);
  return workerCapabilities.map((raw) => {
    const caps = parseCapabilities(raw, defaultLimits);
    if (!caps.ok) throw new Error("bad capabilities");
    return parsed.length === 0 ? 1 : parsed.filter((r) => satisfies(r, caps.value)).length / parsed.length;
  });
}
