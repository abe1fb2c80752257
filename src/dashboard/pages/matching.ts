// Matching: per topic, the worker kinds that asked lately (capabilities and
// last ask), the ready items no asking worker can take grouped by `requires`
// signature, and for each signature the constraint each kind fails; then the
// deliveries of its items with `prefers` by fit and its items held for a
// full fit. Read from the engine's inspect query through the scoped
// inspector (no op reports this detail); the topic list comes from the
// `topics` op.

import type { ConstraintMiss, MatchingView } from "../../engine/reads/inspect.ts";
import { count, duration, json } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { isClusterNode, thisNodeBadge } from "./node-scope.ts";

/** A constraint in words: `= "h100"`, `≥ 40 and < 128`, `in ["a","b"]`, `≠ "x"`, `present`. */
export function wantsText(wants: unknown): string {
  if (typeof wants !== "object" || wants === null) return `= ${json(wants)}`;
  const parts: string[] = [];
  const ops = wants as Record<string, unknown>;
  const words: Record<string, string> = { gte: "≥", gt: ">", lte: "≤", lt: "<", ne: "≠", in: "in", all: "contains all of" };
  for (const [op, value] of Object.entries(ops)) {
    if (op === "exists") parts.push(value === true ? "present" : "absent");
    else parts.push(`${words[op] ?? op} ${json(value)}`);
  }
  return parts.join(" and ");
}

function missText(miss: ConstraintMiss): string {
  const has = miss.has === null ? `has no ${miss.feature}` : `has ${miss.has.map((v) => JSON.stringify(v)).join(", ")}`;
  return `requires ${miss.feature} ${wantsText(miss.wants)}; ${has}`;
}

function kindLabel(view: MatchingView, kind: number): string {
  return `kind ${view.askers.findIndex((a) => a.kind === kind) + 1}`;
}

function viewHtml(ctx: PageContext, topic: string, view: MatchingView): Html {
  if (!view.topicExists) return html`<p class="muted">Topic <b>${topic}</b> holds no items.</p>`;
  const askers =
    view.askers.length === 0
      ? html`<p class="notice">No worker asked this topic in the last ${duration(view.askWindowMs)}: nothing is consuming it.</p>`
      : html`<table id="askers"><thead><tr><th>kind</th><th>capabilities</th><th>last asked</th></tr></thead><tbody>
${view.askers.map((a, i) => html`<tr><td>kind ${i + 1}</td><td><code>${a.capabilities === null ? "(none: takes only items without requires)" : json(a.capabilities)}</code></td><td>${duration(ctx.nowMs - a.lastAskAtMs)} ago</td></tr>`)}
</tbody></table>`;
  const stuck =
    view.askers.length === 0
      ? html``
      : view.stuck.length === 0
        ? html`<p class="ok" id="no-unmatchable">Every ready item can be taken by at least one of these kinds.</p>`
        : html`<table id="unmatchable"><thead><tr><th>requires</th><th class="num">ready items</th><th>why no kind takes them</th></tr></thead><tbody>
${view.stuck.map((s) => html`<tr><td><code>${json(s.requires)}</code></td><td class="num">${count(s.items)}</td><td><ul class="reasons">${s.misses.map(
          (m) => html`<li><b>${kindLabel(view, m.kind)}</b>: ${m.noCapabilities ? "has no capabilities (takes only items without requires)" : m.failed.map(missText).join("; and ")}</li>`,
        )}</ul></td></tr>`)}
</tbody></table>${view.stuckTruncated ? html`<p class="muted">More signatures are stuck than shown.</p>` : ""}`;
  return html`<h2>Worker kinds that asked in the last ${duration(view.askWindowMs)}</h2>${askers}<h2>Ready items no asking worker can take</h2>${stuck}${preferencesHtml(view)}`;
}

/** Deliveries of the topic's items with `prefers` since the server started, by fit, and the items held for a full fit now. */
function preferencesHtml(view: MatchingView): Html {
  const { full, partial, released } = view.fitDeliveries;
  const held =
    view.heldItems === 0
      ? html``
      : html`<p id="held-items">${count(view.heldItems)} ready ${view.heldItems === 1 ? "item is" : "items are"} held for workers that fit every <code>prefers</code> entry until ${view.heldItems === 1 ? "its" : "their"} <code>prefer_wait_ms</code> runs out.</p>`;
  return html`<h2>Deliveries of items with prefers since the server started</h2>
<table id="fit-deliveries"><thead><tr><th>fit</th><th class="num">deliveries</th><th>meaning</th></tr></thead><tbody>
<tr data-fit="full"><td>full</td><td class="num">${count(full)}</td><td>the worker satisfied every entry</td></tr>
<tr data-fit="partial"><td>partial</td><td class="num">${count(partial)}</td><td>it did not, and the item had no <code>prefer_wait_ms</code></td></tr>
<tr data-fit="released"><td>released</td><td class="num">${count(released)}</td><td>it did not, and took the item after its wait ran out</td></tr>
</tbody></table>${held}`;
}

export async function matchingPage(ctx: PageContext): Promise<PageResult> {
  const topic = ctx.url.searchParams.get("topic") ?? "";
  const reply = await ctx.ops.callOrThrow(ctx.session.opSession, "topics", { ns: ctx.ns });
  const topics = (reply.topics ?? []) as Array<Record<string, unknown>>;
  const stats = await ctx.ops.callOrThrow(ctx.session.opSession, "stats", { ns: ctx.ns });
  const reports = (((stats.namespaces ?? {}) as Record<string, Record<string, unknown>>)[ctx.ns]?.topics ?? {}) as Record<string, Record<string, unknown>>;
  const links = topics.map((t) => {
    const name = String(t.topic);
    const stuck = Number((reports[name]?.unmatchable as Record<string, unknown> | undefined)?.items ?? 0);
    return html`<a href="/matching${query({ ns: ctx.ns, topic: name })}" class="${name === topic ? "current" : ""}">${name}${stuck > 0 ? html` <span class="badge warn">${count(stuck)} unmatchable</span>` : ""}</a> `;
  });
  const top = html`<p>Topics: ${links.length === 0 ? html`<span class="muted">none</span>` : links}</p>`;
  if (topic === "") return { title: "Matching", top };
  const view = ctx.inspector.matchingView(ctx.session.opSession, ctx.ns, topic, ctx.nowMs);
  // The view is this node's engine: in cluster mode its askers, stuck items and fits are of this node's shards only.
  const scope = isClusterNode(ctx)
    ? html`<p class="muted" id="matching-scope">${thisNodeBadge(ctx)} The view below reads this node's engine: the workers that asked this node and the items on its shards. The unmatchable counts above are the whole cluster's; each node's dashboard shows its own view.</p>`
    : html``;
  return { title: `Matching · ${topic}`, top, live: html`${scope}${viewHtml(ctx, topic, view)}` };
}
