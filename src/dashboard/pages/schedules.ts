// A namespace's schedules (the `schedules` op): name, cron expression or
// period, time zone, catch-up, topic, next and last tick, and the last
// tick's item (linked to its item page); a remove form per schedule and a
// form that sets one (POST /schedule/set and /schedule/remove, actions.ts,
// with the session's CSRF token). A read-only session gets no forms. In
// cluster mode the node answering lists every node's (read from the database).

import { count, instant } from "../format.ts";
import { html, query, type Html } from "../html.ts";
import { readPages } from "../op-pages.ts";
import type { PageContext, PageResult } from "../page-context.ts";
import { csrfField } from "./layout.ts";

/** Schedules one page view reads at most (1,000: one op page); the rest are counted as not shown. */
const schedulesReadMax = 1000;

function whenText(schedule: Record<string, unknown>): Html {
  return typeof schedule.cron === "string" ? html`cron <code>${schedule.cron}</code>` : html`every ${count(schedule.every_ms)} ms`;
}

function scheduleRow(ctx: PageContext, schedule: Record<string, unknown>): Html {
  const name = String(schedule.name);
  const item = (schedule.item ?? {}) as Record<string, unknown>;
  const lastId = typeof schedule.last_id === "string" ? html`<a href="/item${query({ ns: ctx.ns, id: schedule.last_id })}" data-last-id="${schedule.last_id}">${schedule.last_id}</a>` : html`<span class="muted">–</span>`;
  const remove = ctx.session.opSession.readOnly
    ? html``
    : html`<form method="post" action="/schedule/remove" class="inline">${csrfField(ctx)}<input type="hidden" name="ns" value="${ctx.ns}"><input type="hidden" name="name" value="${name}"><button type="submit" data-action="unschedule">Remove</button></form>`;
  return html`<tr data-schedule="${name}"><td>${name}</td><td>${whenText(schedule)}</td><td>${String(schedule.timezone)}</td><td>${String(schedule.catch_up)}</td>
<td><a href="/topic${query({ ns: ctx.ns, topic: String(item.topic) })}">${String(item.topic)}</a></td>
<td data-next="${String(schedule.next_at_ms ?? "")}">${schedule.next_at_ms === undefined ? html`<span class="muted">none</span>` : instant(schedule.next_at_ms)}</td>
<td data-last="${String(schedule.last_at_ms ?? "")}">${schedule.last_at_ms === undefined ? html`<span class="muted">not yet</span>` : instant(schedule.last_at_ms)}</td><td>${lastId}</td><td>${remove}</td></tr>`;
}

function setForm(ctx: PageContext): Html {
  if (ctx.session.opSession.readOnly) return html`<p class="muted">This token is read-only.</p>`;
  return html`<form method="post" action="/schedule/set" id="schedule-form">${csrfField(ctx)}<input type="hidden" name="ns" value="${ctx.ns}">
<label>name <input name="name" required></label>
<label>cron <input name="cron" placeholder="30 2 * * *"></label> or <label>every ms <input name="every_ms" inputmode="numeric" placeholder="60000"></label>
<label>time zone <input name="timezone" placeholder="UTC"></label>
<label>catch up <select name="catch_up"><option value="one">one</option><option value="none">none</option></select></label>
<label>topic <input name="topic" required></label>
<label>priority <input name="priority" inputmode="numeric" placeholder="0"></label>
<label>payload <input name="payload" placeholder="UTF-8 text"></label>
<button type="submit" data-action="schedule">Set schedule</button>
<p class="muted">A schedule of an existing name replaces it.</p></form>`;
}

export async function schedulesPage(ctx: PageContext): Promise<PageResult> {
  const read = await readPages(ctx.ops, ctx.session.opSession, "schedules", { ns: ctx.ns }, "schedules", schedulesReadMax);
  const rows = read.entries.map((schedule) => scheduleRow(ctx, schedule));
  const table = html`<table id="schedules"><thead><tr><th>name</th><th>when</th><th>time zone</th><th>catch up</th><th>topic</th><th>next</th><th>last</th><th>last item</th><th></th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="9" class="muted">no schedules</td></tr>` : rows}</tbody></table>
${read.complete ? "" : html`<p class="muted">the first ${count(schedulesReadMax)} schedules by name</p>`}`;
  return { title: "Schedules", top: html`${table}<h2>Set a schedule</h2>${setForm(ctx)}` };
}
