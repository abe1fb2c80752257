// A strict reader of the Prometheus text exposition format 0.0.4, for tests:
// every line must be blank, a `# HELP`/`# TYPE` comment, or a sample
// `name{label="value",...} value [timestamp]`. It throws on anything else, so
// a test that parses a scrape proves the whole scrape is valid.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  helps: Map<string, string>;
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const metricTypes = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

// Prometheus reads values with Go's ParseFloat, which matches NaN and Inf
// without regard to case; prom-client writes NaN as "Nan".
function parseValue(token: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(token)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(token)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(token)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(token)) throw new Error(`bad sample value ${JSON.stringify(token)} in: ${line}`);
  return Number(token);
}

/** Reads `{a="x",b="y\"z"}` starting at `text[0] === "{"`; returns labels and the rest. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let position = 1;
  // Bounded by the line's length: each pass consumes at least one character.
  while (position < text.length) {
    if (text[position] === "}") return { labels, rest: text.slice(position + 1) };
    const name = labelName.exec(text.slice(position));
    if (name === null) throw new Error(`bad label name in: ${line}`);
    position += name[0].length;
    if (text.slice(position, position + 2) !== '="') throw new Error(`expected =" after label ${name[0]} in: ${line}`);
    position += 2;
    let value = "";
    while (position < text.length && text[position] !== '"') {
      if (text[position] === "\\") {
        const escaped = text[position + 1];
        if (escaped === "n") value += "\n";
        else if (escaped === "\\" || escaped === '"') value += escaped;
        else throw new Error(`bad escape in label value in: ${line}`);
        position += 2;
      } else {
        value += text[position];
        position += 1;
      }
    }
    if (text[position] !== '"') throw new Error(`unterminated label value in: ${line}`);
    position += 1;
    if (Object.hasOwn(labels, name[0])) throw new Error(`duplicate label ${name[0]} in: ${line}`);
    labels[name[0]] = value;
    if (text[position] === ",") position += 1;
    else if (text[position] !== "}") throw new Error(`expected , or } in: ${line}`);
  }
  throw new Error(`unterminated label set in: ${line}`);
}

export function parsePrometheusText(body: string): Exposition {
  const exposition: Exposition = { samples: [], types: new Map(), helps: new Map() };
  for (const line of body.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
      if (comment === null) {
        if (line.startsWith("# HELP") || line.startsWith("# TYPE")) throw new Error(`bad comment: ${line}`);
        continue; // other comments are allowed by the format
      }
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      if (kind === "TYPE") {
        if (!metricTypes.has(rest)) throw new Error(`unknown metric type in: ${line}`);
        if (exposition.types.has(name)) throw new Error(`second TYPE for ${name}`);
        exposition.types.set(name, rest);
      } else {
        exposition.helps.set(name, rest);
      }
      continue;
    }
    const name = metricName.exec(line);
    if (name === null) throw new Error(`bad metric name in: ${line}`);
    let rest = line.slice(name[0].length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line));
    const tokens = rest.trim().split(" ");
    if (!rest.startsWith(" ") || tokens.length < 1 || tokens.length > 2) throw new Error(`bad sample: ${line}`);
    const value = parseValue(tokens[0] ?? "", line);
    if (tokens[1] !== undefined && !/^-?\d+$/.test(tokens[1])) throw new Error(`bad timestamp in: ${line}`);
    exposition.samples.push({ name: name[0], labels, value });
  }
  return exposition;
}

/** The one sample with this name and exactly these label values (others ignored), or undefined. */
export function findSample(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample | undefined {
  return exposition.samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}
