// Built by scripts/build-client.ts from src/client; do not edit.
// src/client/fair-sharing-wire.ts
function policyRequestFields(topic, input) {
  return {
    topic,
    group: input.group,
    weight: input.weight,
    max_leased: input.maxLeased,
    rate: input.rate === undefined ? undefined : { count: input.rate.count, per_ms: input.rate.perMs },
    clear: input.clear === true ? true : undefined
  };
}
function policyFromWire(p) {
  const policy = {};
  if (typeof p.group === "string")
    policy.group = p.group;
  if (typeof p.weight === "number")
    policy.weight = p.weight;
  if (typeof p.max_leased === "number")
    policy.maxLeased = p.max_leased;
  if (p.rate !== undefined && p.rate !== null)
    policy.rate = { count: p.rate.count, perMs: p.rate.per_ms };
  return policy;
}
function policyResultFromWire(reply) {
  if (reply.policy !== undefined && reply.policy !== null)
    return { policy: policyFromWire(reply.policy) };
  return { cleared: reply.cleared === true };
}
function groupCountsFromWire(g) {
  const counts = {
    group: typeof g.group === "string" ? g.group : null,
    ready: g.ready,
    delayed: g.delayed,
    waiting: g.waiting,
    leased: g.leased,
    dead: g.dead ?? 0,
    paused: g.paused === true
  };
  if (typeof g.paused_until_ms === "number")
    counts.pausedUntilMs = g.paused_until_ms;
  return counts;
}
function explanationFromWire(e) {
  if (e === null || e === undefined)
    return null;
  return { id: e.id, state: e.state, reasons: (e.reasons ?? []).map(reasonFromWire) };
}
function reasonFromWire(r) {
  const reason = { reason: r.reason };
  if (typeof r.until_ms === "number")
    reason.untilMs = r.until_ms;
  if (Array.isArray(r.after))
    reason.after = r.after;
  if (typeof r.dead_reason === "string")
    reason.deadReason = r.dead_reason;
  if (typeof r.leased === "number")
    reason.leased = r.leased;
  if (typeof r.max === "number")
    reason.max = r.max;
  if (typeof r.next_at_ms === "number")
    reason.nextAtMs = r.next_at_ms;
  if (Array.isArray(r.kinds))
    reason.kinds = r.kinds.map((kind) => ({ failed: Array.isArray(kind.failed) ? kind.failed : [] }));
  if (typeof r.ahead === "number")
    reason.ahead = r.ahead;
  return reason;
}

// src/client/item-wire.ts
var utf8 = new TextEncoder;
function bytes(value) {
  return typeof value === "string" ? utf8.encode(value) : value;
}
function enqueueItemToWire(item, trace) {
  return {
    topic: item.topic,
    priority: item.priority,
    payload: bytes(item.payload),
    metadata: bytes(item.metadata),
    delay_ms: item.delayMs,
    deliver_at_ms: item.deliverAtMs,
    lease_ms: item.leaseMs,
    ttl_ms: item.ttlMs,
    delivery: item.delivery,
    max_attempts: item.maxAttempts,
    requires: item.requires,
    after: item.after,
    key: item.key,
    group: item.group,
    prefers: item.prefers,
    prefer_wait_ms: item.preferWaitMs,
    trace: item.trace ?? trace
  };
}
function enqueueItemFromWire(w) {
  const item = { topic: w.topic };
  const copy = (key, wire, kind) => {
    const value = w[wire];
    if (value !== undefined && value !== null && typeof value === kind)
      item[key] = value;
  };
  copy("priority", "priority", "number");
  if (w.payload instanceof Uint8Array)
    item.payload = new Uint8Array(w.payload);
  if (w.metadata instanceof Uint8Array)
    item.metadata = new Uint8Array(w.metadata);
  copy("delayMs", "delay_ms", "number");
  copy("deliverAtMs", "deliver_at_ms", "number");
  copy("leaseMs", "lease_ms", "number");
  copy("ttlMs", "ttl_ms", "number");
  copy("delivery", "delivery", "string");
  copy("maxAttempts", "max_attempts", "number");
  copy("requires", "requires", "object");
  copy("group", "group", "string");
  copy("prefers", "prefers", "object");
  copy("preferWaitMs", "prefer_wait_ms", "number");
  copy("trace", "trace", "string");
  return item;
}
function deliveryFromWire(d) {
  const delivery = {
    id: d.id,
    topic: d.topic,
    priority: d.priority,
    payload: new Uint8Array(d.payload),
    metadata: new Uint8Array(d.metadata),
    attempt: d.attempt,
    receipt: d.receipt,
    leaseExpiresAtMs: d.lease_expires_at_ms,
    enqueuedAtMs: d.enqueued_at_ms
  };
  if (typeof d.group === "string")
    delivery.group = d.group;
  if (typeof d.trace === "string")
    delivery.trace = d.trace;
  return delivery;
}
function itemStateFromWire(s) {
  const state = {
    id: s.id,
    topic: s.topic,
    state: s.state,
    priority: s.priority,
    payload: new Uint8Array(s.payload),
    metadata: new Uint8Array(s.metadata),
    attempt: s.attempt,
    deliverAtMs: s.deliver_at_ms,
    enqueuedAtMs: s.enqueued_at_ms
  };
  if (s.lease_expires_at_ms !== undefined)
    state.leaseExpiresAtMs = s.lease_expires_at_ms;
  if (s.requires !== undefined)
    state.requires = s.requires;
  if (s.after !== undefined)
    state.after = s.after;
  if (s.key !== undefined)
    state.key = s.key;
  if (typeof s.group === "string")
    state.group = s.group;
  if (s.prefers !== undefined && s.prefers !== null)
    state.prefers = s.prefers;
  if (typeof s.prefer_wait_ms === "number")
    state.preferWaitMs = s.prefer_wait_ms;
  if (typeof s.trace === "string")
    state.trace = s.trace;
  if (s.dead_reason !== undefined)
    state.deadReason = s.dead_reason;
  return state;
}
function anyStateFromWire(s) {
  if (s === null || s === undefined)
    return null;
  if (s.state !== "ended")
    return itemStateFromWire(s);
  const ended = { id: s.id, state: "ended", outcome: s.outcome };
  if (s.result instanceof Uint8Array)
    ended.result = new Uint8Array(s.result);
  return ended;
}

// src/client/orq-error.ts
class OrqError extends Error {
  code;
  details;
  name = "OrqError";
  constructor(code, message, details = {}) {
    super(`${code}: ${message}`);
    this.code = code;
    this.details = details;
  }
}

// src/client/trace-context.ts
var traceBytesMax = 512;
var traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
var allZero = /^0+$/;
function formatTrace(parent) {
  const flags = (parent.traceFlags & 255).toString(16).padStart(2, "0");
  const traceparent = `00-${parent.traceId}-${parent.spanId}-${flags}`;
  const state = parent.traceState?.trim() ?? "";
  if (state === "" || traceparent.length + 1 + state.length > traceBytesMax)
    return traceparent;
  return `${traceparent} ${state}`;
}
function parseTrace(text) {
  const space = text.indexOf(" ");
  const traceparent = space < 0 ? text : text.slice(0, space);
  const match = traceparentPattern.exec(traceparent);
  if (match === null)
    return null;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff" || version === "00" && rest !== undefined)
    return null;
  if (allZero.test(traceId) || allZero.test(spanId))
    return null;
  const parent = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
  const state = space < 0 ? "" : text.slice(space + 1).trim();
  if (state !== "")
    parent.traceState = state;
  return parent;
}

// src/client/otel-trace.ts
var tracerName = "orq-client";
var loading = null;
function loadOtel() {
  loading ??= import("@opentelemetry/api").then((module) => module, () => null);
  return loading;
}
function activeTrace(api) {
  const span = api.trace.getSpan(api.context.active());
  if (span === undefined)
    return;
  const spanContext = span.spanContext();
  if (!api.trace.isSpanContextValid(spanContext))
    return;
  return formatTrace({ traceId: spanContext.traceId, spanId: spanContext.spanId, traceFlags: spanContext.traceFlags, traceState: spanContext.traceState?.serialize() });
}
function inConsumerSpan(api, delivery, handler) {
  const parent = delivery.trace === undefined ? null : parseTrace(delivery.trace);
  let context = api.context.active();
  if (parent !== null) {
    const traceState = parent.traceState === undefined ? undefined : api.createTraceState(parent.traceState);
    context = api.trace.setSpanContext(context, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.traceFlags, isRemote: true, traceState });
  }
  const attributes = {
    "messaging.system": "orq",
    "messaging.operation.type": "process",
    "messaging.destination.name": delivery.topic,
    "messaging.message.id": delivery.id,
    "messaging.orq.attempt": delivery.attempt
  };
  return api.trace.getTracer(tracerName).startActiveSpan(`process ${delivery.topic}`, { kind: api.SpanKind.CONSUMER, attributes }, context, async (span) => {
    try {
      return await handler();
    } catch (error) {
      span.recordException(error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

// src/client/schedule-wire.ts
function scheduleRequestFields(input) {
  return {
    name: input.name,
    cron: input.cron,
    every_ms: input.everyMs,
    timezone: input.timezone,
    item: enqueueItemToWire(input.item, undefined),
    catch_up: input.catchUp
  };
}
function scheduleFromWire(w) {
  const schedule = {
    name: w.name,
    timezone: typeof w.timezone === "string" ? w.timezone : "UTC",
    item: enqueueItemFromWire(w.item ?? {}),
    catchUp: w.catch_up === "none" ? "none" : "one",
    nextAtMs: w.next_at_ms
  };
  if (typeof w.cron === "string")
    schedule.cron = w.cron;
  if (typeof w.every_ms === "number")
    schedule.everyMs = w.every_ms;
  if (typeof w.last_at_ms === "number")
    schedule.lastAtMs = w.last_at_ms;
  if (typeof w.last_id === "string")
    schedule.lastId = w.last_id;
  return schedule;
}

// src/client/transport.ts
import { Socket } from "node:net";

// src/protocol/error-codes.ts
var errorCodes = [
  "BAD_FRAME",
  "FRAME_TOO_LARGE",
  "BAD_REQUEST",
  "UNKNOWN_OP",
  "TOO_LARGE",
  "NOT_FOUND",
  "RATE_LIMITED",
  "UNAVAILABLE",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "SHUTTING_DOWN",
  "INTERNAL",
  "MOVED"
];
function isErrorCode(value) {
  return typeof value === "string" && errorCodes.includes(value);
}

// src/lib/assert.ts
class AssertionError extends Error {
  name = "AssertionError";
}
function assert(condition, message = "assertion failed") {
  if (!condition)
    throw new AssertionError(message);
}

// src/protocol/frame-decoder.ts
var frameHeaderBytes = 4;

class FrameDecoder {
  frameBytesMax;
  sink;
  header = new Uint8Array(frameHeaderBytes);
  headerFilled = 0;
  body = null;
  bodyFilled = 0;
  backlog = [];
  backlogBytesTotal = 0;
  pausedFlag = false;
  failed = false;
  constructor(frameBytesMax, sink) {
    this.frameBytesMax = frameBytesMax;
    this.sink = sink;
  }
  get paused() {
    return this.pausedFlag;
  }
  get backlogBytes() {
    return this.backlogBytesTotal;
  }
  stop() {
    this.failed = true;
    this.backlog = [];
    this.backlogBytesTotal = 0;
    this.body = null;
  }
  push(chunk) {
    if (this.failed || chunk.length === 0)
      return;
    if (this.pausedFlag) {
      this.stash(chunk.slice(), false);
      return;
    }
    this.process(chunk, false);
  }
  resume() {
    this.pausedFlag = false;
    while (!this.pausedFlag && !this.failed && this.backlog.length > 0) {
      const chunk = this.backlog.shift();
      this.backlogBytesTotal -= chunk.length;
      this.process(chunk, true);
    }
  }
  stash(rest, atFront) {
    if (atFront)
      this.backlog.unshift(rest);
    else
      this.backlog.push(rest);
    this.backlogBytesTotal += rest.length;
  }
  process(chunk, fromBacklog) {
    let offset = 0;
    const end = chunk.length;
    if (this.headerFilled > 0 || this.body !== null) {
      offset = this.continuePartial(chunk);
      if (this.failed || offset < 0)
        return;
      if (this.body === null && this.headerFilled === 0 && this.pausedFlag) {
        if (offset < end)
          this.stash(fromBacklog ? chunk.subarray(offset) : chunk.slice(offset), true);
        return;
      }
    }
    while (end - offset >= frameHeaderBytes) {
      const length = (chunk[offset] << 24 >>> 0) + (chunk[offset + 1] << 16) + (chunk[offset + 2] << 8) + chunk[offset + 3];
      if (length > this.frameBytesMax) {
        this.fail(length);
        return;
      }
      const bodyStart = offset + frameHeaderBytes;
      if (end - bodyStart < length) {
        this.body = new Uint8Array(length);
        this.body.set(chunk.subarray(bodyStart, end));
        this.bodyFilled = end - bodyStart;
        return;
      }
      offset = bodyStart + length;
      if (!this.sink.frame(chunk, bodyStart, offset)) {
        this.pausedFlag = true;
        if (offset < end && !this.failed)
          this.stash(fromBacklog ? chunk.subarray(offset) : chunk.slice(offset), true);
        return;
      }
      if (this.failed)
        return;
    }
    if (offset < end) {
      this.header.set(chunk.subarray(offset, end));
      this.headerFilled = end - offset;
    }
  }
  continuePartial(chunk) {
    let offset = 0;
    if (this.body === null) {
      const take = Math.min(frameHeaderBytes - this.headerFilled, chunk.length);
      this.header.set(chunk.subarray(0, take), this.headerFilled);
      this.headerFilled += take;
      offset = take;
      if (this.headerFilled < frameHeaderBytes)
        return -1;
      this.headerFilled = 0;
      const h = this.header;
      const length = (h[0] << 24 >>> 0) + (h[1] << 16) + (h[2] << 8) + h[3];
      if (length > this.frameBytesMax) {
        this.fail(length);
        return -1;
      }
      if (chunk.length - offset >= length) {
        const bodyEnd = offset + length;
        if (!this.sink.frame(chunk, offset, bodyEnd))
          this.pausedFlag = true;
        return bodyEnd;
      }
      this.body = new Uint8Array(length);
      this.bodyFilled = 0;
    }
    const body = this.body;
    assert(body !== null, "partial body expected");
    const take = Math.min(body.length - this.bodyFilled, chunk.length - offset);
    body.set(chunk.subarray(offset, offset + take), this.bodyFilled);
    this.bodyFilled += take;
    offset += take;
    if (this.bodyFilled < body.length)
      return -1;
    this.body = null;
    this.bodyFilled = 0;
    if (!this.sink.frame(body, 0, body.length))
      this.pausedFlag = true;
    return offset;
  }
  fail(lengthBytes) {
    this.stop();
    this.sink.frameTooLarge(lengthBytes);
  }
}

// src/protocol/msgpack-codec.ts
import { Decoder, DecodeError, Encoder } from "@msgpack/msgpack";
class WholeFloat {
  value;
  constructor(value) {
    this.value = value;
  }
}

class RequestDecoder extends Decoder {
  depthMax = 32;
  decodeBody(body) {
    const lengths = this;
    lengths.maxArrayLength = body.length;
    lengths.maxMapLength = body.length;
    return this.decode(body);
  }
}
var base = Decoder.prototype;
var hooks = RequestDecoder.prototype;
var baseReadF32 = base.readF32;
var baseReadF64 = base.readF64;
var basePushArrayState = base.pushArrayState;
var basePushMapState = base.pushMapState;
var baseDecodeBinary = base.decodeBinary;
for (const name of ["readF32", "readF64", "pushArrayState", "pushMapState", "decodeBinary"]) {
  if (typeof base[name] !== "function")
    throw new Error(`@msgpack/msgpack Decoder lacks ${name}: check the pinned version`);
}
hooks.readF32 = function() {
  const value = baseReadF32.call(this);
  return Number.isInteger(value) ? new WholeFloat(value) : value;
};
hooks.readF64 = function() {
  const value = baseReadF64.call(this);
  return Number.isInteger(value) ? new WholeFloat(value) : value;
};
hooks.decodeBinary = function(byteLength, headOffset) {
  return baseDecodeBinary.call(this, byteLength, headOffset).slice();
};
hooks.pushArrayState = function(size) {
  if (this.stack.length >= this.depthMax)
    throw new DecodeError(`value nested deeper than ${this.depthMax} levels`);
  basePushArrayState.call(this, size);
};
hooks.pushMapState = function(size) {
  if (this.stack.length >= this.depthMax)
    throw new DecodeError(`value nested deeper than ${this.depthMax} levels`);
  basePushMapState.call(this, size);
};
function createReplyDecoder() {
  return new Decoder;
}
function createEncoder() {
  return new Encoder({ ignoreUndefined: true, initialBufferSize: 64 * 1024 });
}
function isPlainMap(value) {
  if (typeof value !== "object" || value === null)
    return false;
  return Object.getPrototypeOf(value) === Object.prototype;
}

// src/protocol/reply-encoder.ts
function deliveryToWire(d) {
  return {
    id: d.id,
    topic: d.topic,
    priority: d.priority,
    payload: d.payload,
    metadata: d.metadata,
    attempt: d.attempt,
    receipt: d.receipt,
    lease_expires_at_ms: d.leaseExpiresAtMs,
    enqueued_at_ms: d.enqueuedAtMs,
    ...d.group === undefined ? {} : { group: d.group },
    ...d.trace === undefined ? {} : { trace: d.trace }
  };
}

class DeliveriesReply {
  id;
  ok;
  deliveries;
  constructor(deliveries) {
    this.id = 0;
    this.ok = true;
    this.deliveries = deliveries;
  }
  toWire() {
    return { id: this.id, ok: true, items: this.deliveries.map(deliveryToWire) };
  }
}
class AckReply {
  id;
  ok;
  acked;
  stale;
  constructor(acked, stale) {
    this.id = 0;
    this.ok = true;
    this.acked = acked;
    this.stale = stale;
  }
}
function keyBytes(prefix, key) {
  const out = new Uint8Array(prefix.length + 1 + key.length);
  out.set(prefix);
  out[prefix.length] = 160 + key.length;
  for (let i = 0;i < key.length; i++)
    out[prefix.length + 1 + i] = key.charCodeAt(i);
  return out;
}
var trueByte = 195;
var deliveriesHead = keyBytes([131], "id");
var ackHead = keyBytes([132], "id");
var okThenItems = keyBytes([...keyBytes([], "ok"), trueByte], "items");
var okThenAcked = keyBytes([...keyBytes([], "ok"), trueByte], "acked");
var staleKey = keyBytes([], "stale");
var deliveryHead = keyBytes([137], "id");
var groupedDeliveryHead = keyBytes([138], "id");
var twoMoreDeliveryHead = keyBytes([139], "id");
var groupKey = keyBytes([], "group");
var traceKey = keyBytes([], "trace");
var topicKey = keyBytes([], "topic");
var priorityKey = keyBytes([], "priority");
var payloadKey = keyBytes([], "payload");
var metadataKey = keyBytes([], "metadata");
var attemptKey = keyBytes([], "attempt");
var receiptKey = keyBytes([], "receipt");
var leaseKey = keyBytes([], "lease_expires_at_ms");
var enqueuedKey = keyBytes([], "enqueued_at_ms");
var deliveryFixedBytes = 256;
var initialBufferBytes = 64 * 1024;
var textEncoder = new TextEncoder;

class ReplyEncoder {
  bytes = new Uint8Array(initialBufferBytes);
  view = new DataView(this.bytes.buffer);
  pos = 0;
  deliveriesFrame(id, items) {
    this.writeDeliveries(id, items);
    return this.finish().slice();
  }
  writeDeliveriesFrame(id, items) {
    this.writeDeliveries(id, items);
    return this.finishInPlace();
  }
  ackFrame(id, acked, stale) {
    this.writeAck(id, acked, stale);
    return this.finish().slice();
  }
  writeAckFrame(id, acked, stale) {
    this.writeAck(id, acked, stale);
    return this.finishInPlace();
  }
  get frameBytes() {
    return this.bytes;
  }
  writeDeliveries(id, items) {
    this.pos = frameHeaderBytes;
    this.ensure(64);
    this.raw(deliveriesHead);
    this.number(id);
    this.raw(okThenItems);
    this.arrayHeader(items.length);
    for (let i = 0;i < items.length; i++)
      this.delivery(items[i]);
  }
  writeAck(id, acked, stale) {
    this.pos = frameHeaderBytes;
    this.ensure(64);
    this.raw(ackHead);
    this.number(id);
    this.raw(okThenAcked);
    this.number(acked);
    this.raw(staleKey);
    this.arrayHeader(stale.length);
    for (let i = 0;i < stale.length; i++) {
      const receipt = stale[i];
      this.ensure(5 + 3 * receipt.length);
      this.string(receipt);
    }
  }
  delivery(d) {
    const payload = d.payload;
    const metadata = d.metadata;
    this.ensure(deliveryFixedBytes + 3 * (d.id.length + d.topic.length + d.receipt.length) + payload.length + metadata.length);
    const group = d.group;
    const trace = d.trace;
    const extra = (group === undefined ? 0 : 1) + (trace === undefined ? 0 : 1);
    this.raw(extra === 0 ? deliveryHead : extra === 1 ? groupedDeliveryHead : twoMoreDeliveryHead);
    this.string(d.id);
    this.raw(topicKey);
    this.string(d.topic);
    this.raw(priorityKey);
    this.number(d.priority);
    this.raw(payloadKey);
    this.bin(payload);
    this.raw(metadataKey);
    this.bin(metadata);
    this.raw(attemptKey);
    this.number(d.attempt);
    this.raw(receiptKey);
    this.string(d.receipt);
    this.raw(leaseKey);
    this.number(d.leaseExpiresAtMs);
    this.raw(enqueuedKey);
    this.number(d.enqueuedAtMs);
    if (group !== undefined) {
      this.ensure(16 + 3 * group.length);
      this.raw(groupKey);
      this.string(group);
    }
    if (trace !== undefined) {
      this.ensure(16 + 3 * trace.length);
      this.raw(traceKey);
      this.string(trace);
    }
  }
  finish() {
    return this.bytes.subarray(0, this.finishInPlace());
  }
  finishInPlace() {
    this.view.setUint32(0, this.pos - frameHeaderBytes);
    return this.pos;
  }
  ensure(more) {
    const needed = this.pos + more;
    if (needed <= this.bytes.length)
      return;
    const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.pos));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
  raw(chunk) {
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = 0;i < chunk.length; i++)
      bytes[pos++] = chunk[i];
    this.pos = pos;
  }
  arrayHeader(size) {
    this.ensure(5);
    const bytes = this.bytes;
    if (size < 16) {
      bytes[this.pos++] = 144 + size;
    } else if (size < 65536) {
      bytes[this.pos++] = 220;
      this.view.setUint16(this.pos, size);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 221;
      this.view.setUint32(this.pos, size);
      this.pos += 4;
    }
  }
  number(value) {
    const bytes = this.bytes;
    const view = this.view;
    let pos = this.pos;
    if (!Number.isSafeInteger(value)) {
      bytes[pos] = 203;
      view.setFloat64(pos + 1, value);
      this.pos = pos + 9;
      return;
    }
    if (value >= 0) {
      if (value < 128) {
        bytes[pos++] = value;
      } else if (value < 256) {
        bytes[pos++] = 204;
        bytes[pos++] = value;
      } else if (value < 65536) {
        bytes[pos++] = 205;
        view.setUint16(pos, value);
        pos += 2;
      } else if (value < 4294967296) {
        bytes[pos++] = 206;
        view.setUint32(pos, value);
        pos += 4;
      } else {
        bytes[pos++] = 207;
        view.setUint32(pos, Math.floor(value / 4294967296));
        view.setUint32(pos + 4, value >>> 0);
        pos += 8;
      }
    } else if (value >= -32) {
      bytes[pos++] = 224 | value + 32;
    } else if (value >= -128) {
      bytes[pos++] = 208;
      view.setInt8(pos, value);
      pos += 1;
    } else if (value >= -32768) {
      bytes[pos++] = 209;
      view.setInt16(pos, value);
      pos += 2;
    } else if (value >= -2147483648) {
      bytes[pos++] = 210;
      view.setInt32(pos, value);
      pos += 4;
    } else {
      bytes[pos++] = 211;
      view.setUint32(pos, Math.floor(value / 4294967296) >>> 0);
      view.setUint32(pos + 4, value >>> 0);
      pos += 8;
    }
    this.pos = pos;
  }
  stringHeader(byteLength) {
    const bytes = this.bytes;
    if (byteLength < 32) {
      bytes[this.pos++] = 160 + byteLength;
    } else if (byteLength < 256) {
      bytes[this.pos++] = 217;
      bytes[this.pos++] = byteLength;
    } else if (byteLength < 65536) {
      bytes[this.pos++] = 218;
      this.view.setUint16(this.pos, byteLength);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 219;
      this.view.setUint32(this.pos, byteLength);
      this.pos += 4;
    }
  }
  string(value) {
    const start = this.pos;
    const length = value.length;
    this.stringHeader(length);
    const bytes = this.bytes;
    let pos = this.pos;
    for (let i = 0;i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 128) {
        this.pos = start;
        this.nonAsciiString(value);
        return;
      }
      bytes[pos++] = code;
    }
    this.pos = pos;
  }
  nonAsciiString(value) {
    const byteLength = utf8Length(value);
    this.stringHeader(byteLength);
    const written = textEncoder.encodeInto(value, this.bytes.subarray(this.pos, this.pos + byteLength)).written;
    if (written !== byteLength)
      assert(false, `reply string: counted ${byteLength} UTF-8 bytes, wrote ${written}`);
    this.pos += byteLength;
  }
  bin(value) {
    const size = value.length;
    const bytes = this.bytes;
    if (size < 256) {
      bytes[this.pos++] = 196;
      bytes[this.pos++] = size;
    } else if (size < 65536) {
      bytes[this.pos++] = 197;
      this.view.setUint16(this.pos, size);
      this.pos += 2;
    } else {
      bytes[this.pos++] = 198;
      this.view.setUint32(this.pos, size);
      this.pos += 4;
    }
    if (size <= 16) {
      for (let i = 0;i < size; i++)
        bytes[this.pos + i] = value[i];
    } else {
      bytes.set(value, this.pos);
    }
    this.pos += size;
  }
}
function utf8Length(value) {
  let byteLength = 0;
  for (let i = 0;i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 128)
      byteLength += 1;
    else if (code < 2048)
      byteLength += 2;
    else if (code >= 55296 && code <= 56319 && i + 1 < value.length && (value.charCodeAt(i + 1) & 64512) === 56320) {
      byteLength += 4;
      i++;
    } else
      byteLength += 3;
  }
  return byteLength;
}

// src/protocol/frame-encoder.ts
function writeFrameLength(target, at, length) {
  target[at] = length >>> 24;
  target[at + 1] = length >>> 16 & 255;
  target[at + 2] = length >>> 8 & 255;
  target[at + 3] = length & 255;
}

class FrameEncoder {
  encoder = createEncoder();
  replies = null;
  encode(value) {
    if (value instanceof DeliveriesReply)
      return this.replyEncoder().deliveriesFrame(value.id, value.deliveries);
    if (value instanceof AckReply)
      return this.replyEncoder().ackFrame(value.id, value.acked, value.stale);
    const body = this.encoder.encodeSharedRef(value);
    const frame = new Uint8Array(frameHeaderBytes + body.length);
    writeFrameLength(frame, 0, body.length);
    frame.set(body, frameHeaderBytes);
    return frame;
  }
  encodeTo(value, out) {
    if (value instanceof DeliveriesReply) {
      const replies = this.replyEncoder();
      const length = replies.writeDeliveriesFrame(value.id, value.deliveries);
      out.push(replies.frameBytes, length);
    } else if (value instanceof AckReply) {
      const replies = this.replyEncoder();
      const length = replies.writeAckFrame(value.id, value.acked, value.stale);
      out.push(replies.frameBytes, length);
    } else
      out.pushFrame(this.encoder.encodeSharedRef(value));
  }
  replyEncoder() {
    if (this.replies === null)
      this.replies = new ReplyEncoder;
    return this.replies;
  }
}

// src/protocol/wire-types.ts
var protocolVersion = 1;
var requestIdMax = Number.MAX_SAFE_INTEGER;

// src/client/client-clock.ts
var realClientClock = Object.freeze({
  nowMs: () => performance.now(),
  schedule: (run, delayMs) => setTimeout(run, delayMs),
  cancel: (timer) => clearTimeout(timer)
});

// src/client/transport.ts
class Transport {
  socket = null;
  state = "connecting";
  encoder = new FrameEncoder;
  replyDecoder = createReplyDecoder();
  frameDecoder;
  pending = new Map;
  outgoing = [];
  flushScheduled = false;
  nextId = 1;
  reconnectAttempt = 0;
  reconnectTimer = null;
  sweepTimer = null;
  options;
  constructor(options) {
    this.options = {
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 7420,
      token: options.token,
      clientName: options.clientName,
      helloRequired: options.helloRequired ?? true,
      requestTimeoutMs: options.requestTimeoutMs ?? 30000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      reconnect: options.reconnect ?? true,
      reconnectDelayMs: options.reconnectDelayMs ?? 100,
      reconnectDelayMsMax: options.reconnectDelayMsMax ?? 5000,
      frameBytesMax: options.frameBytesMax ?? 256 * 1024 * 1024,
      clock: options.clock ?? realClientClock,
      trace: options.trace ?? true,
      onEvent: options.onEvent
    };
    this.frameDecoder = new FrameDecoder(this.options.frameBytesMax, this);
  }
  get isOpen() {
    return this.state === "open";
  }
  async open() {
    await this.connectSocket();
    this.state = "open";
    return this.request("hello", this.helloFields(), this.options.connectTimeoutMs, true);
  }
  request(op, fields, timeoutMs = this.options.requestTimeoutMs, front = false) {
    if (this.state === "closed")
      return Promise.reject(new OrqError("CLOSED", "the client is closed"));
    const id = this.nextId;
    this.nextId = this.nextId >= requestIdMax ? 1 : this.nextId + 1;
    const frame = this.encoder.encode({ ...fields, id, op });
    return new Promise((resolve, reject) => {
      const entry = { op, resolve, reject, deadlineMs: this.options.clock.nowMs() + timeoutMs, timeoutMs, unsent: frame };
      this.pending.set(id, entry);
      this.armSweep();
      if (this.state === "open")
        this.write(entry, front);
    });
  }
  async close() {
    if (this.state === "closed")
      return;
    this.state = "closed";
    if (this.reconnectTimer !== null)
      this.options.clock.cancel(this.reconnectTimer);
    if (this.sweepTimer !== null)
      this.options.clock.cancel(this.sweepTimer);
    this.sweepTimer = null;
    this.failAll("CLOSED", "the client was closed");
    const socket = this.socket;
    this.socket = null;
    if (socket === null || socket.destroyed)
      return;
    await new Promise((resolve) => {
      socket.once("close", () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }
  frame(bytes, start, end) {
    let reply;
    try {
      reply = this.replyDecoder.decode(bytes.subarray(start, end));
    } catch (error) {
      this.protocolFailure(`undecodable reply: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    if (!isPlainMap(reply) || typeof reply.id !== "number") {
      this.protocolFailure("a reply must be a map with an id");
      return false;
    }
    if (reply.id === 0) {
      const error = toOrqError(reply.error);
      this.options.onEvent?.({ kind: "disconnected", error });
      return true;
    }
    const entry = this.pending.get(reply.id);
    if (entry === undefined)
      return true;
    this.pending.delete(reply.id);
    if (reply.ok === true)
      entry.resolve(reply);
    else
      entry.reject(toOrqError(reply.error));
    return true;
  }
  frameTooLarge(lengthBytes) {
    this.protocolFailure(`reply frame of ${lengthBytes} bytes is over the client's frameBytesMax`);
  }
  helloFields() {
    const fields = { protocol: protocolVersion };
    if (this.options.token !== undefined)
      fields.token = this.options.token;
    if (this.options.clientName !== undefined)
      fields.client = this.options.clientName;
    return fields;
  }
  connectSocket() {
    return new Promise((resolve, reject) => {
      const socket = new Socket;
      socket.setNoDelay(true);
      const clock = this.options.clock;
      const timer = clock.schedule(() => {
        socket.destroy();
        reject(new OrqError("TIMEOUT", `could not connect to ${this.options.host}:${this.options.port} within ${this.options.connectTimeoutMs} ms`));
      }, this.options.connectTimeoutMs);
      const onError = (error) => {
        clock.cancel(timer);
        reject(new OrqError("DISCONNECTED", `cannot connect to ${this.options.host}:${this.options.port}: ${error.message}`));
      };
      socket.once("error", onError);
      socket.connect(this.options.port, this.options.host, () => {
        clock.cancel(timer);
        socket.off("error", onError);
        this.attach(socket);
        resolve();
      });
    });
  }
  attach(socket) {
    this.socket = socket;
    this.frameDecoder = new FrameDecoder(this.options.frameBytesMax, this);
    socket.on("data", (chunk) => this.frameDecoder.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => this.onSocketClosed(socket));
  }
  onSocketClosed(socket) {
    if (this.socket !== socket)
      return;
    this.socket = null;
    this.outgoing = [];
    if (this.state === "closed")
      return;
    this.options.onEvent?.({ kind: "disconnected", error: null });
    for (const [id, entry] of this.pending) {
      if (entry.unsent !== null)
        continue;
      this.pending.delete(id);
      entry.reject(new OrqError("DISCONNECTED", `connection lost before the reply to ${entry.op}; it may or may not have been carried out`));
    }
    if (!this.options.reconnect) {
      this.state = "closed";
      this.failAll("DISCONNECTED", "connection lost and reconnect is off");
      return;
    }
    this.state = "waiting_to_reconnect";
    this.scheduleReconnect();
  }
  scheduleReconnect() {
    const baseMs = Math.min(this.options.reconnectDelayMsMax, this.options.reconnectDelayMs * 2 ** Math.min(this.reconnectAttempt, 30));
    const delayMs = Math.round(baseMs * (0.5 + Math.random() / 2));
    this.reconnectTimer = this.options.clock.schedule(() => void this.reconnect(delayMs), delayMs);
  }
  async reconnect(lastDelayMs) {
    this.reconnectTimer = null;
    if (this.state === "closed")
      return;
    this.reconnectAttempt++;
    try {
      await this.connectSocket();
    } catch (error) {
      if (this.isClosed())
        return;
      this.options.onEvent?.({ kind: "reconnect_failed", attempt: this.reconnectAttempt, error, delayMs: lastDelayMs });
      this.scheduleReconnect();
      return;
    }
    if (this.isClosed()) {
      this.socket?.destroy();
      return;
    }
    this.state = "open";
    const attempt = this.reconnectAttempt;
    this.reconnectAttempt = 0;
    const hello = this.request("hello", this.helloFields(), this.options.connectTimeoutMs, true);
    hello.catch((error) => this.options.onEvent?.({ kind: "hello_failed", error }));
    for (const entry of this.pending.values())
      if (entry.unsent !== null)
        this.write(entry, false);
    this.options.onEvent?.({ kind: "reconnected", attempt });
  }
  armSweep() {
    if (this.sweepTimer !== null || this.pending.size === 0)
      return;
    const periodMs = Math.min(1000, Math.max(10, Math.floor(this.options.requestTimeoutMs / 10)));
    this.sweepTimer = this.options.clock.schedule(() => this.sweep(), periodMs);
  }
  sweep() {
    this.sweepTimer = null;
    const nowMs = this.options.clock.nowMs();
    for (const [id, entry] of this.pending) {
      if (entry.deadlineMs > nowMs)
        continue;
      this.pending.delete(id);
      entry.reject(new OrqError("TIMEOUT", `${entry.op} got no reply within ${entry.timeoutMs} ms`));
    }
    this.armSweep();
  }
  isClosed() {
    return this.state === "closed";
  }
  write(entry, front) {
    const frame = entry.unsent;
    if (frame === null)
      return;
    entry.unsent = null;
    if (front)
      this.outgoing.unshift(frame);
    else
      this.outgoing.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }
  flush() {
    this.flushScheduled = false;
    const socket = this.socket;
    if (socket === null || this.outgoing.length === 0)
      return;
    const frames = this.outgoing;
    this.outgoing = [];
    socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
  }
  protocolFailure(message) {
    this.options.onEvent?.({ kind: "disconnected", error: new OrqError("BAD_REPLY", message) });
    this.socket?.destroy();
  }
  failAll(code, message) {
    for (const entry of this.pending.values())
      entry.reject(new OrqError(code, message));
    this.pending.clear();
  }
}
function toOrqError(error) {
  if (!isPlainMap(error))
    return new OrqError("BAD_REPLY", "error reply without an error map");
  const wire = error;
  const code = isErrorCode(wire.code) ? wire.code : "INTERNAL";
  const details = {};
  const raw = wire.details;
  if (raw !== undefined && isPlainMap(raw)) {
    if (typeof raw.field === "string")
      details.field = raw.field;
    if (typeof raw.index === "number")
      details.index = raw.index;
    if (typeof raw.retry_after_ms === "number")
      details.retryAfterMs = raw.retry_after_ms;
    if (typeof raw.request_id === "string")
      details.requestId = raw.request_id;
    if (typeof raw.shard === "number")
      details.shard = raw.shard;
    if (typeof raw.node_id === "string")
      details.nodeId = raw.node_id;
    if (typeof raw.addr === "string")
      details.addr = raw.addr;
    if (typeof raw.map_version === "number")
      details.mapVersion = raw.map_version;
  }
  return new OrqError(code, typeof wire.message === "string" ? wire.message : String(wire.code), details);
}

// src/client/lease-keeper.ts
var realTimers = {
  nowMs: () => performance.now(),
  after(delayMs, fn) {
    setTimeout(fn, delayMs).unref();
  }
};

class LeaseKeeper {
  client;
  ns;
  leaseMs;
  everyMs;
  emit;
  timers;
  held = new Map;
  armed = false;
  constructor(client, ns, leaseMs, everyMs, emit, timers = realTimers) {
    this.client = client;
    this.ns = ns;
    this.leaseMs = leaseMs;
    this.everyMs = everyMs;
    this.emit = emit;
    this.timers = timers;
  }
  keep(delivery, onLost) {
    this.held.set(delivery.receipt, { delivery, dueMs: this.timers.nowMs() + this.everyMs, onLost });
    if (!this.armed)
      this.arm();
  }
  release(delivery) {
    this.held.delete(delivery.receipt);
  }
  get size() {
    return this.held.size;
  }
  arm() {
    const first = this.held.values().next();
    if (first.done === true)
      return;
    this.armed = true;
    this.timers.after(Math.max(0, first.value.dueMs - this.timers.nowMs()), () => this.fire());
  }
  fire() {
    this.armed = false;
    const nowMs = this.timers.nowMs();
    const due = [];
    for (const lease of this.held.values()) {
      if (lease.dueMs > nowMs)
        break;
      due.push(lease);
    }
    for (const lease of due) {
      this.held.delete(lease.delivery.receipt);
      lease.dueMs = nowMs + this.everyMs;
      this.held.set(lease.delivery.receipt, lease);
    }
    if (due.length > 0)
      this.extend(due);
    this.arm();
  }
  extend(due) {
    const leaseMs = this.leaseMs;
    this.client.extend(this.ns, due.map((lease) => ({ receipt: lease.delivery.receipt, leaseMs }))).then((result) => {
      const stale = result.stale.length === 0 ? null : new Set(result.stale);
      for (const lease of due) {
        const receipt = lease.delivery.receipt;
        if (stale === null || !stale.has(receipt)) {
          this.emit({ kind: "extended", delivery: lease.delivery, leaseMs });
        } else if (this.held.get(receipt) === lease) {
          this.release(lease.delivery);
          this.emit({ kind: "lease_lost", delivery: lease.delivery });
          lease.onLost();
        }
      }
    }, (error) => {
      for (const lease of due)
        this.emit({ kind: "error", during: "extend", error, delivery: lease.delivery });
    });
  }
}

// src/client/worker.ts
var workDefaults = {
  waitMs: 5000,
  extendAtFraction: 0.5,
  backoffBaseMs: 1000,
  backoffMsMax: 300000,
  errorPauseMs: 1000
};
var workConcurrencyMax = 1000;
function nackDelayMs(attempt, backoffBaseMs, backoffMsMax) {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  return Math.min(backoffMsMax, backoffBaseMs * 2 ** exponent);
}
function checkOptions(options) {
  const bad = (what) => {
    throw new RangeError(`work(): ${what}`);
  };
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > workConcurrencyMax)
    bad(`concurrency must be 1..${workConcurrencyMax}`);
  if (!Number.isInteger(options.leaseMs) || options.leaseMs < 1)
    bad("leaseMs must be a positive integer");
  const fraction = options.extendAtFraction ?? workDefaults.extendAtFraction;
  if (!(fraction >= 0.1 && fraction <= 0.9))
    bad("extendAtFraction must be 0.1..0.9");
  if (options.waitMs !== undefined && (!Number.isInteger(options.waitMs) || options.waitMs < 0))
    bad("waitMs must be a non-negative integer");
}
function startWorker(client, options, handler) {
  checkOptions(options);
  const waitMs = options.waitMs ?? workDefaults.waitMs;
  const extendEveryMs = Math.max(1, Math.floor(options.leaseMs * (options.extendAtFraction ?? workDefaults.extendAtFraction)));
  const backoffBaseMs = options.backoffBaseMs ?? workDefaults.backoffBaseMs;
  const backoffMsMax = options.backoffMsMax ?? workDefaults.backoffMsMax;
  const errorPauseMs = options.errorPauseMs ?? workDefaults.errorPauseMs;
  let stopping = false;
  let running = 0;
  let settling = 0;
  const tasks = new Set;
  let wake = null;
  const wakeLoop = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const emit = (event) => {
    try {
      options.onEvent?.(event);
    } catch (error) {
      console.error("orq worker: onEvent threw", error);
    }
  };
  const keeper = new LeaseKeeper(client, options.ns, options.leaseMs, extendEveryMs, emit);
  async function runOne(delivery, otel) {
    const controller = new AbortController;
    keeper.keep(delivery, () => controller.abort(new Error("lease lost")));
    const context = {
      signal: controller.signal,
      progress: async (metadata) => {
        const result = await client.extend(options.ns, [{ receipt: delivery.receipt, leaseMs: options.leaseMs, metadata }]);
        return result.stale.length === 0;
      }
    };
    const call = async () => await handler(delivery, context);
    let failure = null;
    let value;
    try {
      value = await (otel === null ? call() : inConsumerSpan(otel, delivery, call));
    } catch (error) {
      failure = { error };
    } finally {
      keeper.release(delivery);
    }
    const delayMs = failure === null ? 0 : nackDelayMs(delivery.attempt, backoffBaseMs, backoffMsMax);
    let settle;
    try {
      settle = failure === null ? client.ack(options.ns, [delivery.receipt], typeof value === "string" || value instanceof Uint8Array ? { results: [value] } : undefined) : client.nack(options.ns, [{ receipt: delivery.receipt, delayMs }]);
    } catch (error) {
      settle = Promise.reject(error);
    }
    running--;
    settling++;
    wakeLoop();
    try {
      const result = await settle;
      if (failure === null)
        emit({ kind: "acked", delivery, stale: result.stale.length > 0 });
      else
        emit({ kind: "nacked", delivery, delayMs, error: failure.error, stale: result.stale.length > 0 });
    } catch (error) {
      emit({ kind: "error", during: failure === null ? "ack" : "nack", error, delivery });
    } finally {
      settling--;
    }
  }
  function start(delivery, otel) {
    running++;
    const task = runOne(delivery, otel).finally(() => {
      tasks.delete(task);
      wakeLoop();
    });
    tasks.add(task);
  }
  const pause = (ms) => new Promise((resolve) => {
    const timer = setTimeout(() => {
      wake = null;
      resolve();
    }, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  async function loop() {
    const otel = options.trace === false ? null : await loadOtel();
    while (!stopping) {
      const free = options.concurrency - running - Math.max(0, settling - options.concurrency);
      if (free <= 0) {
        await new Promise((resolve) => {
          wake = resolve;
        });
        continue;
      }
      let deliveries;
      try {
        deliveries = await client.dequeue(options.ns, {
          topics: [{ topic: options.topic, count: free }],
          capabilities: options.capabilities,
          waitMs,
          leaseMs: options.leaseMs
        });
      } catch (error) {
        if (error instanceof OrqError && error.code === "CLOSED")
          break;
        emit({ kind: "error", during: "dequeue", error });
        const hintMs = error instanceof OrqError ? error.details.retryAfterMs : undefined;
        if (!stopping)
          await pause(hintMs ?? errorPauseMs);
        continue;
      }
      for (const delivery of deliveries)
        start(delivery, otel);
    }
    while (tasks.size > 0)
      await Promise.all([...tasks]);
  }
  const done = loop();
  return {
    stop() {
      stopping = true;
      wakeLoop();
      return done;
    },
    done,
    get running() {
      return running;
    }
  };
}

// src/client/client.ts
class OrqClient {
  transport;
  server = null;
  constructor(transport) {
    this.transport = transport;
  }
  static async connect(options = {}) {
    const transport = new Transport(options);
    const client = new OrqClient(transport);
    try {
      client.server = helloFromWire(await transport.open());
    } catch (error) {
      const unauthorizedOk = options.helloRequired === false && error instanceof OrqError && error.code === "UNAUTHORIZED";
      if (!unauthorizedOk) {
        await transport.close();
        throw error;
      }
    }
    return client;
  }
  get connected() {
    return this.transport.isOpen;
  }
  request(op, fields = {}, options = {}) {
    return this.transport.request(op, fields, options.timeoutMs);
  }
  call(op, fields, options) {
    return this.transport.request(op, fields, options.timeoutMs);
  }
  async hello(options = {}) {
    const fields = { protocol: 1 };
    const { token, clientName } = this.transport.options;
    if (token !== undefined)
      fields.token = token;
    if (clientName !== undefined)
      fields.client = clientName;
    this.server = helloFromWire(await this.call("hello", fields, options));
    return this.server;
  }
  async ping(options = {}) {
    const reply = await this.call("ping", {}, options);
    return { nowMs: reply.now_ms };
  }
  async enqueue(ns, items, options = {}) {
    const trace = await this.producerTrace(items);
    const wireItems = items.map((item) => enqueueItemToWire(item, trace));
    const reply = await this.call("enqueue", { ns, items: wireItems }, options);
    return reply.ids;
  }
  async enqueueAndWait(ns, items, waitMs, options = {}) {
    const ids = await this.enqueue(ns, items, options);
    return { ids, items: await this.waitFor(ns, ids, waitMs, options) };
  }
  async waitFor(ns, ids, waitMs, options = {}) {
    const timeoutMs = (options.timeoutMs ?? this.transport.options.requestTimeoutMs) + waitMs;
    const reply = await this.call("wait", { ns, ids, wait_ms: waitMs }, { timeoutMs });
    return reply.items.map(anyStateFromWire);
  }
  async dequeue(ns, request, options = {}) {
    const waitMs = request.waitMs ?? 0;
    const timeoutMs = (options.timeoutMs ?? this.transport.options.requestTimeoutMs) + waitMs;
    const reply = await this.call("dequeue", {
      ns,
      topics: request.topics.map((t) => ({ topic: t.topic, count: t.count ?? 1 })),
      capabilities: request.capabilities,
      wait_ms: request.waitMs,
      lease_ms: request.leaseMs
    }, { timeoutMs });
    return reply.items.map(deliveryFromWire);
  }
  async ack(ns, receipts, options = {}) {
    const results = options.results?.map((result) => bytes(result ?? undefined) ?? null);
    const reply = await this.call("ack", { ns, receipts, results }, options);
    return { acked: reply.acked, stale: reply.stale };
  }
  async nack(ns, items, options = {}) {
    const wireItems = items.map((i) => ({ receipt: i.receipt, delay_ms: i.delayMs, metadata: bytes(i.metadata) }));
    const reply = await this.call("nack", { ns, items: wireItems }, options);
    return { nacked: reply.nacked, stale: reply.stale };
  }
  async extend(ns, items, options = {}) {
    const wireItems = items.map((i) => ({ receipt: i.receipt, lease_ms: i.leaseMs, metadata: bytes(i.metadata) }));
    const reply = await this.call("extend", { ns, items: wireItems }, options);
    return { extended: reply.extended, stale: reply.stale };
  }
  async cancel(ns, ids, options = {}) {
    const reply = await this.call("cancel", { ns, ids }, options);
    return { cancelled: reply.cancelled, missing: reply.missing };
  }
  async get(ns, ids, options = {}) {
    const reply = await this.call("get", { ns, ids }, options);
    return reply.items.map(anyStateFromWire);
  }
  async topics(ns, query = {}, options = {}) {
    const reply = await this.call("topics", { ns, prefix: query.prefix, limit: query.limit, after: query.after }, options);
    return {
      topics: reply.topics.map((t) => {
        const counts = { topic: t.topic, ready: t.ready, delayed: t.delayed, waiting: t.waiting, leased: t.leased, dead: t.dead, paused: t.paused === true };
        if (typeof t.paused_until_ms === "number")
          counts.pausedUntilMs = t.paused_until_ms;
        return counts;
      }),
      next: typeof reply.next === "string" ? reply.next : null
    };
  }
  async list(ns, topic, query = {}, options = {}) {
    const reply = await this.call("list", { ns, topic, state: query.state, limit: query.limit, after: query.after }, options);
    return { items: reply.items.map(itemStateFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }
  async pause(ns, topic, query = {}, options = {}) {
    const reply = await this.call("pause", { ns, topic, group: query.group, for_ms: query.forMs }, options);
    return { pausedUntilMs: typeof reply.paused_until_ms === "number" ? reply.paused_until_ms : null };
  }
  async resume(ns, topic, query = {}, options = {}) {
    const reply = await this.call("resume", { ns, topic, group: query.group }, options);
    return { resumed: reply.resumed === true };
  }
  async policy(ns, topic, input, options = {}) {
    return policyResultFromWire(await this.call("policy", { ns, ...policyRequestFields(topic, input) }, options));
  }
  async policies(ns, topic, query = {}, options = {}) {
    const reply = await this.call("policies", { ns, topic, limit: query.limit, after: query.after }, options);
    return { policies: reply.policies.map(policyFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }
  async groups(ns, topic, query = {}, options = {}) {
    const reply = await this.call("groups", { ns, topic, limit: query.limit, after: query.after }, options);
    return { groups: reply.groups.map(groupCountsFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }
  async explain(ns, ids, options = {}) {
    const reply = await this.call("explain", { ns, ids }, options);
    return reply.items.map(explanationFromWire);
  }
  async dead(ns, topic, query = {}, options = {}) {
    const reply = await this.call("dead", { ns, topic, limit: query.limit }, options);
    return reply.items.map(itemStateFromWire);
  }
  async redrive(ns, topic, ids, options = {}) {
    const reply = await this.call("redrive", { ns, topic, ids }, options);
    return { redriven: reply.redriven };
  }
  async schedule(ns, input, options = {}) {
    const reply = await this.call("schedule", { ns, ...scheduleRequestFields(input) }, options);
    return { name: reply.name, nextAtMs: reply.next_at_ms };
  }
  async unschedule(ns, name, options = {}) {
    const reply = await this.call("unschedule", { ns, name }, options);
    return { removed: reply.removed === true };
  }
  async schedules(ns, query = {}, options = {}) {
    const reply = await this.call("schedules", { ns, limit: query.limit, after: query.after }, options);
    return { schedules: reply.schedules.map(scheduleFromWire), next: typeof reply.next === "string" ? reply.next : null };
  }
  async stats(ns, options = {}) {
    const reply = await this.call("stats", { ns }, options);
    const { id: _id, ok: _ok, ...rest } = reply;
    return rest;
  }
  work(options, handler) {
    return startWorker(this, options, handler);
  }
  async producerTrace(items) {
    if (!this.transport.options.trace || items.every((item) => item.trace !== undefined))
      return;
    const api = await loadOtel();
    return api === null ? undefined : activeTrace(api);
  }
  close() {
    return this.transport.close();
  }
}
function helloFromWire(reply) {
  const limits = reply.limits;
  const hello = {
    server: reply.server,
    version: reply.version,
    protocol: reply.protocol,
    nodeId: reply.node_id,
    shards: reply.shards,
    maxFrameBytes: reply.max_frame_bytes,
    limits: {
      payloadBytesMax: limits.payload_bytes_max,
      metadataBytesMax: limits.metadata_bytes_max,
      itemsPerEnqueueMax: limits.items_per_enqueue_max,
      countPerDequeueMax: limits.count_per_dequeue_max,
      topicBytesMax: limits.topic_bytes_max,
      waitMsMax: limits.wait_ms_max,
      leaseMsMax: limits.lease_ms_max,
      idsPerRequestMax: limits.ids_per_request_max
    }
  };
  if (Array.isArray(reply.memory_namespaces))
    hello.memoryNamespaces = reply.memory_namespaces;
  return hello;
}
// src/limits/cluster.ts
var clusterLimits = Object.freeze({
  shardLeaseMsDefault: 5000,
  shardLeaseMsMin: 500,
  shardLeaseMsMax: 10 * 60 * 1000,
  keyRangePerOpen: 2 ** 36,
  unownedRetryAfterMs: 500,
  handoverRetryAfterMs: 100,
  adoptTurnMs: 20,
  adoptRecordsPerStep: 1000,
  remoteDependencyPollMs: 500,
  pausePollMs: 250,
  quotaDrawPeriodMs: 250,
  quotaDrawUseFactor: 2,
  quotaDrawRetryAfterMs: 20,
  quotaDrawTimeoutMs: 2000,
  quotaUnreachableRetryAfterMs: 1000,
  remoteDependenciesPerPollMax: 1000,
  renewalsPerLease: 3,
  tickMsMax: 1000,
  expiryTickMarginMs: 20,
  missedRenewalsBeforeReadAhead: 2,
  storeConnectionsMax: 4,
  storeConnectTimeoutS: 10,
  loadPageRows: 5000,
  clientRouteAttemptsMax: 100,
  clientLostNodePauseMs: 100,
  clientStickyItems: 1000,
  clientOwnTurnCallItems: 100
});
// src/limits/dashboard.ts
var dashboardLimits = Object.freeze({
  sessionMs: 8 * 60 * 60 * 1000,
  sessionsMax: 1000,
  signInsPerMinuteMax: 10,
  signInClientsMax: 1e4,
  historyFineSampleMs: 5000,
  historyFineSamples: 720,
  historyCoarseSampleMs: 60000,
  historyCoarseSamples: 1440,
  historyNamespacesMax: 50,
  historyTopicsMax: 200,
  formBytesMax: 64 * 1024,
  shownBytesMax: 4096,
  shownHexBytesMax: 1024,
  redriveAllRoundsMax: 10,
  clusterMapRefreshMs: 1000,
  clusterRequestTimeoutMs: 1e4
});
// src/limits/matching.ts
var unmatchableSignaturesListedMax = 20;
// src/limits/memory.ts
var heapGovernor = Object.freeze({
  growthFactor: 1.25,
  standAsideCeilingFactor: 3,
  liveChangeMin: 0.02,
  steadyForMs: 5000,
  checkMs: 100,
  heapBytesMin: 128 * 1024 * 1024,
  smallHeapCollectEveryMs: 30000
});
var allocatorEnv = Object.freeze({
  MIMALLOC_PURGE_DELAY: "5000"
});
var mappedPages = Object.freeze({
  growthBytes: 32 * 1024 * 1024
});
var recentValues = Object.freeze({
  ringBytes: 32 * 1024 * 1024,
  ringBytesPerSlot: 112
});
var outputBuffers = Object.freeze({
  bufferBytes: 64 * 1024,
  pooledMax: 64
});
var writeLogs = Object.freeze({
  pooledWritesMax: 65536
});
// src/limits/storage.ts
var ackedOutcomeBounds = Object.freeze({
  blockItemsMax: 16384,
  blockSpanMs: 1e4,
  purgeRecordsPerCommitMax: 1000,
  logRecordBytesMax: 1536
});
var ackSweepBounds = Object.freeze({
  lagKeys: 1048576,
  keysPerCommitMax: 8192,
  idleSweepMs: 50
});
var deliveryPrefetch = Object.freeze({
  keysPerHeapMax: 32,
  refillBelowKeys: 8,
  dequeueCountMin: 8,
  heapsPerDequeueMax: 64
});
var readyHeapLevels = Object.freeze({
  fromItems: 4096,
  flatBelowItems: 1024
});
var readyFront = Object.freeze({
  items: 32
});

// src/limits.ts
var defaultLimits = Object.freeze({
  frameBytesMax: 4 * 1024 * 1024,
  payloadBytesMax: 10 * 1024,
  metadataBytesMax: 1024,
  resultBytesMax: 64 * 1024,
  itemsPerEnqueueMax: 1000,
  countPerDequeueMax: 1000,
  topicBytesMax: 255,
  namespaceBytesMax: 255,
  keyBytesMax: 255,
  idBytesMax: 255,
  receiptBytesMax: 255,
  tokenBytesMax: 4096,
  waitMsMax: 5 * 60 * 1000,
  leaseMsMax: 12 * 60 * 60 * 1000,
  idsPerRequestMax: 1000,
  delayMsMax: 365 * 24 * 60 * 60 * 1000,
  topicsPerDequeueMax: 100,
  afterIdsMax: 100,
  featuresMax: 64,
  valuesPerFeatureMax: 256,
  decodeDepthMax: 32,
  waitersPerConnectionMax: 1000,
  waitersTotalMax: 1e5,
  itemWaitsPerConnectionMax: 1000,
  itemWaitsTotalMax: 1e5,
  inflightPerConnectionMax: 1e4,
  outputBytesPerConnectionMax: 8 * 1024 * 1024,
  connectionsMax: 1e4,
  topicsPageMax: 1000,
  deadPageMax: 1000,
  listPageDefault: 100,
  listPageMax: 1000,
  listScanSlotsMax: 200000,
  listReadyVisitsMax: 1e4,
  redriveAllMax: 1e4,
  pausedTopicsMax: 1e5,
  groupBytesMax: 255,
  policiesMax: 1e6,
  schedulesMax: 1e5,
  schedulesPerNamespaceMax: 1e4,
  scheduleNameBytesMax: 255,
  cronBytesMax: 255,
  timezoneBytesMax: 64,
  scheduleEveryMsMin: 1000,
  policyWeightMax: 1e4,
  traceBytesMax: 512,
  groupsPageMax: 1000,
  explainAheadMax: 1000,
  liveItemsMax: 50000000,
  topicsMax: 1e6,
  namespacesMax: 1e5,
  pauseMsMax: 365 * 24 * 60 * 60 * 1000,
  outcomeRetentionMs: 60 * 60 * 1000,
  deadlinesPerTickMax: 1e4,
  recoveryRecordsPerTurnMax: 1e4,
  unmatchableAskWindowMs: 10 * 60 * 1000,
  beanstalkJobBytesMax: 65535,
  beanstalkLineBytesMax: 224,
  beanstalkTubeBytesMax: 200,
  beanstalkQueuedCommandsMax: 1000,
  beanstalkJobCountersMax: 1e5
});
var itemDefaults = Object.freeze({
  leaseMs: 30000,
  maxAttempts: 10,
  priority: 0
});
var itemEnvelopeBytes = 1024;
var idBytesLongest = 2 * 16 + 1;
var receiptBytesLongest = 4 * 16 + 3;
function limitRelationProblems(limits) {
  const problems = [];
  const need = (holds, message) => {
    if (!holds)
      problems.push(message);
  };
  const zeroAllowed = new Set(["payloadBytesMax", "metadataBytesMax", "resultBytesMax", "beanstalkJobBytesMax"]);
  for (const [name, value] of Object.entries(limits)) {
    const least = zeroAllowed.has(name) ? 0 : 1;
    need(Number.isSafeInteger(value) && value >= least, `${name} is ${value}, not an integer of at least ${least}`);
  }
  need(limits.payloadBytesMax + limits.metadataBytesMax + itemEnvelopeBytes <= limits.frameBytesMax, `frameBytesMax (${limits.frameBytesMax}) cannot hold one item of payloadBytesMax + metadataBytesMax (${limits.payloadBytesMax} + ${limits.metadataBytesMax}) and its envelope (${itemEnvelopeBytes})`);
  const fullAckBytes = limits.idsPerRequestMax * (receiptBytesLongest + 2) + itemEnvelopeBytes;
  need(fullAckBytes <= limits.frameBytesMax, `frameBytesMax (${limits.frameBytesMax}) cannot hold an ack of idsPerRequestMax (${limits.idsPerRequestMax}) receipts (${fullAckBytes} bytes)`);
  need(limits.idBytesMax >= idBytesLongest, `idBytesMax (${limits.idBytesMax}) is below the longest id orq makes (${idBytesLongest})`);
  need(limits.receiptBytesMax >= receiptBytesLongest, `receiptBytesMax (${limits.receiptBytesMax}) is below the longest receipt orq makes (${receiptBytesLongest})`);
  need(itemDefaults.leaseMs <= limits.leaseMsMax, `leaseMsMax (${limits.leaseMsMax}) is below the default lease (${itemDefaults.leaseMs})`);
  need(limits.listPageDefault <= limits.listPageMax, `listPageDefault (${limits.listPageDefault}) is over listPageMax (${limits.listPageMax})`);
  need(limits.waitersPerConnectionMax <= limits.waitersTotalMax, `waitersPerConnectionMax (${limits.waitersPerConnectionMax}) is over waitersTotalMax (${limits.waitersTotalMax})`);
  need(limits.itemWaitsPerConnectionMax <= limits.itemWaitsTotalMax, `itemWaitsPerConnectionMax (${limits.itemWaitsPerConnectionMax}) is over itemWaitsTotalMax (${limits.itemWaitsTotalMax})`);
  need(limits.resultBytesMax + itemEnvelopeBytes <= limits.frameBytesMax, `frameBytesMax (${limits.frameBytesMax}) cannot hold an ack with one result of resultBytesMax (${limits.resultBytesMax})`);
  need(limits.waitMsMax < limits.unmatchableAskWindowMs, `unmatchableAskWindowMs (${limits.unmatchableAskWindowMs}) is not longer than waitMsMax (${limits.waitMsMax})`);
  return problems;
}
function checkLimitRelations(limits) {
  const problems = limitRelationProblems(limits);
  if (problems.length > 0)
    throw new Error(`limits: ${problems.join("; ")}`);
}
checkLimitRelations(defaultLimits);

// src/client/cluster-merge.ts
function interleaveDead(lists, limit) {
  const merged = [];
  for (let index = 0;merged.length < limit; index++) {
    let any = false;
    for (const list of lists) {
      const item = list[index];
      if (item === undefined)
        continue;
      any = true;
      if (merged.length < limit)
        merged.push(item);
    }
    if (!any)
      break;
  }
  return merged;
}
var cursorPrefix = "c1.";
var listDone = "done";
function encodeListCursor(cursor) {
  return cursorPrefix + Buffer.from(JSON.stringify(cursor)).toString("base64url");
}
function decodeListCursor(text) {
  if (!text.startsWith(cursorPrefix))
    return null;
  try {
    const parsed = JSON.parse(Buffer.from(text.slice(cursorPrefix.length), "base64url").toString());
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return null;
    return Object.values(parsed).every((v) => typeof v === "string") ? parsed : null;
  } catch {
    return null;
  }
}
function listOrder(a, b) {
  const aReady = a.state === "ready" ? 0 : 1;
  const bReady = b.state === "ready" ? 0 : 1;
  if (aReady !== bReady)
    return aReady - bReady;
  if (aReady === 0 && a.priority !== b.priority)
    return a.priority - b.priority;
  if (aReady === 0 && a.deliverAtMs !== b.deliverAtMs)
    return a.deliverAtMs - b.deliverAtMs;
  return a.enqueuedAtMs - b.enqueuedAtMs;
}
var largestOf = new Set(["now_ms", "uptime_ms", "askers"]);
var firstOf = new Set(["quota"]);
var isFields = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
function sumStats(replies) {
  const merged = mergeFields(replies);
  const namespaces = merged.namespaces;
  if (!isFields(namespaces))
    return merged;
  let counted = true;
  let topics = 0;
  for (const ns of Object.values(namespaces)) {
    if (isFields(ns) && isFields(ns.topics) && ns.topics_truncated !== true)
      ns.topic_count = Object.keys(ns.topics).length;
    else
      counted = false;
    topics += isFields(ns) && typeof ns.topic_count === "number" ? ns.topic_count : 0;
  }
  if (counted && isFields(merged.totals) && typeof merged.totals.topics === "number")
    merged.totals.topics = topics;
  return merged;
}
function mergeFields(values) {
  const merged = {};
  const keys = new Set(values.flatMap((value) => Object.keys(value)));
  for (const key of keys)
    merged[key] = mergeValue(key, values.map((value) => value[key]).filter((value) => value !== undefined));
  return merged;
}
function mergeValue(key, values) {
  const present = values.filter((value) => value !== null);
  const first = present[0];
  if (first === undefined)
    return null;
  if (firstOf.has(key))
    return first;
  if (typeof first === "number") {
    const numbers = present.filter((value) => typeof value === "number");
    return largestOf.has(key) ? Math.max(...numbers) : numbers.reduce((sum, n) => sum + n, 0);
  }
  if (typeof first === "boolean")
    return present.some((value) => value === true);
  if (key === "signatures")
    return mergeSignatures(present.flatMap((value) => Array.isArray(value) ? value : []));
  if (Array.isArray(first))
    return present.flatMap((value) => Array.isArray(value) ? value : []);
  if (isFields(first)) {
    const merged = mergeFields(present.filter(isFields));
    if (Array.isArray(merged.signatures) && merged.signatures.length > unmatchableSignaturesListedMax) {
      merged.signatures = merged.signatures.slice(0, unmatchableSignaturesListedMax);
      merged.signatures_truncated = true;
    }
    return merged;
  }
  return first;
}
function mergeSignatures(signatures) {
  const bySet = new Map;
  for (const signature of signatures) {
    if (!isFields(signature))
      continue;
    const setKey = JSON.stringify(signature.requires);
    const items = typeof signature.items === "number" ? signature.items : 0;
    const seen = bySet.get(setKey);
    if (seen === undefined)
      bySet.set(setKey, { ...signature, items });
    else
      seen.items = seen.items + items;
  }
  return [...bySet.values()].sort((a, b) => b.items - a.items);
}

// src/client/group-pages.ts
function groupCursor(group) {
  return group ?? "";
}
function mergeGroupPages(pages, limit) {
  const merged = new Map;
  let knownThrough = null;
  for (const page of pages) {
    const last = page.groups[page.groups.length - 1];
    if (page.next !== null && last !== undefined) {
      const stop = groupCursor(last.group);
      if (knownThrough === null || stop < knownThrough)
        knownThrough = stop;
    }
    for (const g of page.groups)
      addCounts(merged, g);
  }
  const sorted = [...merged.entries()].filter(([cursor]) => knownThrough === null || cursor <= knownThrough).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, counts]) => counts);
  if (limit !== undefined && sorted.length > limit) {
    const page = sorted.slice(0, limit);
    const last = page[page.length - 1];
    return { groups: page, next: last === undefined ? null : groupCursor(last.group) };
  }
  return { groups: sorted, next: knownThrough };
}
function addCounts(merged, g) {
  const cursor = groupCursor(g.group);
  const sum = merged.get(cursor) ?? { group: g.group, ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false };
  if (g.paused) {
    sum.paused = true;
    if (g.pausedUntilMs !== undefined)
      sum.pausedUntilMs = g.pausedUntilMs;
  }
  sum.ready += g.ready;
  sum.delayed += g.delayed;
  sum.waiting += g.waiting;
  sum.leased += g.leased;
  sum.dead += g.dead;
  merged.set(cursor, sum);
}

// src/lib/id-grammar.ts
var decimalDigitsMax = 16;
function parseDecimal(text, start, end) {
  const length = end - start;
  if (length <= 0 || length > decimalDigitsMax)
    return -1;
  if (length > 1 && text.charCodeAt(start) === 48)
    return -1;
  let value = 0;
  for (let i = start;i < end; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9)
      return -1;
    value = value * 10 + c;
  }
  return Number.isSafeInteger(value) ? value : -1;
}
function shardOfIdOrReceipt(text) {
  const keyColon = text.indexOf(":");
  if (keyColon < 0)
    return null;
  const shard = parseDecimal(text, 0, keyColon);
  if (shard < 0)
    return null;
  const deliveriesColon = text.indexOf(":", keyColon + 1);
  if (deliveriesColon < 0)
    return parseDecimal(text, keyColon + 1, text.length) < 0 ? null : shard;
  const bootColon = text.indexOf(":", deliveriesColon + 1);
  if (bootColon < 0 || text.indexOf(":", bootColon + 1) >= 0)
    return null;
  const key = parseDecimal(text, keyColon + 1, deliveriesColon);
  const deliveries = parseDecimal(text, deliveriesColon + 1, bootColon);
  const boot = parseDecimal(text, bootColon + 1, text.length);
  return key < 0 || deliveries < 1 || boot < 1 ? null : shard;
}

// src/protocol/key-shard.ts
var fnvOffsetBasis = 2166136261;
var fnvPrime = 16777619;
var encoder = new TextEncoder;
function fnv1a32(bytes) {
  let hash = fnvOffsetBasis;
  for (let i = 0;i < bytes.length; i++) {
    hash ^= bytes[i];
    hash = Math.imul(hash, fnvPrime) >>> 0;
  }
  return hash >>> 0;
}
function shardOfKey(ns, topic, key, shards) {
  return shardOfName(ns, topic, key, shards);
}
function shardOfGroup(ns, topic, group, shards) {
  return shardOfName(ns, topic, group, shards);
}
function shardOfName(ns, topic, name, shards) {
  const bytes = encoder.encode(`${ns}\x00${topic}\x00${name}`);
  return fnv1a32(bytes) % shards;
}

// src/client/item-shard.ts
function itemShard(ns, item, shards) {
  if (item.group !== undefined && item.group !== null)
    return shardOfGroup(ns, item.topic, item.group, shards);
  if (item.key !== undefined && item.key !== null)
    return shardOfKey(ns, item.topic, item.key, shards);
  const first = item.after?.[0];
  return first === undefined ? -1 : shardOfIdOrReceipt(first) ?? -1;
}

// src/client/topic-pages.ts
function mergeTopicPages(pages, limit) {
  const merged = new Map;
  let knownThrough = null;
  for (const page of pages) {
    const last = page.topics[page.topics.length - 1];
    if (page.next !== null && last !== undefined && (knownThrough === null || last.topic < knownThrough))
      knownThrough = last.topic;
    for (const t of page.topics)
      addCounts2(merged, t);
  }
  const sorted = [...merged.values()].filter((t) => knownThrough === null || t.topic <= knownThrough).sort((a, b) => a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0);
  if (limit !== undefined && sorted.length > limit) {
    const page = sorted.slice(0, limit);
    return { topics: page, next: page[page.length - 1]?.topic ?? null };
  }
  return { topics: sorted, next: knownThrough };
}
function addCounts2(merged, t) {
  const sum = merged.get(t.topic) ?? { topic: t.topic, ready: 0, delayed: 0, waiting: 0, leased: 0, dead: 0, paused: false };
  if (t.paused) {
    sum.paused = true;
    if (t.pausedUntilMs !== undefined)
      sum.pausedUntilMs = t.pausedUntilMs;
  }
  sum.ready += t.ready;
  sum.delayed += t.delayed;
  sum.waiting += t.waiting;
  sum.leased += t.leased;
  sum.dead += t.dead;
  merged.set(t.topic, sum);
}

// src/client/cluster-client.ts
var { clientRouteAttemptsMax: routeAttemptsMax, clientLostNodePauseMs: lostNodePauseMs, clientStickyItems, clientOwnTurnCallItems } = clusterLimits;
var { deadPageMax: deadDefault, listPageDefault: listDefault } = defaultLimits;
var routable = new Set(["MOVED", "UNAVAILABLE", "DISCONNECTED", "CLOSED", "TIMEOUT"]);
function shardOf(text) {
  return shardOfIdOrReceipt(text) ?? -1;
}

class OrqClusterClient {
  options;
  seed;
  clients = new Map;
  map = null;
  shards = 0;
  turn = Math.floor(Math.random() * 1024);
  home = null;
  homeItems = 0;
  stickyItems;
  movedTo = new Map;
  buffered = new Map;
  constructor(options, seed) {
    this.options = options;
    this.seed = seed;
    const sticky = options.stickyItems ?? clientStickyItems;
    if (!Number.isSafeInteger(sticky) || sticky < 1)
      throw new OrqError("BAD_REQUEST", `stickyItems: must be an integer of 1 or more, got ${sticky}`, { field: "stickyItems" });
    this.stickyItems = sticky;
  }
  static async connect(options = {}) {
    const seed = `${options.host ?? "127.0.0.1"}:${options.port ?? 7420}`;
    const cluster = new OrqClusterClient(options, seed);
    await cluster.refresh();
    return cluster;
  }
  async enqueue(ns, items) {
    const ids = new Array(items.length);
    const placed = items.map((item, index) => ({ item, index, shard: this.map === null ? -1 : itemShard(ns, item, this.shards) }));
    await this.routeBatch(placed, (entry) => entry.shard, async (client, group) => {
      const got = await client.enqueue(ns, group.map((entry) => entry.item));
      group.forEach((entry, i) => ids[entry.index] = got[i]);
    }, true);
    return ids;
  }
  async enqueueAndWait(ns, items, waitMs) {
    const ids = await this.enqueue(ns, items);
    return { ids, items: await this.waitFor(ns, ids, waitMs) };
  }
  async waitFor(ns, ids, waitMs) {
    const items = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.waitFor(ns, group.map((entry) => entry.id), waitMs);
      group.forEach((entry, i) => items[entry.index] = got[i] ?? null);
    });
    return items;
  }
  async dequeue(ns, request) {
    const room = new Map(request.topics.map((t) => [t.topic, t.count ?? 1]));
    const kept = this.buffered.get(ns) ?? [];
    const ready = [];
    const rest = [];
    for (const d of kept) {
      const left = room.get(d.topic) ?? 0;
      if (left > 0) {
        ready.push(d);
        room.set(d.topic, left - 1);
      } else
        rest.push(d);
    }
    if (ready.length > 0) {
      this.buffered.set(ns, rest);
      return ready;
    }
    if (this.map === null)
      return await (await this.client(this.seed)).dequeue(ns, request);
    const addrs = this.nodeAddrs();
    return await new Promise((resolve, reject) => {
      let pending = addrs.length;
      let answered = false;
      for (const addr of addrs) {
        this.client(addr).then((client) => client.dequeue(ns, request)).catch((error) => {
          if (!(error instanceof OrqError) || !routable.has(error.code)) {
            if (!answered)
              reject(error);
            answered = true;
          } else if (error.code !== "UNAVAILABLE" && error.code !== "MOVED")
            this.forget(addr);
          return [];
        }).then((deliveries) => {
          pending--;
          if (!answered && (deliveries.length > 0 || pending === 0)) {
            answered = true;
            resolve(deliveries);
          } else if (deliveries.length > 0) {
            this.buffered.set(ns, [...this.buffered.get(ns) ?? [], ...deliveries]);
          }
        });
      }
      if (addrs.length === 0)
        resolve([]);
    });
  }
  async ack(ns, receipts, options = {}) {
    const { results } = options;
    if (results !== undefined && results.length !== receipts.length)
      throw new OrqError("BAD_REQUEST", "results: must be as long as receipts", { field: "results" });
    const total = { acked: 0, stale: [] };
    const entries = receipts.map((receipt, index) => ({ receipt, result: results?.[index] }));
    await this.routeBatch(entries, (entry) => shardOf(entry.receipt), async (client, group) => {
      const receiptsOfNode = group.map((entry) => entry.receipt);
      const result = await client.ack(ns, receiptsOfNode, { results: results === undefined ? undefined : group.map((entry) => entry.result) });
      total.acked += result.acked;
      total.stale.push(...result.stale);
    });
    return total;
  }
  async nack(ns, items) {
    const total = { nacked: 0, stale: [] };
    await this.routeBatch(items, (item) => shardOf(item.receipt), async (client, group) => {
      const result = await client.nack(ns, group);
      total.nacked += result.nacked;
      total.stale.push(...result.stale);
    });
    return total;
  }
  async extend(ns, items) {
    const total = { extended: 0, stale: [] };
    await this.routeBatch(items, (item) => shardOf(item.receipt), async (client, group) => {
      const result = await client.extend(ns, group);
      total.extended += result.extended;
      total.stale.push(...result.stale);
    });
    return total;
  }
  async cancel(ns, ids) {
    const total = { cancelled: 0, missing: [] };
    await this.routeBatch(ids, shardOf, async (client, group) => {
      const result = await client.cancel(ns, group);
      total.cancelled += result.cancelled;
      total.missing.push(...result.missing);
    });
    return total;
  }
  async get(ns, ids) {
    const items = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.get(ns, group.map((entry) => entry.id));
      group.forEach((entry, i) => items[entry.index] = got[i] ?? null);
    });
    return items;
  }
  async topics(ns, query = {}) {
    const answers = await this.everyNode((client) => client.topics(ns, query));
    return mergeTopicPages(answers.flatMap((answer) => answer.result === null ? [] : [answer.result]), query.limit);
  }
  async dead(ns, topic, query = {}) {
    const answers = await this.everyNode((client) => client.dead(ns, topic, query));
    return interleaveDead(answers.map((answer) => answer.result ?? []), query.limit ?? deadDefault);
  }
  async redrive(ns, topic, ids) {
    let redriven = 0;
    if (ids !== undefined) {
      await this.routeBatch(ids, shardOf, async (client, group) => {
        const got = await client.redrive(ns, topic, group);
        redriven += got.redriven;
      });
    } else {
      for (const answer of await this.everyNode((client) => client.redrive(ns, topic)))
        redriven += answer.result?.redriven ?? 0;
    }
    return { redriven };
  }
  async stats(ns) {
    const answers = await this.everyNode((client) => client.stats(ns));
    const nodes = answers.map(({ addr, result, error }) => ({ nodeId: this.nodeIdOf(addr), addr, stats: result, error }));
    const replies = answers.flatMap((answer) => answer.result === null ? [] : [answer.result]);
    return { merged: replies.length === 1 ? replies[0] : sumStats(replies), nodes };
  }
  async list(ns, topic, query = {}) {
    if (this.map === null)
      return await (await this.client(this.seed)).list(ns, topic, query);
    const cursor = query.after === undefined ? {} : decodeListCursor(query.after);
    if (cursor === null)
      throw new OrqError("BAD_REQUEST", "after: not a cursor of a cluster listing", { field: "after" });
    const perNode = Math.max(1, Math.floor((query.limit ?? listDefault) / Math.max(1, this.nodeAddrs().length)));
    const answers = await this.everyNode(async (client, addr) => {
      const after = cursor[addr];
      if (after === listDone)
        return { items: [], next: null };
      return await client.list(ns, topic, { state: query.state, limit: perNode, after });
    });
    const next = {};
    for (const { addr, result } of answers)
      next[addr] = result === null ? cursor[addr] ?? "" : result.next ?? listDone;
    const more = Object.values(next).some((value) => value !== listDone && value !== "");
    const items = answers.flatMap((answer) => answer.result?.items ?? []).sort(listOrder);
    return { items, next: more ? encodeListCursor(Object.fromEntries(Object.entries(next).filter(([, value]) => value !== ""))) : null };
  }
  async explain(ns, ids) {
    const items = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const got = await client.explain(ns, group.map((entry) => entry.id));
      group.forEach((entry, i) => items[entry.index] = got[i] ?? null);
    });
    return items;
  }
  async requestItems(op, ns, ids) {
    const items = new Array(ids.length).fill(null);
    const indexed = ids.map((id, index) => ({ id, index }));
    await this.routeBatch(indexed, (entry) => shardOf(entry.id), async (client, group) => {
      const reply = await client.request(op, { ns, ids: group.map((entry) => entry.id) });
      const got = Array.isArray(reply.items) ? reply.items : [];
      group.forEach((entry, i) => items[entry.index] = got[i] ?? null);
    });
    return items;
  }
  async requestAnyNode(op, fields) {
    return await this.anyNode((client) => client.request(op, fields));
  }
  async pause(ns, topic, query = {}) {
    return await this.anyNode((client) => client.pause(ns, topic, query));
  }
  async resume(ns, topic, query = {}) {
    return await this.anyNode((client) => client.resume(ns, topic, query));
  }
  async policy(ns, topic, input) {
    return await this.anyNode((client) => client.policy(ns, topic, input));
  }
  async policies(ns, topic, query = {}) {
    return await this.anyNode((client) => client.policies(ns, topic, query));
  }
  async schedule(ns, input) {
    return await this.anyNode((client) => client.schedule(ns, input));
  }
  async unschedule(ns, name) {
    return await this.anyNode((client) => client.unschedule(ns, name));
  }
  async schedules(ns, query = {}) {
    return await this.anyNode((client) => client.schedules(ns, query));
  }
  async groups(ns, topic, query = {}) {
    const answers = await this.everyNode((client) => client.groups(ns, topic, query));
    return mergeGroupPages(answers.flatMap((answer) => answer.result === null ? [] : [answer.result]), query.limit);
  }
  get isCluster() {
    return this.map !== null;
  }
  work(options, handler) {
    return startWorker(this, options, handler);
  }
  async close() {
    for (const client of this.clients.values())
      await client.close();
    this.clients.clear();
  }
  async refresh() {
    const addrs = [this.seed, ...this.nodeAddrs().filter((addr) => addr !== this.seed)];
    let lastError = null;
    for (const addr of addrs) {
      let client;
      try {
        client = await this.client(addr);
      } catch (error) {
        lastError = error;
        this.forget(addr);
        continue;
      }
      this.shards = client.server?.shards ?? 0;
      try {
        this.map = (await client.request("cluster")).cluster;
        return;
      } catch (error) {
        if (error instanceof OrqError && (error.code === "BAD_REQUEST" || error.code === "UNKNOWN_OP")) {
          this.map = null;
          return;
        }
        lastError = error;
        this.forget(addr);
      }
    }
    throw lastError instanceof Error ? lastError : new OrqError("DISCONNECTED", "no node of the cluster answers");
  }
  async everyNode(ask) {
    const answers = [];
    for (const addr of this.nodeAddrs()) {
      try {
        answers.push({ addr, result: await ask(await this.client(addr), addr) });
      } catch (error) {
        if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null)
          throw error;
        if (error.code !== "MOVED" && error.code !== "UNAVAILABLE")
          this.forget(addr);
        answers.push({ addr, result: null, error: error.message });
      }
    }
    return answers;
  }
  nodeIdOf(addr) {
    return this.map?.nodes.find((node) => node.addr === addr)?.node_id ?? this.clients.get(addr)?.server?.nodeId ?? null;
  }
  async anyNode(ask) {
    let lastError = null;
    for (const addr of [this.seed, ...this.nodeAddrs().filter((other) => other !== this.seed)]) {
      try {
        return await ask(await this.client(addr));
      } catch (error) {
        if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null)
          throw error;
        if (error.code !== "MOVED" && error.code !== "UNAVAILABLE")
          this.forget(addr);
        lastError = error;
      }
    }
    throw lastError instanceof Error ? lastError : new OrqError("DISCONNECTED", "no node of the cluster answers");
  }
  async routeBatch(entries, shardOfEntry, send, sticky = false) {
    let remaining = entries;
    for (let attempt = 1;remaining.length > 0; attempt++) {
      const groups = new Map;
      for (const entry of remaining) {
        const addr = this.ownerAddr(shardOfEntry(entry)) ?? "";
        const group = groups.get(addr);
        if (group === undefined)
          groups.set(addr, [entry]);
        else
          group.push(entry);
      }
      const anyGroup = groups.get("");
      if (anyGroup !== undefined) {
        groups.delete("");
        const anyNode = sticky ? this.stickyAddr(anyGroup.length) : this.nextAddr();
        const group = groups.get(anyNode);
        if (group === undefined)
          groups.set(anyNode, anyGroup);
        else
          group.push(...anyGroup);
      }
      const retry = [];
      let pauseMs = 0;
      await Promise.all([...groups].map(async ([addr, group]) => {
        try {
          await send(await this.client(addr), group);
        } catch (error) {
          if (!(error instanceof OrqError) || !routable.has(error.code) || this.map === null || attempt >= routeAttemptsMax)
            throw error;
          if (error.code !== "MOVED" && error.code !== "UNAVAILABLE")
            this.forget(addr);
          if (addr === this.home)
            this.home = null;
          const { shard, addr: owner, mapVersion } = error.details;
          if (error.code === "MOVED" && shard !== undefined && owner !== undefined)
            this.movedTo.set(shard, { addr: owner, mapVersion: mapVersion ?? 0 });
          pauseMs = Math.max(pauseMs, error.code === "UNAVAILABLE" ? error.details.retryAfterMs ?? lostNodePauseMs : error.code === "MOVED" ? 0 : lostNodePauseMs);
          retry.push(...group);
        }
      }));
      remaining = retry;
      if (remaining.length > 0) {
        if (pauseMs > 0)
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        await this.refresh().catch(() => {
          return;
        });
      }
    }
  }
  ownerAddr(shard) {
    if (this.map === null || shard < 0)
      return this.map === null ? this.seed : null;
    const moved = this.movedTo.get(shard);
    if (moved !== undefined && moved.mapVersion > this.map.map_version)
      return moved.addr;
    const owner = this.map.owners[shard] ?? null;
    return this.map.nodes.find((node) => node.node_id === owner)?.addr ?? null;
  }
  nodeAddrs() {
    return this.map === null ? [this.seed] : this.map.nodes.map((node) => node.addr);
  }
  nextAddr() {
    const addrs = this.nodeAddrs();
    this.turn = (this.turn + 1) % Math.max(1, addrs.length);
    return addrs[this.turn] ?? this.seed;
  }
  stickyAddr(items) {
    if (items >= clientOwnTurnCallItems)
      return this.nextAddr();
    if (this.home === null || this.homeItems >= this.stickyItems || !this.nodeAddrs().includes(this.home)) {
      this.home = this.nextAddr();
      this.homeItems = 0;
    }
    this.homeItems += items;
    return this.home;
  }
  async client(addr) {
    const existing = this.clients.get(addr);
    if (existing !== undefined && existing.connected)
      return existing;
    const colon = addr.lastIndexOf(":");
    const client = await OrqClient.connect({ ...this.options, host: addr.slice(0, colon), port: Number(addr.slice(colon + 1)), reconnect: false });
    this.clients.set(addr, client);
    return client;
  }
  forget(addr) {
    const client = this.clients.get(addr);
    this.clients.delete(addr);
    client?.close().catch(() => {
      return;
    });
  }
}
export {
  OrqClient,
  OrqClusterClient,
  OrqError,
  errorCodes,
  formatTrace,
  nackDelayMs,
  parseTrace,
  realClientClock,
  traceBytesMax,
  workConcurrencyMax,
  workDefaults
};
