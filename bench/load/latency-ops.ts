// The sequential round trips the latency scenario times, per system: orq's
// ping, enqueue of 1 item, dequeue of 1 then ack; beanstalkd's put, reserve
// then delete; the echo floor's ping-sized frame. Each op waits for its reply
// before the next is sent, on one connection.

import type { BeanstalkConn } from "./beanstalk-conn.ts";
import { OrqConn, makeTemplate } from "./orq-conn.ts";
import type { LatencyOp } from "./runners.ts";
import { NAMESPACE, dequeueTemplate, enqueueTemplate, fixedPayload } from "./systems.ts";

export function orqLatencyOps(conn: OrqConn): LatencyOp[] {
  const ping = makeTemplate({ op: "ping" });
  const enqueue1 = enqueueTemplate(1);
  const dequeue1 = dequeueTemplate(1, 0);
  return [
    { name: "ping", run: async () => (await conn.callTemplate(ping), 0) },
    { name: "enqueue1", run: async () => (await conn.callTemplate(enqueue1), 0) },
    {
      name: "dequeue1+ack",
      firstStepName: "dequeue1",
      run: async () => {
        const reply = await conn.callTemplate(dequeue1);
        const firstEndNs = Bun.nanoseconds();
        const items = reply.items as Array<{ receipt: string }>;
        const item = items[0];
        if (item === undefined) throw new Error("latency: dequeue found the queue empty");
        await conn.call({ op: "ack", ns: NAMESPACE, receipts: [item.receipt] });
        return firstEndNs;
      },
    },
  ];
}

/** Idle time before each of the floor's cold round trips: about what a strict ack's fsync keeps the dequeue-1 client waiting. */
export const FLOOR_PAUSE_MS = 1;

/**
 * The floor sends the same ping frame orq gets and reads back the echo: back
 * to back (the floor every ratio is taken against), and after
 * FLOOR_PAUSE_MS asleep, which is what any server's round trip costs when it
 * comes after an idle spell, as orq strict's dequeue of 1 does.
 */
export function floorLatencyOps(conn: OrqConn): LatencyOp[] {
  const ping = makeTemplate({ op: "ping" });
  const run = async () => (await conn.callTemplateRaw(ping), 0);
  return [
    { name: "ping", run },
    { name: "ping after pause", pauseMs: FLOOR_PAUSE_MS, run },
  ];
}

export function beanstalkLatencyOps(conn: BeanstalkConn): LatencyOp[] {
  const payload = fixedPayload();
  const put = () =>
    new Promise<void>((resolve, reject) =>
      conn.put(payload, (line) => (line.startsWith("INSERTED") ? resolve() : reject(new Error(`put: ${line}`)))),
    );
  return [
    { name: "enqueue1", run: async () => (await put(), 0) },
    {
      name: "dequeue1+ack",
      firstStepName: "dequeue1",
      run: async () => {
        const line = await conn.call("reserve-with-timeout 0", "RESERVED");
        const firstEndNs = Bun.nanoseconds();
        await conn.call(`delete ${line.split(" ")[1]}`, "DELETED");
        return firstEndNs;
      },
    },
  ];
}
