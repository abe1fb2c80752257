// The YAML beanstalkd writes for stats, stats-job, stats-tube and the tube
// lists: "---\n", one `key: value` or `- name` per line. beanstalkd 1.12
// (Debian's, the reference) quotes only `version` (quoted()); tube names,
// hostname, os and platform are bare (later versions quote them too).

export type YamlValue = string | number;

export function yamlMap(entries: ReadonlyArray<readonly [string, YamlValue]>): Uint8Array {
  let text = "---\n";
  for (const [key, value] of entries) text += `${key}: ${value}\n`;
  return Buffer.from(text, "latin1");
}

export function yamlList(names: readonly string[]): Uint8Array {
  let text = "---\n";
  for (const name of names) text += `- ${name}\n`;
  return Buffer.from(text, "latin1");
}

/** A double-quoted YAML string, as beanstalkd's printf("\"%s\"") writes it (names hold no quote). */
export function quoted(text: string): string {
  return `"${text}"`;
}

/** Seconds and microseconds, as beanstalkd's rusage fields ("%d.%06d"). */
export function secondsMicros(micros: number): string {
  const whole = Math.floor(micros / 1_000_000);
  return `${whole}.${String(Math.floor(micros % 1_000_000)).padStart(6, "0")}`;
}
