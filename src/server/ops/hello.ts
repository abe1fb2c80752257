// hello: protocol check, authentication, and what the server offers. With
// tokens configured, a hello without a valid token is UNAUTHORIZED and leaves
// the connection unauthenticated (even if an earlier hello succeeded). In
// cluster mode it carries the shard map (`cluster`).

import { protocolVersion, type WireHelloResult } from "../../protocol/wire-types.ts";
import { allNamespaces } from "../auth.ts";
import { failed, type OpContext, type OpOutcome, type OpSpec } from "../op-types.ts";
import { RequestReader, type Source } from "../request-reader.ts";


export const helloOp: OpSpec = {
  namespace: "none",
  needsAuth: false,
  allowedWhileDraining: true,
  changesState: false,
  handle(request: Source, _ns: string | null, ctx: OpContext): OpOutcome {
    const reader = new RequestReader();
    const protocol = reader.requiredInt(request, "protocol", { min: 0, max: Number.MAX_SAFE_INTEGER });
    const token = reader.string(request, "token", 0, ctx.limits.tokenBytesMax);
    if (reader.failure) return failed(reader.failure);
    if (protocol !== protocolVersion) {
      return failed({
        code: "BAD_REQUEST",
        field: "protocol",
        message: `protocol: this server speaks protocol ${protocolVersion}, not ${protocol}`,
      });
    }
    if (ctx.tokens.required) {
      const access = token === null ? null : ctx.tokens.access(token);
      ctx.session.scope = access?.scope ?? null;
      ctx.session.readOnly = access?.readOnly ?? false;
      if (access === null) {
        return {
          kind: "error",
          error: { code: "UNAUTHORIZED", message: token === null ? "a token is required" : "invalid token" },
        };
      }
    } else {
      ctx.session.scope = allNamespaces;
      ctx.session.readOnly = false;
    }
    const { limits, serverInfo } = ctx;
    const value: WireHelloResult = {
      server: "orq",
      version: serverInfo.version,
      protocol: protocolVersion,
      node_id: serverInfo.nodeId,
      shards: serverInfo.shards,
      max_frame_bytes: limits.frameBytesMax,
      limits: {
        payload_bytes_max: limits.payloadBytesMax,
        metadata_bytes_max: limits.metadataBytesMax,
        result_bytes_max: limits.resultBytesMax,
        items_per_enqueue_max: limits.itemsPerEnqueueMax,
        count_per_dequeue_max: limits.countPerDequeueMax,
        topic_bytes_max: limits.topicBytesMax,
        wait_ms_max: limits.waitMsMax,
        lease_ms_max: limits.leaseMsMax,
        ids_per_request_max: limits.idsPerRequestMax,
      },
    };
    if (serverInfo.clusterMap) value.cluster = serverInfo.clusterMap();
    if (serverInfo.memoryNamespaces !== undefined && serverInfo.memoryNamespaces.length > 0) value.memory_namespaces = [...serverInfo.memoryNamespaces];
    return { kind: "reply", value: value as unknown as Source, durable: null };
  },
};
