// The page frame: head (assets from /assets/, no inline script or style),
// navigation with the namespace switcher, the signed-in role, sign-out, and
// the live part marked for app.js to re-fetch (data-poll).

import { html, query, type Html } from "../html.ts";
import type { PageContext, PageResult } from "../page-context.ts";

/** How often app.js re-fetches live parts and charts (3 s): "every few seconds", at a cost of one op per page part. */
const refreshMs = 3000;

const navigation: ReadonlyArray<{ path: string; label: string }> = [
  { path: "/", label: "Overview" },
  { path: "/topics", label: "Topics" },
  { path: "/dead", label: "Dead letters" },
  { path: "/matching", label: "Matching" },
  { path: "/schedules", label: "Schedules" },
  { path: "/item", label: "Find item" },
];

export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.session.csrfToken}">`;
}

/** The live part's URL: the page's own, with its namespace spelled out (no lookup of the default) and part=live. */
function liveUrl(url: URL, ns: string): string {
  const params = new URLSearchParams(url.search);
  params.set("ns", ns);
  params.set("part", "live");
  return `${url.pathname}?${params.toString()}`;
}

export function layout(ctx: PageContext, page: PageResult): Html {
  const path = ctx.url.pathname;
  const nav = navigation.map(
    (entry) => html`<a href="${entry.path}${query({ ns: ctx.ns })}" class="${entry.path === path ? "current" : ""}">${entry.label}</a>`,
  );
  const switcher =
    ctx.namespaces.length > 1
      ? html`<span class="namespaces">namespace: ${ctx.namespaces.map(
          (ns) => html`<a href="${path}${query({ ns })}" class="${ns === ctx.ns ? "current" : ""}">${ns}</a> `,
        )}</span>`
      : html`<span class="namespaces">namespace: <b>${ctx.ns}</b></span>`;
  const who = ctx.session.id === null ? html`<span class="badge">no auth (loopback only)</span>` : html`
    <span class="badge">${ctx.session.opSession.readOnly ? "read-only" : "read-write"}</span>
    <form method="post" action="/signout" class="inline">${csrfField(ctx)}<button type="submit">Sign out</button></form>`;
  const live = page.live === undefined ? "" : html`<div id="live" data-poll="${liveUrl(ctx.url, ctx.ns)}">${page.live}</div>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · orq</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/assets/favicon.svg">
<script src="/assets/uPlot.iife.min.js" defer></script>
<script src="/assets/app.js" defer></script>
</head>
<body data-refresh-ms="${refreshMs}" data-refreshes="0">
<header>
<a href="/${query({ ns: ctx.ns })}" class="brand">orq</a>
<nav>${nav}</nav>
<span class="right">${switcher} ${who}</span>
</header>
<main>
<h1>${page.title}</h1>
${ctx.notice === null ? "" : html`<p class="notice" role="status">${ctx.notice}</p>`}
${page.top ?? ""}
${live}
${page.bottom ?? ""}
</main>
</body>
</html>
`;
}

/** A page of its own for errors and for the sign-in form (no navigation: there may be no session). */
export function bare(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · orq</title>
<link rel="stylesheet" href="/assets/app.css">
<link rel="icon" href="/assets/favicon.svg">
</head>
<body>
<header><a href="/" class="brand">orq</a></header>
<main class="narrow">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}
