// Dead letters: the topics of a namespace that hold any (the `topics` op),
// and one topic's dead letters (the `dead` op) grouped by dead_reason, with
// redrive or cancel of the selected ones or of all of them. Every change
// goes through a confirmation page (POST /dead/confirm) before it is applied
// (POST /dead/apply, handled in actions.ts).

import { bytesPreview, count, instant } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { csrfField } from "./layout.ts";

export async function deadPage(ctx: PageContext): Promise<PageResult> {
  const topic = ctx.url.searchParams.get("topic") ?? "";
  const topicsReply = await ctx.ops.callOrThrow(ctx.session.opSession, "topics", { ns: ctx.ns });
  const withDead = ((topicsReply.topics ?? []) as Array<Record<string, unknown>>).filter((t) => Number(t.dead) > 0);
  const list = html`<p>Topics with dead letters: ${withDead.length === 0 ? html`<span class="muted">none</span>` : withDead.map(
    (t) => html`<a href="/dead${query({ ns: ctx.ns, topic: String(t.topic) })}" class="${t.topic === topic ? "current" : ""}">${String(t.topic)} (${count(t.dead)})</a> `,
  )}</p>`;
  if (topic === "") return { title: "Dead letters", top: list };
  const reply = await ctx.ops.callOrThrow(ctx.session.opSession, "dead", { ns: ctx.ns, topic });
  const items = (reply.items ?? []) as Array<Record<string, unknown>>;
  const groups = new Map<string, Array<Record<string, unknown>>>();
  for (const item of items) {
    const reason = typeof item.dead_reason === "string" ? item.dead_reason : "(no reason recorded)";
    const group = groups.get(reason) ?? [];
    group.push(item);
    groups.set(reason, group);
  }
  const readOnly = ctx.session.opSession.readOnly;
  const sections = [...groups].sort((a, b) => b[1].length - a[1].length).map(
    ([reason, group]) => html`<section class="dead-group"><h2>${reason} <span class="muted">(${group.length})</span></h2>
<table><thead><tr><th></th><th>id</th><th class="num">attempts</th><th>enqueued</th><th>payload</th></tr></thead><tbody>
${group.map((item) => html`<tr data-item="${String(item.id)}"><td>${readOnly ? "" : html`<input type="checkbox" name="id" value="${String(item.id)}" aria-label="select ${String(item.id)}">`}</td>
<td><a href="/item${query({ ns: ctx.ns, id: String(item.id) })}">${String(item.id)}</a></td><td class="num">${String(item.attempt)}</td><td>${instant(item.enqueued_at_ms)}</td><td class="payload">${bytesPreview(item.payload as Uint8Array)}</td></tr>`)}
</tbody></table></section>`,
  );
  const actions: Html = readOnly
    ? html`<p class="muted">This token is read-only.</p>`
    : html`<p class="actions">
<button type="submit" name="action" value="redrive">Redrive selected…</button>
<button type="submit" name="action" value="cancel">Cancel selected…</button>
<button type="submit" name="action" value="redrive-all">Redrive all…</button>
<button type="submit" name="action" value="cancel-all">Cancel all…</button></p>`;
  const body = html`${list}<form method="post" action="/dead/confirm" id="dead-form">${csrfField(ctx)}
<input type="hidden" name="ns" value="${ctx.ns}"><input type="hidden" name="topic" value="${topic}">
${actions}
${items.length === 0 ? html`<p class="muted">No dead letters in <b>${topic}</b>.</p>` : sections}
</form>`;
  return { title: `Dead letters · ${topic}`, top: body };
}

export type DeadAction = "redrive" | "cancel" | "redrive-all" | "cancel-all";

export function isDeadAction(value: string | null): value is DeadAction {
  return value === "redrive" || value === "cancel" || value === "redrive-all" || value === "cancel-all";
}

/** The confirmation step: what will happen, and one button that does it. */
export async function deadConfirmPage(ctx: PageContext, form: { topic: string; action: DeadAction; ids: string[] }): Promise<PageResult> {
  const all = form.action.endsWith("-all");
  const verb = form.action.startsWith("redrive") ? "Redrive" : "Cancel";
  let what: Html;
  if (all) {
    const reply = await ctx.ops.callOrThrow(ctx.session.opSession, "topics", { ns: ctx.ns, prefix: form.topic, limit: 1 });
    const entry = ((reply.topics ?? []) as Array<Record<string, unknown>>).find((t) => t.topic === form.topic);
    what = html`all <b>${count(entry?.dead ?? 0)}</b> dead letters of topic <b>${form.topic}</b>`;
  } else {
    what = html`<b>${form.ids.length}</b> selected dead letters of topic <b>${form.topic}</b>: ${form.ids.join(", ")}`;
  }
  const consequence = verb === "Redrive" ? "They become ready again with their attempts reset." : "They end (outcome cancelled) and cannot be brought back.";
  const top = html`<form method="post" action="/dead/apply" id="confirm-form">${csrfField(ctx)}
<input type="hidden" name="ns" value="${ctx.ns}"><input type="hidden" name="topic" value="${form.topic}"><input type="hidden" name="action" value="${form.action}">
${form.ids.map((id) => html`<input type="hidden" name="id" value="${id}">`)}
<p>${verb} ${what}?</p><p>${consequence}</p>
<p><button type="submit" class="danger" id="confirm">${verb}</button> <a href="/dead${query({ ns: ctx.ns, topic: form.topic })}">Back, change nothing</a></p></form>`;
  return { title: `Confirm: ${verb.toLowerCase()}`, top };
}
