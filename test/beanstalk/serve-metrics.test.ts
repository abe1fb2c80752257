// Goal: in a real `orq serve`, the beanstalkd port's traffic shows in the
// request metrics of /metrics beside the MessagePack port's, through the one
// request-done hook: `orq_requests_total{op="beanstalk:<command>",code}` with
// code OK or beanstalkd's negative answer, and
// `orq_request_duration_seconds{op="beanstalk:<command>"}`; the MessagePack
// ops keep their own series, and nothing from the beanstalkd port is folded
// into op "unknown".

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findSample, parsePrometheusText, type Exposition } from "../observability/prometheus-text.ts";
import { RawConnection } from "../support/raw-connection.ts";
import { ServerProcess } from "../support/server-process.ts";
import { BeanstalkWire } from "./support/beanstalk-wire.ts";

let server: ServerProcess;

beforeAll(async () => {
  server = await ServerProcess.start({ args: ["--beanstalk-port", "0", "--ui-port", "off"] });
});

afterAll(async () => {
  await server?.cleanup();
});

async function scrape(): Promise<Exposition> {
  const line = server.stdoutLines.find((l) => l.startsWith("orq http on "))!;
  const [, host, port] = /^orq http on (.+):(\d+)$/.exec(line)!;
  const response = await fetch(`http://${host}:${port}/metrics`);
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

function requests(exposition: Exposition, op: string, code: string): number | undefined {
  return findSample(exposition, "orq_requests_total", { op, code })?.value;
}

describe("the beanstalkd port in /metrics", () => {
  test("each command is counted by its op and code, and timed, beside the MessagePack ops", async () => {
    const wire = await BeanstalkWire.connect(server.beanstalkPort!);
    expect(await wire.command("use metered")).toBe("USING metered");
    wire.send("put 0 0 60 1\r\na\r\nput 0 0 60 1\r\nb\r\nput 0 0 60 1\r\nc\r\n");
    for (let i = 0; i < 3; i++) expect(await wire.answer()).toMatch(/^INSERTED \d+$/);
    expect(await wire.command("watch metered")).toBe("WATCHING 2");
    const id = /^RESERVED (\d+) 1\n/.exec(await wire.command("reserve"))![1]!;
    expect(await wire.command(`delete ${id}`)).toBe("DELETED");
    expect(await wire.command(`delete ${id}`)).toBe("NOT_FOUND");
    expect(await wire.command("reserve-with-timeout 0")).toMatch(/^RESERVED /);
    expect(await wire.command("reserve-with-timeout 0")).toMatch(/^RESERVED /);
    expect(await wire.command("reserve-with-timeout 0")).toBe("TIMED_OUT");
    expect(await wire.command("no-such-command")).toBe("UNKNOWN_COMMAND");
    wire.close();
    const msgpack = await RawConnection.connect(server.port);
    expect((await msgpack.call({ id: 1, op: "ping" })).ok).toBe(true);
    msgpack.close();

    const parsed = await scrape();
    expect(requests(parsed, "beanstalk:use", "OK")).toBe(1);
    expect(requests(parsed, "beanstalk:put", "OK")).toBe(3);
    expect(requests(parsed, "beanstalk:watch", "OK")).toBe(1);
    expect(requests(parsed, "beanstalk:reserve", "OK")).toBe(1);
    expect(requests(parsed, "beanstalk:delete", "OK")).toBe(1);
    expect(requests(parsed, "beanstalk:delete", "NOT_FOUND")).toBe(1);
    expect(requests(parsed, "beanstalk:reserve-with-timeout", "OK")).toBe(2);
    expect(requests(parsed, "beanstalk:reserve-with-timeout", "TIMED_OUT")).toBe(1);
    expect(requests(parsed, "beanstalk:unknown", "UNKNOWN_COMMAND")).toBe(1);
    expect(findSample(parsed, "orq_request_duration_seconds_count", { op: "beanstalk:put" })?.value).toBe(3);
    expect(findSample(parsed, "orq_request_duration_seconds_bucket", { op: "beanstalk:put", le: "+Inf" })?.value).toBe(3);
    // The MessagePack port's series are its own.
    expect(requests(parsed, "ping", "OK")).toBe(1);
    expect(findSample(parsed, "orq_requests_total", { op: "unknown" })).toBeUndefined();
    const beanstalkTotal = parsed.samples
      .filter((s) => s.name === "orq_requests_total" && s.labels.op!.startsWith("beanstalk:"))
      .reduce((sum, s) => sum + s.value, 0);
    expect(beanstalkTotal).toBe(12);
  });
});
