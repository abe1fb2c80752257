// Plays one scripted session against a beanstalkd-protocol server and returns
// its transcript with job ids normalised ({1} is the first job id the server
// answered, {2} the second, ...), so the transcripts of beanstalkd and orq
// can be compared as strings.
//
// A step is a string:
//   "stats-tube t"            send the line (CRLF added) on connection 0, read one answer
//   "put 0 0 10 5\nhello"     "\n" becomes CRLF: a command with its body
//   "2> reserve"              the same on connection 2 (opened on first use)
//   "2> !close"               close connection 2
//   "!raw <text>"             send <text> (\n as CRLF) and read nothing
//   "!answer"                 read one answer (after !raw)
//   "delete {1}"              {n} becomes the real id of job n
//   "!until <regex> <step>"   repeat <step> until its raw answer matches <regex> (waits for a condition, bounded)
// Answers of stats, stats-job and stats-tube keep their keys and order; the
// values that depend on the process or the clock are replaced by <v>.

import { BeanstalkWire } from "./beanstalk-wire.ts";

/** Keys whose values depend on the process, the host or the clock. */
const volatileKeys = new Set([
  "age", "time-left", "pid", "version", "rusage-utime", "rusage-stime", "uptime", "id", "hostname", "os", "platform",
  "binlog-oldest-index", "binlog-current-index", "binlog-records-migrated", "binlog-records-written", "binlog-max-size",
  "total-connections", "current-connections", "pause-time-left",
  // Polled by !until steps: how many polls a wait takes depends on timing.
  "cmd-peek-ready", "cmd-stats-tube",
]);

/** How many times an !until step tries before it gives up (each try waits 50 ms: about 30 s in all). */
const untilTriesMax = 600;

export async function playScript(port: number, steps: readonly string[]): Promise<string> {
  const connections = new Map<number, BeanstalkWire>();
  const labels = new Map<string, string>();
  const ids: string[] = [];
  const transcript: string[] = [];
  const connection = async (index: number): Promise<BeanstalkWire> => {
    let wire = connections.get(index);
    if (wire === undefined) {
      wire = await BeanstalkWire.connect(port);
      connections.set(index, wire);
    }
    return wire;
  };
  const label = (id: string): string => {
    let name = labels.get(id);
    if (name === undefined) {
      ids.push(id);
      name = `{${ids.length}}`;
      labels.set(id, name);
    }
    return name;
  };
  const normalise = (answer: string): string => {
    let out = answer.replace(/^(INSERTED|BURIED|RESERVED|FOUND) (\d+)/, (_m, word: string, id: string) => `${word} ${label(id)}`);
    if (out.startsWith("OK ")) {
      // `id` is a job's id in stats-job, but the server's random instance id in stats (16 hex digits, which
      // are all decimal digits about once in 1,850 starts): only a job's id is labelled.
      const serverStats = /\npid: /.test(out);
      out = out
        .split("\n")
        .map((line, i) => {
          if (i === 0) return "OK <n>";
          const match = /^([a-z-]+): (.*)$/.exec(line);
          if (match === null) return line;
          if (match[1] === "id" && !serverStats && /^\d+$/.test(match[2]!)) return `id: ${label(match[2]!)}`;
          return volatileKeys.has(match[1]!) ? `${match[1]}: <v>` : line;
        })
        .join("\n");
    }
    return out;
  };
  const resolveIds = (text: string): string => text.replace(/\{(\d+)\}/g, (_m, n: string) => ids[Number(n) - 1] ?? "999999999");
  const run = async (step: string): Promise<string> => {
    const routed = /^(\d+)> (.*)$/s.exec(step);
    const index = routed === null ? 0 : Number(routed[1]);
    const body = routed === null ? step : routed[2]!;
    const wire = await connection(index);
    if (body === "!close") {
      wire.close();
      connections.delete(index);
      return "(closed)";
    }
    if (body.startsWith("!raw ")) {
      wire.send(resolveIds(body.slice(5)).replaceAll("\n", "\r\n"));
      return "(sent)";
    }
    if (body === "!answer") return wire.answer();
    return wire.command(resolveIds(body).replaceAll("\n", "\r\n"));
  };
  for (const step of steps) {
    const until = /^!until (\S+) (.*)$/s.exec(step);
    if (until === null) {
      transcript.push(`> ${step}`, `< ${normalise(await run(step))}`);
      continue;
    }
    const pattern = new RegExp(until[1]!);
    let answer = "";
    for (let tries = 0; tries < untilTriesMax; tries++) {
      answer = await run(until[2]!);
      if (pattern.test(answer)) break;
      await Bun.sleep(50);
    }
    transcript.push(`> ${step}`, `< ${normalise(answer)}`);
  }
  for (const wire of connections.values()) wire.close();
  return transcript.join("\n");
}
