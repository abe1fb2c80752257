// The protocol's hot path for the commonest request, an enqueue of 100-byte
// payloads (1 item and 100 items): frame split (FrameDecoder over a chunk
// holding the frame), MessagePack decode with the server's request-frame
// decoder (RequestFrameDecoder; bench/micro/request-decode.bench.ts sets it
// beside the library decoder), the enqueue field checks (decodeEnqueueItems,
// which copies each payload out of the network buffer), and the other
// direction: encoding the request as a client does and the enqueue reply as
// the server does.
//
// Expected on the 2-core build machine (mitata averages, Bun 1.4.5, a quiet
// box): for the 100-item request (13.2 KB framed) decode 24.5-25.5 µs, decode
// + field checks 35-44 µs (0.35-0.45 µs per item), client encode 20-27 µs,
// reply encode (100 ids) 3-5 µs; for the 1-item request decode 0.44-0.83 µs,
// decode + checks 0.7-1.05 µs, encode 0.45-0.6 µs, reply 0.25-0.32 µs; the
// frame split itself 3-60 ns whatever the size (views, no copies). So the
// codec alone caps one event loop near 25 k requests/s of 100 items (2.5 M
// items/s), far above storage's 250-300 k items/s: the codec is not the
// bound.
// Run: ./node_modules/.bin/bun bench/micro/frame.bench.ts

import { bench, do_not_optimize, group, run, summary } from "mitata";
import { defaultLimits } from "../../src/limits.ts";
import { FrameDecoder } from "../../src/protocol/frame-decoder.ts";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";
import { RequestFrameDecoder } from "../../src/protocol/request-frame-decoder.ts";
import { decodeEnqueueItems } from "../../src/server/ops/enqueue.ts";
import { RequestReader } from "../../src/server/request-reader.ts";

const PAYLOAD_BYTES = 100;
const payload = new Uint8Array(PAYLOAD_BYTES).fill(0x78);

function enqueueRequest(items: number): Record<string, unknown> {
  return {
    id: 123_456,
    op: "enqueue",
    ns: "bench",
    items: Array.from({ length: items }, (_, i) => ({ topic: "load", priority: i % 10, payload })),
  };
}

function enqueueReply(items: number): Record<string, unknown> {
  return { id: 123_456, ok: true, ids: Array.from({ length: items }, (_, i) => `0f.${(1_000_000 + i).toString(36)}`) };
}

const frameEncoder = new FrameEncoder();
const requestDecoder = new RequestFrameDecoder({ depthMax: defaultLimits.decodeDepthMax, frameBytesMax: defaultLimits.frameBytesMax });

let lastBody = 0;
const frameDecoder = new FrameDecoder(defaultLimits.frameBytesMax, {
  frame(_bytes, start, end) {
    lastBody = end - start;
    return true;
  },
  frameTooLarge() {
    throw new Error("unexpected frame too large");
  },
});

for (const items of [1, 100]) {
  const request = enqueueRequest(items);
  const frame = frameEncoder.encode(request);
  const body = frame.subarray(4);
  const reply = enqueueReply(items);
  // Checked once outside the timed loops: the decoded request must pass the field checks.
  const decoded = requestDecoder.decodeBody(body) as Record<string, unknown>;
  const checked = decodeEnqueueItems(decoded, defaultLimits, Date.now(), new RequestReader());
  if (checked === null || checked.length !== items) throw new Error("enqueue request failed its own field checks");

  summary(() => {
    group(`enqueue of ${items} item(s), ${frame.length} bytes framed`, () => {
      bench("frame split (FrameDecoder.push)", () => {
        frameDecoder.push(frame);
        do_not_optimize(lastBody);
      });
      bench("msgpack decode (request decoder)", () => do_not_optimize(requestDecoder.decodeBody(body)));
      bench("decode + field checks", () => {
        const value = requestDecoder.decodeBody(body) as Record<string, unknown>;
        do_not_optimize(decodeEnqueueItems(value, defaultLimits, 1_800_000_000_000, new RequestReader()));
      });
      bench("encode request (client side)", () => do_not_optimize(frameEncoder.encode(request)));
      bench(`encode reply with ${items} id(s) (server side)`, () => do_not_optimize(frameEncoder.encode(reply)));
    });
  });
}

await run();
