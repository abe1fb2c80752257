// One topic: its counts (the `topics` op), its items by state through the
// `list` op, one page at a time (`next` → after), pause / resume, and its
// groups with their bounds (groups.ts).

import { defaultLimits } from "../../limits.ts";
import { liveStateNames as states } from "../../protocol/live-states.ts";
import { bytesPreview, count, instant, json } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { groupsSection } from "./groups.ts";
import { pauseForm } from "./pause-form.ts";

/** Items per page: the `list` op's default. */
const itemsPerPage = defaultLimits.listPageDefault;

function itemRows(ctx: PageContext, items: ReadonlyArray<Record<string, unknown>>): Html {
  if (items.length === 0) return html`<tr><td colspan="8" class="muted">no items</td></tr>`;
  return html`${items.map(
    (item) => html`<tr data-item="${String(item.id)}">
<td><a href="/item${query({ ns: ctx.ns, id: String(item.id) })}">${String(item.id)}</a></td>
<td>${String(item.state)}</td><td class="num">${String(item.priority)}</td><td class="num">${String(item.attempt)}</td>
<td>${instant(item.enqueued_at_ms)}</td>
<td>${item.requires === undefined ? "" : json(item.requires)}</td>
<td>${typeof item.key === "string" ? item.key : ""}</td>
<td class="payload">${bytesPreview(item.payload as Uint8Array | undefined)}</td>
</tr>`,
  )}`;
}

const itemTableHead = html`<thead><tr><th>id</th><th>state</th><th class="num">priority</th><th class="num">attempt</th><th>enqueued</th><th>requires</th><th>key</th><th>payload</th></tr></thead>`;

export async function topicPage(ctx: PageContext): Promise<PageResult> {
  const params = ctx.url.searchParams;
  const topic = params.get("topic") ?? "";
  if (topic === "") return { title: "Topic", top: html`<p>Pick a topic on the <a href="/topics${query({ ns: ctx.ns })}">topics page</a>.</p>` };
  const stateParam = params.get("state");
  const state = (states as readonly string[]).includes(stateParam ?? "") ? (stateParam as string) : null;
  const after = params.get("after");
  const [topicsReply, listReply, groups] = await Promise.all([
    ctx.ops.callOrThrow(ctx.session.opSession, "topics", { ns: ctx.ns, prefix: topic, limit: 1 }),
    ctx.ops.callOrThrow(ctx.session.opSession, "list", { ns: ctx.ns, topic, state: state ?? undefined, limit: itemsPerPage, after: after ?? undefined }),
    groupsSection(ctx, topic),
  ]);
  const entry = ((topicsReply.topics ?? []) as Array<Record<string, unknown>>).find((t) => t.topic === topic) ?? null;
  const items = (listReply.items ?? []) as Array<Record<string, unknown>>;
  const tabs = [html`<a href="/topic${query({ ns: ctx.ns, topic })}" class="${state === null ? "current" : ""}">all</a>`].concat(
    states.map((s) => html`<a href="/topic${query({ ns: ctx.ns, topic, state: s })}" class="${state === s ? "current" : ""}">${s} (${count(entry?.[s] ?? 0)})</a>`),
  );
  const paused = entry?.paused === true;
  const top = html`<p>Namespace <b>${ctx.ns}</b> · topic <b id="topic-name">${topic}</b> · <a href="/matching${query({ ns: ctx.ns, topic })}">matching</a> · <a href="/dead${query({ ns: ctx.ns, topic })}">dead letters</a></p>`;
  const next = typeof listReply.next === "string" ? listReply.next : null;
  const live = html`<p>${entry === null ? html`<span class="muted">This topic holds no items.</span>` : html`<span data-paused="${paused ? "yes" : "no"}">${paused ? html`<span class="badge warn">paused</span>` : "delivering"}</span> ${pauseForm(ctx, { topic }, paused)}`}</p>
<nav class="tabs">${tabs}</nav>
<table id="items">${itemTableHead}<tbody>${itemRows(ctx, items)}</tbody></table>
<p>${after === null ? "" : html`<a href="/topic${query({ ns: ctx.ns, topic, state })}">first page</a> · `}${next === null ? html`<span class="muted">last page</span>` : html`<a href="/topic${query({ ns: ctx.ns, topic, state, after: next })}" rel="next">next page</a>`}</p>
${groups}`;
  return { title: `Topic ${topic}`, top, live };
}
