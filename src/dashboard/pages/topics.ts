// Topics: one namespace's topics (the `topics` op, paged by `next`), with
// depth by state, the age of the oldest ready item, the depth trend of the
// last hour as a small line, and the paused flag. Sorted by any column,
// filtered by name prefix; pause and resume forms per topic. In cluster mode
// the counts are the whole cluster's; the oldest-ready age and the trend are
// this node's shards (engine inspect and history), and labelled so.

import { defaultLimits } from "../../limits.ts";
import { liveStateNames } from "../../protocol/live-states.ts";
import { count, duration } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { thisNodeBadge } from "./node-scope.ts";
import { pauseForm } from "./pause-form.ts";
import { sparkline } from "./sparkline.ts";

type Row = Record<string, unknown> & { topic: string };

const sortable = ["topic", ...liveStateNames, "total", "oldest", "paused"] as const;
type SortKey = (typeof sortable)[number];

/** Topics fetched per page view (the `topics` op's page maximum): sorting and filtering work on these. */
const topicsShownMax = defaultLimits.topicsPageMax;

function total(row: Row): number {
  return liveStateNames.reduce((sum, s) => sum + (Number(row[s]) || 0), 0);
}

function sortValue(row: Row, key: SortKey, oldest: number | null): number | string {
  if (key === "topic") return row.topic;
  if (key === "total") return total(row);
  if (key === "oldest") return oldest ?? Number.POSITIVE_INFINITY;
  if (key === "paused") return row.paused === true ? 1 : 0;
  return Number(row[key]) || 0;
}

export async function topicsPage(ctx: PageContext): Promise<PageResult> {
  const params = ctx.url.searchParams;
  const prefix = params.get("prefix") ?? "";
  const sortParam = params.get("sort") ?? "topic";
  const sort: SortKey = (sortable as readonly string[]).includes(sortParam) ? (sortParam as SortKey) : "topic";
  const descending = params.get("dir") === "desc";
  const reply = await ctx.ops.callOrThrow(ctx.session.opSession, "topics", { ns: ctx.ns, prefix: prefix === "" ? undefined : prefix, limit: topicsShownMax });
  const rows = (reply.topics ?? []) as Row[];
  const oldest = ctx.inspector.readySinceMs(ctx.session.opSession, ctx.ns, rows.map((r) => r.topic));
  const order = rows.map((row, i) => ({ row, oldest: oldest[i] ?? null }));
  order.sort((a, b) => {
    const x = sortValue(a.row, sort, a.oldest);
    const y = sortValue(b.row, sort, b.oldest);
    const cmp = x < y ? -1 : x > y ? 1 : 0;
    return descending ? -cmp : cmp;
  });
  const header = (key: SortKey, label: string): Html => {
    const dir = sort === key && !descending ? "desc" : "asc";
    const mark = sort === key ? (descending ? " ▼" : " ▲") : "";
    return html`<th class="${key === "topic" ? "" : "num"}"><a href="/topics${query({ ns: ctx.ns, prefix, sort: key, dir })}" data-sort="${key}">${label}${mark}</a>${key === "oldest" ? thisNodeBadge(ctx) : ""}</th>`;
  };
  const body = order.map(({ row, oldest: readySince }) => {
    const paused = row.paused === true;
    const trend = ctx.history.topicDepths(ctx.ns, row.topic, "hour");
    const until = typeof row.paused_until_ms === "number" ? ` until ${new Date(row.paused_until_ms).toISOString()}` : "";
    return html`<tr data-topic="${row.topic}">
<td><a href="/topic${query({ ns: ctx.ns, topic: row.topic })}">${row.topic}</a></td>
${liveStateNames.map((s) => html`<td class="num" data-count="${s}">${count(row[s])}</td>`)}
<td class="num">${count(total(row))}</td>
<td class="num">${readySince === null ? "–" : duration(ctx.nowMs - readySince)}</td>
<td>${trend === null ? html`<span class="muted">–</span>` : sparkline(trend.totals)}</td>
<td data-paused="${paused ? "yes" : "no"}">${paused ? html`<span class="badge warn">paused${until}</span>` : "no"}</td>
<td>${pauseForm(ctx, { topic: row.topic }, paused)}</td>
</tr>`;
  });
  const top = html`<form method="get" action="/topics" class="filter"><input type="hidden" name="ns" value="${ctx.ns}">
<label>Name prefix <input type="text" name="prefix" value="${prefix}"></label><input type="hidden" name="sort" value="${sort}"><input type="hidden" name="dir" value="${descending ? "desc" : "asc"}"> <button type="submit">Filter</button></form>`;
  const live = html`<table id="topics" class="sortable"><thead><tr>${header("topic", "topic")}${liveStateNames.map((s) => header(s, s))}${header("total", "total")}${header("oldest", "oldest ready")}<th>depth, last hour${thisNodeBadge(ctx)}</th>${header("paused", "paused")}<th></th></tr></thead>
<tbody>${body.length === 0 ? html`<tr><td colspan="11" class="muted">no topics${prefix === "" ? "" : " with this prefix"}</td></tr>` : body}</tbody></table>
${typeof reply.next === "string" ? html`<p class="muted">Showing the first ${topicsShownMax} topics; narrow the prefix to see others.</p>` : ""}`;
  return { title: "Topics", top, live };
}
