// Random requirements and capability maps over a small feature and value
// pool, so that matches and misses are both common, drawn from a caller's
// seeded generator (test/support/seeded-random.ts). Shared by the matcher
// tests and the matcher benchmark.

const featurePool = ["os", "arch", "gpu", "mem", "zone", "tags", "cores", "fast"];
const valuePool: Array<string | number | boolean> = ["linux", "arm", "x86", "a100", "t4", 4, 8, 8.5, 16, 32, true, false, "8"];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

function values(random: () => number, max: number): Array<string | number | boolean> {
  const count = 1 + Math.floor(random() * max);
  return Array.from({ length: count }, () => pick(random, valuePool));
}

function constraint(random: () => number): unknown {
  const form = Math.floor(random() * 9);
  const number = pick(random, [2, 4, 8, 16, 24]);
  switch (form) {
    case 0:
      return pick(random, valuePool);
    case 1:
      return { in: values(random, 3) };
    case 2:
      return { all: values(random, 2) };
    case 3:
      return { gte: number };
    case 4:
      return { gt: number, lte: number * 2 };
    case 5:
      return { lt: number };
    case 6:
      return { ne: pick(random, valuePool) };
    case 7:
      return { exists: random() < 0.5 };
    default:
      return { ne: pick(random, valuePool), exists: true };
  }
}

export function randomRequires(random: () => number, featuresMax = 3): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const count = 1 + Math.floor(random() * featuresMax);
  for (let i = 0; i < count; i++) raw[pick(random, featurePool)] = constraint(random);
  return raw;
}

export function randomCapabilities(random: () => number): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const feature of featurePool) {
    const roll = random();
    if (roll < 0.35) continue;
    raw[feature] = roll < 0.7 ? pick(random, valuePool) : values(random, 4);
  }
  return raw;
}
