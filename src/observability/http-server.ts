// The HTTP side port (`--http-port`, default 7421): liveness, readiness and
// Prometheus metrics for orchestrators and scrapers. It is separate from the
// MessagePack port so probes never compete with client traffic for a
// connection slot, and it serves nothing that changes state.
//
//   GET /         an HTML index linking the paths below (and any extra pages)
//   GET /healthz  200 "ok" while the process runs (liveness)
//   GET /readyz   200 "ready" once isReady() (recovery done, accepting work);
//                 503 "not ready" before that and while draining
//   GET /metrics  Prometheus text format 0.0.4
//   GET /         a small index linking the above and the web dashboard (if on)
//   anything else 404; a method other than GET or HEAD on a known path 405

import type { Metrics } from "./metrics.ts";

export interface HttpServerOptions {
  host: string;
  /** 0 picks any free port; the chosen one is returned. */
  port: number;
  metrics: Metrics;
  isReady: () => boolean;
  /** The web dashboard's URL, linked from the index page; null when it is off. */
  /** Where a failed request (a throwing gauge source) is reported; default stderr. */
  logError?: (message: string) => void;
  /** More entries for the index at `/` (the dashboard), after the three built-in ones; read at each request. */
  indexLinks?: () => readonly IndexLink[];
}

export interface IndexLink {
  /** Where it links; null for a line of text (e.g. "web dashboard: off"). */
  path: string | null;
  description: string;
}

/** What the index at `/` lists first: the port's own paths. */
const builtInLinks: readonly IndexLink[] = [
  { path: "/healthz", description: "liveness: 200 while the process runs" },
  { path: "/readyz", description: "readiness: 200 once recovered and accepting work, 503 during recovery and shutdown" },
  { path: "/metrics", description: "Prometheus metrics (text format 0.0.4)" },
];

function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

function indexPage(links: readonly IndexLink[]): Response {
  const items = links.map((link) =>
    link.path === null ? `<li>${escapeHtml(link.description)}</li>` : `<li><a href="${escapeHtml(link.path)}">${escapeHtml(link.path)}</a>: ${escapeHtml(link.description)}</li>`,
  );
  const body = `<!doctype html>\n<html><head><meta charset="utf-8"><title>orq</title></head>\n<body><h1>orq</h1>\n<ul>\n${items.join("\n")}\n</ul></body></html>\n`;
  return new Response(body, { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "content-security-policy": "default-src 'none'" } });
}

export interface HttpServerHandle {
  port: number;
  stop(): Promise<void>;
}

const plainText = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

function text(body: string, status: number, extraHeaders: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...plainText, ...extraHeaders } });
}

async function route(request: Request, options: HttpServerOptions): Promise<Response> {
  const path = new URL(request.url).pathname;
  const known = path === "/" || path === "/healthz" || path === "/readyz" || path === "/metrics";
  if (!known) return text("not found\n", 404);
  if (request.method !== "GET" && request.method !== "HEAD") return text("method not allowed\n", 405, { allow: "GET, HEAD" });
  if (path === "/") return indexPage([...builtInLinks, ...(options.indexLinks?.() ?? [])]);
  if (path === "/healthz") return text("ok\n", 200);
  if (path === "/readyz") return options.isReady() ? text("ready\n", 200) : text("not ready\n", 503);
  const body = await options.metrics.render();
  return new Response(body, {
    status: 200,
    headers: { "content-type": options.metrics.contentType, "cache-control": "no-store" },
  });
}

/** Links only: the dashboard URL is the server's own, so nothing user-supplied reaches this markup. */

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const server = Bun.serve({
    hostname: options.host,
    port: options.port,
    // A scrape of a large registry can take a while on a busy 2-core box.
    idleTimeout: 30,
    fetch: (request) => route(request, options),
    error: (error) => {
      // A failing gauge source must not take the port down; the scrape fails
      // visibly (500) and the next one tries again.
      const logError = options.logError ?? ((message: string) => console.error(message));
      logError(`orq http: ${error.message}`);
      return text("internal error\n", 500);
    },
  });
  const port = server.port;
  if (port === undefined) throw new Error("orq http: Bun.serve did not report a port");
  return {
    port,
    async stop() {
      await server.stop(true);
    },
  };
}
