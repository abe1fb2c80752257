// The pause / resume form of a topic or of one of its groups: a POST to
// /topic/pause, /topic/resume, /group/pause or /group/resume (actions.ts)
// with the session's CSRF token and the page to come back to. A read-only
// session gets no form (the dispatcher would refuse it anyway).

import { html, type Html } from "../html.ts";
import type { PageContext } from "../page-context.ts";
import { csrfField } from "./layout.ts";

/** What the form pauses: a topic, or one named group of it. */
export interface PauseTarget {
  topic: string;
  group?: string;
}

/** The page's own path and query without `part=live`, so a form in a live part comes back to the full page. */
function backPath(ctx: PageContext): string {
  const params = new URLSearchParams(ctx.url.search);
  params.delete("part");
  const search = params.toString();
  return search === "" ? ctx.url.pathname : `${ctx.url.pathname}?${search}`;
}

export function pauseForm(ctx: PageContext, target: PauseTarget, paused: boolean): Html {
  if (ctx.session.opSession.readOnly) return html``;
  const scope = target.group === undefined ? "topic" : "group";
  const fields = html`${csrfField(ctx)}<input type="hidden" name="ns" value="${ctx.ns}"><input type="hidden" name="topic" value="${target.topic}">${
    target.group === undefined ? "" : html`<input type="hidden" name="group" value="${target.group}">`
  }<input type="hidden" name="back" value="${backPath(ctx)}">`;
  return paused
    ? html`<form method="post" action="/${scope}/resume" class="inline">${fields}<button type="submit" data-action="resume">Resume</button></form>`
    : html`<form method="post" action="/${scope}/pause" class="inline">${fields}<select name="for_ms" aria-label="pause for"><option value="">until resumed</option><option value="300000">for 5 min</option><option value="3600000">for 1 h</option></select> <button type="submit" data-action="pause">Pause</button></form>`;
}
