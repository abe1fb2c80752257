// An item: looked up by id (the `get` op) or by topic and idempotency key
// (the engine's read-only key index through the scoped inspector, then
// `get`). Shows state, group, why it is not being delivered (the `explain`
// op), attempts, lease, requires, prefers and its wait, each `after`
// dependency with its own state, the dead reason, the trace id, and payload
// and metadata (a long job's progress, which `extend` replaces) as escaped
// text, JSON when they parse, else hex. An ended item shows its outcome and,
// when acked with one, its `ack` result the same way.

import { explainEntryFrom } from "../explain-reply.ts";
import { bytesBlock, count, instant, json } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { traceIdOf } from "../trace-id.ts";
import { numberField, stringField, type WireMap } from "../wire-values.ts";
import { explainList } from "./explain.ts";
import { isClusterNode, thisNodeBadge } from "./node-scope.ts";

function lookupForm(ctx: PageContext, id: string, topic: string, key: string): Html {
  return html`<div class="columns"><form method="get" action="/item" class="filter"><input type="hidden" name="ns" value="${ctx.ns}">
<label>Item id <input type="text" name="id" value="${id}"></label> <button type="submit">Find by id</button></form>
<form method="get" action="/item" class="filter"><input type="hidden" name="ns" value="${ctx.ns}">
<label>Topic <input type="text" name="topic" value="${topic}"></label> <label>Idempotency key <input type="text" name="key" value="${key}"></label> <button type="submit">Find by key</button></form></div>`;
}

export async function itemPage(ctx: PageContext): Promise<PageResult> {
  const params = ctx.url.searchParams;
  const key = params.get("key") ?? "";
  const topic = params.get("topic") ?? "";
  let id = params.get("id") ?? "";
  const top = lookupForm(ctx, id, topic, key);
  if (id === "" && key !== "" && topic !== "") {
    const found = ctx.inspector.idByKey(ctx.session.opSession, ctx.ns, topic, key);
    if (found === null) {
      // The key index is this node's engine's: in cluster mode another node's shard may hold the key (its shard depends on the item's group too).
      const where = isClusterNode(ctx) ? html` on this node's shards${thisNodeBadge(ctx)}; the item may be on another node's, whose dashboard finds it by key (any dashboard finds it by id)` : "";
      return { title: "Find item", top, bottom: html`<p class="notice" id="key-not-found">No live item of topic <b>${topic}</b> holds the key <b>${key}</b>${where}.</p>` };
    }
    id = found;
  }
  if (id === "") return { title: "Find item", top };
  const reply = await ctx.ops.callOrThrow(ctx.session.opSession, "get", { ns: ctx.ns, ids: [id] });
  const item = ((reply.items ?? []) as Array<Record<string, unknown> | null>)[0] ?? null;
  if (item === null) return { title: "Find item", top, live: html`<p class="notice">No item <b>${id}</b> in namespace <b>${ctx.ns}</b> (unknown, or ended longer ago than the outcome retention).</p>` };
  if (item.state === "ended") return { title: `Item ${id}`, top, live: endedItem(id, item) };
  const group = typeof item.group === "string" ? item.group : null;
  const after = Array.isArray(item.after) ? (item.after as string[]) : [];
  const why = await whyNotDelivered(ctx, id, group);
  let dependencies: Html = html`<span class="muted">none</span>`;
  if (after.length > 0) {
    const deps = await ctx.ops.callOrThrow(ctx.session.opSession, "get", { ns: ctx.ns, ids: after });
    const states = (deps.items ?? []) as Array<Record<string, unknown> | null>;
    dependencies = html`<ul>${after.map((dep, i) => {
      const s = states[i] ?? null;
      const text = s === null ? "unknown (ended long ago: counts as acked)" : s.state === "ended" ? `ended: ${String(s.outcome)}` : String(s.state);
      return html`<li><a href="/item${query({ ns: ctx.ns, id: dep })}">${dep}</a>: ${text}</li>`;
    })}</ul>`;
  }
  const live = html`<dl class="item" id="item">
<dt>id</dt><dd>${String(item.id)}</dd>
<dt>topic</dt><dd><a href="/topic${query({ ns: ctx.ns, topic: String(item.topic) })}">${String(item.topic)}</a></dd>
<dt>state</dt><dd data-state="${String(item.state)}">${String(item.state)}</dd>
<dt>group</dt><dd>${group ?? html`<span class="muted">none</span>`}</dd>
<dt>why not delivered</dt><dd id="explain">${why}</dd>
<dt>priority</dt><dd>${String(item.priority)}</dd>
<dt>attempts</dt><dd>${String(item.attempt)}</dd>
<dt>enqueued</dt><dd>${instant(item.enqueued_at_ms)}</dd>
<dt>deliver at</dt><dd>${instant(item.deliver_at_ms)}</dd>
<dt>lease expires</dt><dd>${item.lease_expires_at_ms === undefined ? html`<span class="muted">not leased</span>` : instant(item.lease_expires_at_ms)}</dd>
<dt>requires</dt><dd>${item.requires === undefined ? html`<span class="muted">none</span>` : html`<code>${json(item.requires)}</code>`}</dd>
${preferenceRows(item)}
<dt>after</dt><dd>${dependencies}</dd>
<dt>idempotency key</dt><dd>${typeof item.key === "string" ? item.key : html`<span class="muted">none</span>`}</dd>
<dt>dead reason</dt><dd>${typeof item.dead_reason === "string" ? item.dead_reason : html`<span class="muted">–</span>`}</dd>
<dt>trace</dt><dd id="trace">${traceHtml(stringField(item, "trace"))}</dd>
<dt>payload</dt><dd id="payload">${bytesBlock(item.payload as Uint8Array)}</dd>
<dt>metadata (progress)</dt><dd id="metadata">${bytesBlock(item.metadata as Uint8Array)}</dd>
</dl>`;
  return { title: `Item ${id}`, top, live };
}

/** An ended item: how it ended and, when acked with one, its result. */
function endedItem(id: string, item: Record<string, unknown>): Html {
  const ended = html`<p>Item <b>${id}</b> has ended: <b data-state="ended">${String(item.outcome)}</b>.</p>`;
  if (!(item.result instanceof Uint8Array)) return ended;
  return html`${ended}<dl class="item" id="item"><dt>result</dt><dd id="result">${bytesBlock(item.result)}</dd></dl>`;
}

/** `prefers` and, for an item that has it, its `prefer_wait_ms` (the server leaves out 0). */
function preferenceRows(item: WireMap): Html {
  if (item.prefers === undefined || item.prefers === null) return html`<dt>prefers</dt><dd id="prefers"><span class="muted">none</span></dd>`;
  const waitMs = numberField(item, "prefer_wait_ms") ?? 0;
  const wait = waitMs === 0 ? html`<span class="muted">none: any worker its requires allows may take it at once</span>` : html`${count(waitMs)} ms as ready, for workers that fit every entry`;
  return html`<dt>prefers</dt><dd id="prefers"><code>${json(item.prefers)}</code></dd>
<dt>prefer wait</dt><dd id="prefer-wait">${wait}</dd>`;
}

/** The trace id of a W3C traceparent, the whole context on hover; another format as it is. */
function traceHtml(trace: string | undefined): Html {
  if (trace === undefined) return html`<span class="muted">none</span>`;
  const traceId = traceIdOf(trace);
  return traceId === null ? html`<code>${trace}</code>` : html`<code data-trace-id="${traceId}" title="${trace}">${traceId}</code>`;
}

/**
 * The `explain` reasons of a live item. A failed `explain` is shown in
 * place of the list, with its code: the rest of the item page does not
 * depend on it.
 */
async function whyNotDelivered(ctx: PageContext, id: string, group: string | null): Promise<Html> {
  const reply = await ctx.ops.call(ctx.session.opSession, "explain", { ns: ctx.ns, ids: [id] });
  if (!reply.ok) return html`<span class="error" data-error="${reply.error.code}">explain: ${reply.error.code}: ${reply.error.message}</span>`;
  const entry = explainEntryFrom(reply.value);
  return entry === null ? html`<span class="muted">the server no longer holds this item</span>` : explainList(ctx, entry, group);
}
