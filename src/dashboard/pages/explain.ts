// The item page's "why not delivered" list: each `explain` reason by its
// name with its details in words. Instants show as UTC dates with the time
// left, `after` ids link to their items, `no_worker` lists the constraints
// each worker kind fails, and an unknown reason shows its details as JSON.

import { count, duration, instant, json } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { ExplainEntry, ExplainReason } from "../explain-reply.ts";
import type { PageContext } from "../page-context.ts";

/** `behind` counts the items ahead up to this many (the contract's bound), so a count at it means "or more". */
const aheadCountedMax = 1000;

function when(ctx: PageContext, atMs: number | undefined): Html {
  if (atMs === undefined) return html`<span class="muted">an unknown time</span>`;
  const left = atMs - ctx.nowMs;
  return html`<time datetime="${new Date(atMs).toISOString()}">${instant(atMs)}</time> <span class="muted">(${left > 0 ? `in ${duration(left)}` : "now"})</span>`;
}

function pausedUntil(ctx: PageContext, reason: ExplainReason): Html {
  return reason.untilMs === undefined ? html`until resumed` : html`until ${when(ctx, reason.untilMs)}`;
}

function itemLinks(ctx: PageContext, ids: readonly string[]): Html {
  if (ids.length === 0) return html`<span class="muted">none listed</span>`;
  return html`${ids.map((id, i) => html`${i === 0 ? "" : ", "}<a href="/item${query({ ns: ctx.ns, id })}">${id}</a>`)}`;
}

function kindsList(kinds: readonly string[][]): Html {
  return html`<ol class="kinds">${kinds.map((failed) => html`<li>fails ${failed.length === 0 ? html`<span class="muted">no constraint named</span>` : failed.map((f, i) => html`${i === 0 ? "" : "; "}<code>${f}</code>`)}</li>`)}</ol>`;
}

function leasedOf(reason: ExplainReason): string {
  return `${count(reason.leased)} leased, at most ${count(reason.max)}`;
}

/** The details of one reason in words; `group` is the item's group, named by the group reasons. */
function details(ctx: PageContext, reason: ExplainReason, group: string | null): Html {
  const groupName = group === null ? html`<span class="muted">nil</span>` : html`<b>${group}</b>`;
  switch (reason.reason) {
    case "delayed":
      return html`not deliverable before ${when(ctx, reason.untilMs)}`;
    case "waiting":
      return html`these dependencies are not acked yet: ${itemLinks(ctx, reason.after)}`;
    case "leased":
      return html`delivered; the lease ends ${when(ctx, reason.untilMs)}`;
    case "dead":
      return html`a dead letter: ${reason.deadReason ?? html`<span class="muted">no reason recorded</span>`}`;
    case "topic_paused":
      return html`the topic is paused ${pausedUntil(ctx, reason)}`;
    case "group_paused":
      return html`its group ${groupName} is paused ${pausedUntil(ctx, reason)}`;
    case "topic_max_leased":
      return html`the topic is at its concurrency bound: ${leasedOf(reason)}`;
    case "group_max_leased":
      return html`its group ${groupName} is at its concurrency bound: ${leasedOf(reason)}`;
    case "topic_rate":
      return html`the topic's rate is used up; the next token comes at ${when(ctx, reason.nextAtMs)}`;
    case "group_rate":
      return html`its group ${groupName}'s rate is used up; the next token comes at ${when(ctx, reason.nextAtMs)}`;
    case "held_for_preferred":
      return html`held for a worker that fits its <code>prefers</code> until ${when(ctx, reason.untilMs)}`;
    case "no_worker":
      return html`no worker kind that asked for this topic recently may take it: ${kindsList(reason.kinds)}`;
    case "no_dequeue":
      return html`no worker asked for this topic recently`;
    case "behind": {
      const ahead = reason.ahead ?? 0;
      return html`<b>${ahead >= aheadCountedMax ? `${count(aheadCountedMax)} or more` : count(ahead)}</b> ${ahead === 1 ? "item goes" : "items go"} first for every worker kind that may take it`;
    }
    default: {
      const { reason: _name, ...rest } = reason.raw;
      return html`<code>${json(rest)}</code>`;
    }
  }
}

/** The list for the item page; `group` is the item's (null: none). */
export function explainList(ctx: PageContext, entry: ExplainEntry, group: string | null): Html {
  if (entry.reasons.length === 0) {
    const none = entry.state === "ready" ? "nothing holds it back: it is first in line for a worker kind that asked" : "no reason given";
    return html`<span class="muted" data-reasons="0">${none}</span>`;
  }
  return html`<ul class="reasons" data-reasons="${entry.reasons.length}">${entry.reasons.map(
    (reason) => html`<li data-reason="${reason.reason}"><code>${reason.reason}</code>: ${details(ctx, reason, group)}</li>`,
  )}</ul>`;
}
