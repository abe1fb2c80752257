// The groups part of a topic's page: the topic's own policy and the "*"
// default, then one row per group (the `groups` op) with its counts, its
// backlog, the bounds it runs under (the `policies` op: its own policy, else
// the default), its pause state, and a pause / resume form. Sorted by name or
// by backlog, 50 rows a page; the sort and page travel in the query string
// (groups_sort, groups_dir, groups_page) beside the items' own parameters.

import { count, instant } from "../format.ts";
import { backlog, groupsReadMax, isGroupSortKey, readGroups, sortGroups, type GroupRow, type GroupSortKey } from "../group-list.ts";
import { policyText, rateText, TopicPolicies, type GroupBounds } from "../group-policies.ts";
import { html, type Html } from "../html.ts";
import { OpError } from "../op-caller.ts";
import type { PageContext } from "../page-context.ts";
import { pauseForm } from "./pause-form.ts";

/** Rows per page (50): a screen or two, while the sort covers every group read. */
const groupsPerPage = 50;

const boundSourceText: Readonly<Record<GroupBounds["source"], string>> = {
  own: "own policy",
  default: "default (*)",
  none: "none",
  unread: "not read (past the policies read)",
};

/** This topic page's URL with some parameters changed (null removes one), without `part=live`. */
function topicLink(ctx: PageContext, changes: Record<string, string | null>): string {
  const params = new URLSearchParams(ctx.url.search);
  params.delete("part");
  params.set("ns", ctx.ns);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) params.delete(name);
    else params.set(name, value);
  }
  return `/topic?${params.toString()}`;
}

interface GroupView {
  sort: GroupSortKey;
  descending: boolean;
  page: number;
}

function viewOf(params: URLSearchParams): GroupView {
  const asked = params.get("groups_sort");
  const sort = isGroupSortKey(asked) ? asked : "group";
  const pageParam = params.get("groups_page") ?? "";
  return { sort, descending: params.get("groups_dir") === "desc", page: /^\d{1,6}$/.test(pageParam) ? Number(pageParam) : 0 };
}

/** A sortable column's header; the first click on backlog sorts the largest first, on the name A to Z. */
function sortHeader(ctx: PageContext, view: GroupView, key: GroupSortKey, label: string): Html {
  const current = view.sort === key;
  const firstDescending = key === "backlog";
  const dir = current ? (view.descending ? "asc" : "desc") : firstDescending ? "desc" : "asc";
  const mark = current ? (view.descending ? " ▼" : " ▲") : "";
  return html`<th class="${key === "group" ? "" : "num"}"><a href="${topicLink(ctx, { groups_sort: key, groups_dir: dir, groups_page: null })}" data-sort="${key}">${label}${mark}</a></th>`;
}

function groupRow(ctx: PageContext, topic: string, row: GroupRow, bounds: GroupBounds): Html {
  const { policy } = bounds;
  const until = row.pausedUntilMs === undefined ? "" : ` until ${instant(row.pausedUntilMs)}`;
  const state = row.paused ? html`<span class="badge warn">paused${until}</span>` : "delivering";
  // Items without a group have no name to pause by: pausing them alone is not in the contract.
  const action = row.group === null ? html`<span class="muted" title="items without a group can only be paused with the topic">–</span>` : pauseForm(ctx, { topic, group: row.group }, row.paused);
  return html`<tr data-group="${row.group ?? ""}">
<td>${row.group ?? html`<span class="muted" title="items enqueued without a group">nil</span>`}</td>
<td class="num" data-count="ready">${count(row.ready)}</td><td class="num" data-count="delayed">${count(row.delayed)}</td><td class="num" data-count="waiting">${count(row.waiting)}</td>
<td class="num" data-count="backlog">${count(backlog(row))}</td><td class="num" data-count="leased">${count(row.leased)}</td>
<td class="num" data-bound="weight">${policy.weight === undefined ? html`<span class="muted">1</span>` : count(policy.weight)}</td>
<td class="num" data-bound="max_leased">${policy.maxLeased === undefined ? "–" : count(policy.maxLeased)}</td>
<td data-bound="rate">${policy.rate === undefined ? "–" : rateText(policy.rate)}</td>
<td data-bound="source">${boundSourceText[bounds.source]}</td>
<td data-paused="${row.paused ? "yes" : "no"}">${state}</td>
<td>${action}</td>
</tr>`;
}

function pager(ctx: PageContext, view: GroupView, total: number, complete: boolean): Html {
  const first = view.page * groupsPerPage;
  const shown = total === 0 ? "" : `groups ${count(first + 1)}–${count(Math.min(total, first + groupsPerPage))} of ${count(total)}`;
  const previous = view.page === 0 ? "" : html` · <a href="${topicLink(ctx, { groups_page: String(view.page - 1) })}" data-groups-page="previous">previous groups</a>`;
  const next = first + groupsPerPage >= total ? "" : html` · <a href="${topicLink(ctx, { groups_page: String(view.page + 1) })}" data-groups-page="next">next groups</a>`;
  const cut = complete ? "" : html` · <span class="muted">sorted among the first ${count(groupsReadMax)} groups by name</span>`;
  return html`<p class="pager">${shown}${previous}${next}${cut}</p>`;
}

async function groupsTable(ctx: PageContext, topic: string): Promise<Html> {
  const session = ctx.session.opSession;
  const [policies, groups] = await Promise.all([TopicPolicies.read(ctx.ops, session, ctx.ns, topic), readGroups(ctx.ops, session, ctx.ns, topic)]);
  const asked = viewOf(ctx.url.searchParams);
  const sorted = sortGroups(groups.rows, asked.sort, asked.descending);
  // A page past the end (the groups shrank since the link was made) shows the last one.
  const view = { ...asked, page: Math.min(asked.page, Math.max(0, Math.ceil(sorted.length / groupsPerPage) - 1)) };
  const shown = sorted.slice(view.page * groupsPerPage, (view.page + 1) * groupsPerPage);
  const head = html`<thead><tr>${sortHeader(ctx, view, "group", "group")}<th class="num">ready</th><th class="num">delayed</th><th class="num">waiting</th>${sortHeader(ctx, view, "backlog", "backlog")}<th class="num">leased</th><th class="num">weight</th><th class="num">max leased</th><th>rate</th><th>bounds from</th><th>state</th><th></th></tr></thead>`;
  const body = shown.length === 0 ? html`<tr><td colspan="12" class="muted">no groups</td></tr>` : shown.map((row) => groupRow(ctx, topic, row, policies.boundsOf(row.group)));
  return html`<p>Topic policy: <span id="topic-policy">${policyText(policies.topic)}</span> · default for each group (<code>*</code>): <span id="default-policy">${policyText(policies.groupDefault)}</span></p>
<table id="groups" class="sortable" data-sort="${view.sort}" data-dir="${view.descending ? "desc" : "asc"}">${head}<tbody>${body}</tbody></table>
${pager(ctx, view, sorted.length, groups.complete)}`;
}

/** The section; a failed `groups` or `policies` call is shown in its place, and the rest of the topic page stands. */
export async function groupsSection(ctx: PageContext, topic: string): Promise<Html> {
  let content: Html;
  try {
    content = await groupsTable(ctx, topic);
  } catch (error) {
    if (!(error instanceof OpError)) throw error;
    content = html`<p class="error" data-error="${error.error.code}">${error.op}: ${error.error.code}: ${error.error.message}</p>`;
  }
  return html`<section id="groups-section"><h2>Groups</h2>${content}</section>`;
}
