// The dashboard's ops in cluster mode (docs/CLUSTER.md, docs/DASHBOARD.md
// "Cluster mode"): through the TypeScript cluster client
// (src/client/cluster-client.ts), signed in with the session's own token, so
// each node checks that token as it checks any client's and a dashboard user
// can do on another node exactly what the token could do over TCP. Reads that
// a node answers for its own shards (`stats`, `topics`, `list`, `dead`,
// `groups`) ask every node and are merged as the CLI merges them
// (cluster-merge.ts, topic-pages.ts, group-pages.ts); `get`, `explain`,
// `cancel` and `redrive` with ids go to each id's owner, following MOVED;
// `redrive` without ids asks every node; `schedule` and `unschedule` go to a
// node that takes them. The ops one node answers for the whole cluster
// (`pause`, `resume`, `policies`, `schedules`, `cluster`) stay on this node's
// dispatcher (OpCaller), as on a single node. Replies come back in wire form
// (cluster-wire.ts), so the pages do not know which path answered.

import { OrqClusterClient } from "../client/cluster-client.ts";
import { OrqError } from "../client/orq-error.ts";
import type { ItemState } from "../client/types.ts";
import type { Clock } from "../lib/clock.ts";
import { dashboardLimits } from "../limits.ts";
import { isErrorCode } from "../protocol/error-codes.ts";
import type { OpName } from "../protocol/op-names.ts";
import type { Session } from "../server/op-types.ts";
import { groupPageToWire, itemPageToWire, itemStateToWire, topicPageToWire } from "./cluster-wire.ts";
import { OpCaller, type OpReply, type RequestHandler } from "./op-caller.ts";

type Fields = Record<string, unknown>;

/** The field of a merged `stats` reply that lists the nodes that did not answer (statsWithUnanswered). */
export const unansweredNodesField = "unanswered_nodes";

type Route = (cluster: OrqClusterClient, fields: Fields) => Promise<Fields>;

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const optionalText = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const optionalNumber = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);

/** The ops that reach past this node, and how each is asked of the cluster. */
const routes: Partial<Record<OpName, Route>> = {
  stats: async (c, f) => statsWithUnanswered(await c.stats(optionalText(f.ns))),
  topics: async (c, f) => topicPageToWire(await c.topics(text(f.ns), { prefix: optionalText(f.prefix), limit: optionalNumber(f.limit), after: optionalText(f.after) })),
  // The node checks `state` as it checks any client's (BAD_REQUEST for a name it does not know).
  list: async (c, f) => itemPageToWire(await c.list(text(f.ns), text(f.topic), { state: optionalText(f.state) as ItemState["state"] | undefined, limit: optionalNumber(f.limit), after: optionalText(f.after) })),
  dead: async (c, f) => ({ items: (await c.dead(text(f.ns), text(f.topic), { limit: optionalNumber(f.limit) })).map(itemStateToWire) }),
  groups: async (c, f) => groupPageToWire(await c.groups(text(f.ns), text(f.topic), { limit: optionalNumber(f.limit), after: optionalText(f.after) })),
  get: async (c, f) => ({ items: await c.requestItems("get", text(f.ns), texts(f.ids)) }),
  explain: async (c, f) => ({ items: await c.requestItems("explain", text(f.ns), texts(f.ids)) }),
  cancel: async (c, f) => ({ ...(await c.cancel(text(f.ns), texts(f.ids))) }),
  redrive: async (c, f) => ({ ...(await c.redrive(text(f.ns), text(f.topic), f.ids === undefined ? undefined : texts(f.ids))) }),
  schedule: async (c, f) => replyFields(await c.requestAnyNode("schedule", f)),
  unschedule: async (c, f) => replyFields(await c.requestAnyNode("unschedule", f)),
};

interface Connected {
  cluster: Promise<OrqClusterClient>;
  mapReadAtMs: number;
}

export class ClusterOpCaller extends OpCaller {
  /** One cluster client per token that signed in ("" when no token is configured): the configured tokens bound them. */
  private readonly clients = new Map<string, Connected>();

  constructor(
    dispatcher: RequestHandler,
    /** This node's own address (its --advertise): the cluster client reads the map from it first. */
    private readonly seed: string,
    /** The token a session signed in with (SessionStore.tokenOf); undefined when none is configured. */
    private readonly tokenOf: (session: Session) => string | undefined,
    private readonly clock: Clock,
  ) {
    super(dispatcher);
  }

  override async call(session: Session, op: OpName, fields: Record<string, unknown>, metered = true): Promise<OpReply> {
    const route = routes[op];
    if (route === undefined) return await super.call(session, op, fields, metered);
    const token = this.tokenOf(session);
    try {
      const cluster = await this.clientFor(token ?? "");
      return { ok: true, value: await route(cluster, withoutUndefined(fields)) };
    } catch (error) {
      if (!(error instanceof OrqError)) throw error;
      // A node gone (DISCONNECTED, TIMEOUT: the client's own codes) is UNAVAILABLE to the page.
      const code = isErrorCode(error.code) ? error.code : "UNAVAILABLE";
      return { ok: false, error: { code, message: error.message.replace(/^[A-Z_]+: /, "") } };
    }
  }

  /** Closes every cluster client (the dashboard stops). */
  async close(): Promise<void> {
    const clients = [...this.clients.values()];
    this.clients.clear();
    for (const connected of clients) await (await connected.cluster.catch(() => null))?.close();
  }

  /** The token's cluster client, connected on first use, its map read again when older than clusterMapRefreshMs. */
  private async clientFor(token: string): Promise<OrqClusterClient> {
    const nowMs = this.clock.nowMs();
    let connected = this.clients.get(token);
    if (connected === undefined) {
      const colon = this.seed.lastIndexOf(":");
      const cluster = OrqClusterClient.connect({
        host: this.seed.slice(0, colon),
        port: Number(this.seed.slice(colon + 1)),
        token: token === "" ? undefined : token,
        clientName: "orq-dashboard",
        requestTimeoutMs: dashboardLimits.clusterRequestTimeoutMs,
        reconnect: false,
      });
      connected = { cluster, mapReadAtMs: nowMs };
      this.clients.set(token, connected);
      // A failed connect is not kept: the next page tries again.
      cluster.catch(() => {
        if (this.clients.get(token) === connected) this.clients.delete(token);
      });
      return await cluster;
    }
    const cluster = await connected.cluster;
    if (nowMs - connected.mapReadAtMs >= dashboardLimits.clusterMapRefreshMs) {
      connected.mapReadAtMs = nowMs;
      await cluster.refresh();
    }
    return cluster;
  }
}

/** A raw reply without its envelope (`id`, `ok`), as OpCaller hands a page its dispatcher's. */
function replyFields(reply: Fields): Fields {
  const { id: _id, ok: _ok, ...fields } = reply;
  return fields;
}

/**
 * The merged `stats`, and under `unanswered_nodes` the nodes that did not
 * answer (gone or busy: their shards are missing from the sums), so the
 * overview can say the counts are short. A node's own reply has no such field.
 */
function statsWithUnanswered(answer: Awaited<ReturnType<OrqClusterClient["stats"]>>): Fields {
  const unanswered = answer.nodes.filter((node) => node.stats === null).map((node) => ({ node_id: node.nodeId, addr: node.addr, error: node.error ?? "no answer" }));
  return unanswered.length === 0 ? answer.merged : { ...answer.merged, [unansweredNodesField]: unanswered };
}

/** The fields a page set: undefined ones are left out, as the codec would leave them out of a frame. */
function withoutUndefined(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
