// The dashboard's changes, each a POST that the server already checked for
// origin and CSRF token (dashboard-server.ts): pause and resume a topic or
// one of its groups, the dead-letter confirmation step, and redrive or
// cancel. Each calls the ops with the session, so a read-only token is
// refused by the dispatcher (FORBIDDEN), not here. Each answers with a
// redirect back to a page.

import { dashboardLimits, defaultLimits } from "../limits.ts";
import { query } from "./html.ts";
import type { PageContext, PageResult } from "./page-context.ts";
import { deadConfirmPage, isDeadAction } from "./pages/dead.ts";
import { localPath, redirect } from "./responses.ts";

export type ActionResult = { kind: "redirect"; response: Response } | { kind: "page"; page: PageResult };

function required(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (value === null || value === "") throw new FormError(`${name}: required`);
  return value;
}

export class FormError extends Error {
  override name = "FormError";
}

function selectedIds(form: URLSearchParams): string[] {
  const ids = form.getAll("id").filter((id) => id !== "");
  if (ids.length > defaultLimits.idsPerRequestMax) throw new FormError(`select at most ${defaultLimits.idsPerRequestMax} items at once`);
  return ids;
}

/** The pause and resume actions; the group ones name a group of the topic (the `group` field of `pause` and `resume`). */
const pausePaths: ReadonlySet<string> = new Set(["/topic/pause", "/topic/resume", "/group/pause", "/group/resume"]);

/** Pauses or resumes a topic or one of its groups; returns where to go back to, with the notice. */
async function pauseOrResume(ctx: PageContext, path: string, form: URLSearchParams): Promise<string> {
  const topic = required(form, "topic");
  // The nil group has no name on the wire, so it cannot be paused alone: a group action needs one.
  const group = path.startsWith("/group/") ? required(form, "group") : undefined;
  const op = path.endsWith("/pause") ? "pause" : "resume";
  const forMs = op === "pause" && /^\d{1,12}$/.test(form.get("for_ms") ?? "") ? Number(form.get("for_ms")) : undefined;
  await ctx.ops.callOrThrow(ctx.session.opSession, op, { ns: ctx.ns, topic, group, for_ms: forMs });
  const back = localPath(form.get("back"), `/topics${query({ ns: ctx.ns })}`);
  return withNotice(back, group === undefined ? op : `group-${op}`, 1);
}

/** Decimal digits only (a form's number field), or undefined when empty. */
function formInt(form: URLSearchParams, name: string): number | undefined {
  const value = form.get(name) ?? "";
  if (value === "") return undefined;
  if (!/^-?\d{1,15}$/.test(value)) throw new FormError(`${name}: must be a whole number`);
  return Number(value);
}

/** Sets a schedule from the schedules page's form (the `schedule` op checks every field) or removes one. */
async function setOrRemoveSchedule(ctx: PageContext, path: string, form: URLSearchParams): Promise<string> {
  const name = required(form, "name");
  if (path === "/schedule/remove") {
    await ctx.ops.callOrThrow(ctx.session.opSession, "unschedule", { ns: ctx.ns, name });
    return withNotice(`/schedules${query({ ns: ctx.ns })}`, "schedule-removed", 1);
  }
  const cron = form.get("cron") ?? "";
  const payload = form.get("payload") ?? "";
  const item = { topic: required(form, "topic"), priority: formInt(form, "priority"), payload: payload === "" ? undefined : new TextEncoder().encode(payload) };
  await ctx.ops.callOrThrow(ctx.session.opSession, "schedule", {
    ns: ctx.ns,
    name,
    cron: cron === "" ? undefined : cron,
    every_ms: formInt(form, "every_ms"),
    timezone: (form.get("timezone") ?? "") === "" ? undefined : form.get("timezone"),
    catch_up: form.get("catch_up") ?? undefined,
    item,
  });
  return withNotice(`/schedules${query({ ns: ctx.ns })}`, "schedule-set", 1);
}

export async function runAction(ctx: PageContext, path: string, form: URLSearchParams): Promise<ActionResult> {
  if (pausePaths.has(path)) return { kind: "redirect", response: redirect(await pauseOrResume(ctx, path, form)) };
  if (path === "/schedule/set" || path === "/schedule/remove") return { kind: "redirect", response: redirect(await setOrRemoveSchedule(ctx, path, form)) };
  if (path === "/dead/confirm" || path === "/dead/apply") {
    const topic = required(form, "topic");
    const action = form.get("action");
    if (!isDeadAction(action)) throw new FormError("action: must be redrive, cancel, redrive-all or cancel-all");
    const ids = action.endsWith("-all") ? [] : selectedIds(form);
    if (!action.endsWith("-all") && ids.length === 0) throw new FormError("select at least one dead letter, or use the \"all\" buttons");
    if (path === "/dead/confirm") return { kind: "page", page: await deadConfirmPage(ctx, { topic, action, ids }) };
    const done = await applyDead(ctx, topic, action, ids);
    return { kind: "redirect", response: redirect(withNotice(`/dead${query({ ns: ctx.ns, topic })}`, action.startsWith("redrive") ? "redrive" : "cancel", done)) };
  }
  throw new FormError("unknown action");
}

async function applyDead(ctx: PageContext, topic: string, action: string, ids: string[]): Promise<number> {
  const opSession = ctx.session.opSession;
  if (action === "redrive") return Number((await ctx.ops.callOrThrow(opSession, "redrive", { ns: ctx.ns, topic, ids })).redriven);
  // `redrive` without ids takes up to redriveAllMax per call (the server's default); a few calls finish a large topic.
  if (action === "redrive-all") {
    let total = 0;
    for (let round = 0; round < dashboardLimits.redriveAllRoundsMax; round++) {
      const redriven = Number((await ctx.ops.callOrThrow(opSession, "redrive", { ns: ctx.ns, topic })).redriven);
      total += redriven;
      if (redriven < defaultLimits.redriveAllMax) break;
    }
    return total;
  }
  let targets = ids;
  if (action === "cancel-all") {
    const dead = await ctx.ops.callOrThrow(opSession, "dead", { ns: ctx.ns, topic, limit: defaultLimits.deadPageMax });
    targets = ((dead.items ?? []) as Array<{ id: string }>).map((item) => item.id);
  }
  if (targets.length === 0) return 0;
  return Number((await ctx.ops.callOrThrow(opSession, "cancel", { ns: ctx.ns, ids: targets })).cancelled);
}

function withNotice(path: string, done: string, n: number): string {
  return `${path}${path.includes("?") ? "&" : "?"}done=${encodeURIComponent(done)}&n=${n}`;
}

/** The one-time notice for ?done=&n= (fixed sentences: the query string cannot inject text). */
export function noticeFor(params: URLSearchParams): string | null {
  const n = Number(params.get("n") ?? "0");
  const shown = Number.isSafeInteger(n) && n >= 0 ? n : 0;
  switch (params.get("done")) {
    case "pause":
      return "Topic paused.";
    case "resume":
      return "Topic resumed.";
    case "group-pause":
      return "Group paused.";
    case "group-resume":
      return "Group resumed.";
    case "schedule-set":
      return "Schedule set.";
    case "schedule-removed":
      return "Schedule removed.";
    case "redrive":
      return `Redriven: ${shown} dead letter${shown === 1 ? "" : "s"} made ready again.`;
    case "cancel":
      return `Cancelled: ${shown} dead letter${shown === 1 ? "" : "s"}.`;
    default:
      return null;
  }
}
