// The web dashboard's HTTP listener (--ui-port): who may ask (request-guard.ts),
// which session asks (sessions.ts: sign-in with a token, or the anonymous
// loopback session when no token is configured), POST checks (Origin, CSRF),
// then the page, action, chart data or asset. Pages call the ops through
// OpCaller with the session, so auth and scope are the TCP port's. It also
// owns the history's one sampling timer (every historyFineSampleMs, reading
// the `stats` op with an internal read-only session and the injected clock).
// In cluster mode (clusterSeed set) the pages' ops go to the whole cluster as
// the signed-in token (cluster-op-caller.ts); the history and the inspect
// queries stay this node's own, and the pages say so.

import type { EngineInspector } from "../engine/reads/inspect.ts";
import type { Clock } from "../lib/clock.ts";
import { dashboardLimits } from "../limits.ts";
import { allNamespaces, type TokenTable } from "../server/auth.ts";
import type { Logger } from "../server/logger.ts";
import type { ServerInfo, Session } from "../server/op-types.ts";
import { FormError, noticeFor, runAction } from "./actions.ts";
import { readAsset } from "./assets.ts";
import { History, samplesFromStats } from "./history.ts";
import { historyChart } from "./history-chart.ts";
import { html } from "./html.ts";
import { ClusterOpCaller } from "./cluster-op-caller.ts";
import { OpCaller, OpError, type RequestHandler } from "./op-caller.ts";
import type { PageContext, PageHandler, ServerPanel } from "./page-context.ts";
import { deadPage } from "./pages/dead.ts";
import { itemPage } from "./pages/item.ts";
import { schedulesPage } from "./pages/schedules.ts";
import { bare, layout } from "./pages/layout.ts";
import { matchingPage } from "./pages/matching.ts";
import { overviewPage } from "./pages/overview.ts";
import { signInPage } from "./pages/signin.ts";
import { topicPage } from "./pages/topic.ts";
import { topicsPage } from "./pages/topics.ts";
import { anonymousAllowed, isLoopbackHost, sameOrigin } from "./request-guard.ts";
import { htmlResponse, jsonResponse, redirect, statusOf, textResponse } from "./responses.ts";
import { sameSecret, SessionStore, SignInLimiter, type DashboardSession } from "./sessions.ts";
import { ScopedInspector } from "./scoped-inspector.ts";

export interface DashboardOptions {
  host: string;
  /** 0 picks a free port; `port` on the handle is the real one. */
  port: number;
  /** The protocol server's dispatcher (OrqServer.handleRequest). */
  requests: RequestHandler;
  /** This node's inspect queries (in cluster mode, of its own shards only). */
  inspector: EngineInspector;
  /** Cluster mode: this node's advertised address, where the cluster client reads the map; null or absent on a single node. */
  clusterSeed?: string | null;
  tokens: TokenTable;
  clock: Clock;
  serverInfo: ServerInfo;
  serverPanel(): ServerPanel;
  /** Sign-ins (info), refused sign-ins (warn, with the client address, never the token), failures (error). */
  logger: Logger;
}

export interface DashboardHandle {
  port: number;
  url: string;
  stop(): Promise<void>;
}

const pages: ReadonlyMap<string, PageHandler> = new Map([
  ["/", overviewPage],
  ["/topics", topicsPage],
  ["/topic", topicPage],
  ["/item", itemPage],
  ["/dead", deadPage],
  ["/matching", matchingPage],
  ["/schedules", schedulesPage],
]);

const actionPaths = new Set(["/topic/pause", "/topic/resume", "/group/pause", "/group/resume", "/dead/confirm", "/dead/apply", "/schedule/set", "/schedule/remove"]);

const cookieName = "orq_session";

export function startDashboard(options: DashboardOptions): DashboardHandle {
  const requests = new DashboardRequests(options);
  const sampler: Session = { connectionId: 0, scope: allNamespaces, readOnly: true };

  if (!options.tokens.required && !isLoopbackHost(options.host)) {
    options.logger.warn("dashboard: no token is configured and the host is not loopback, so it refuses every request; configure tokens or use --ui-port off", { host: options.host });
  }

  const sample = async (): Promise<void> => {
    // This node's own stats: in cluster mode the history is this node's shards (the pages say so).
    const reply = await requests.localOps.call(sampler, "stats", {}, false);
    if (reply.ok) requests.history.record(options.clock.nowMs(), samplesFromStats(reply.value));
  };
  const sampleTimer = setInterval(() => void sample(), dashboardLimits.historyFineSampleMs);
  sampleTimer.unref();
  void sample();

  const server = Bun.serve({
    hostname: options.host,
    port: options.port,
    // Bun refuses larger bodies (413) before the handler reads them.
    maxRequestBodySize: dashboardLimits.formBytesMax,
    fetch: (request, bunServer) => requests.handle(request, bunServer.requestIP(request)?.address ?? "unknown"),
    error: (error) => {
      options.logger.error("dashboard request failed", { error: error.message });
      return textResponse("internal error\n", 500);
    },
  });
  const port = server.port;
  if (port === undefined) throw new Error("dashboard: Bun.serve did not report a port");
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    port,
    url: `http://${shownHost}:${port}/`,
    async stop() {
      clearInterval(sampleTimer);
      await server.stop(true);
      if (requests.ops instanceof ClusterOpCaller) await requests.ops.close();
    },
  };
}

/** Answers the dashboard's HTTP requests: one per listener, holding its sessions, sign-in limiter and sample history. */
class DashboardRequests {
  /** The pages' ops: this node's dispatcher, or in cluster mode the whole cluster's (cluster-op-caller.ts). */
  readonly ops: OpCaller;
  /** This node's dispatcher only: the history sampler and the cluster banner. */
  readonly localOps: OpCaller;
  private readonly inspector: ScopedInspector;
  private readonly sessions: SessionStore;
  private readonly limiter: SignInLimiter;
  readonly history = new History();

  constructor(private readonly options: DashboardOptions) {
    this.localOps = new OpCaller(options.requests);
    this.inspector = new ScopedInspector(options.inspector);
    this.sessions = new SessionStore(options.clock);
    const seed = options.clusterSeed ?? null;
    this.ops = seed === null ? this.localOps : new ClusterOpCaller(options.requests, seed, (session) => this.sessions.tokenOf(session), options.clock);
    this.limiter = new SignInLimiter(options.clock);
  }

  async handle(request: Request, clientAddress: string): Promise<Response> {
    const url = new URL(request.url);
    const hostHeader = request.headers.get("host");
    if (!this.options.tokens.required && !anonymousAllowed(this.options.host, hostHeader)) {
      return textResponse("The dashboard has no token configured, so it answers only on a loopback host (127.0.0.1, ::1, localhost).\n", 403);
    }
    if (url.pathname.startsWith("/assets/")) return serveAsset(request, url);
    const isPost = request.method === "POST";
    if (!isPost && request.method !== "GET" && request.method !== "HEAD") return textResponse("method not allowed\n", 405, { allow: "GET, HEAD, POST" });
    let form: URLSearchParams | null = null;
    if (isPost) {
      // Origin first: a cross-site form post is refused before its body is read.
      if (!sameOrigin(request.headers.get("origin"), hostHeader)) return textResponse("refused: this change does not come from a page of this dashboard (Origin)\n", 403);
      const body = await request.text();
      if (body.length > dashboardLimits.formBytesMax) return textResponse("form too large\n", 413);
      form = new URLSearchParams(body);
    }
    if (url.pathname === "/signin" && this.options.tokens.required) return this.signIn(isPost, form, clientAddress);
    const session = this.sessionOf(request);
    const live = url.searchParams.get("part") === "live";
    if (session === null) {
      if (isPost || live || url.pathname.startsWith("/api/")) return textResponse("sign in first\n", 401);
      return redirect("/signin");
    }
    if (isPost) {
      if (!sameSecret(form?.get("csrf") ?? "", session.csrfToken)) return textResponse("refused: missing or wrong CSRF token; reload the page\n", 403);
      if (url.pathname === "/signout") {
        if (session.id !== null) this.sessions.delete(session.id);
        return redirect(this.options.tokens.required ? "/signin" : "/", { "set-cookie": `${cookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0` });
      }
      if (!actionPaths.has(url.pathname)) return textResponse("not found\n", 404);
      const formUrl = new URL(url);
      formUrl.searchParams.set("ns", form?.get("ns") ?? "");
      const ctx = await this.contextFor(session, formUrl, true);
      try {
        const result = await runAction(ctx, url.pathname, form as URLSearchParams);
        return result.kind === "redirect" ? result.response : htmlResponse(layout(ctx, result.page));
      } catch (error) {
        return this.errorPage(ctx, error, false);
      }
    }
    if (url.pathname === "/api/history") {
      const ctx = await this.contextFor(session, url, false);
      try {
        this.inspector.check(session.opSession, "history", ctx.ns);
        return jsonResponse(historyChart(this.history, ctx.ns, url.searchParams));
      } catch (error) {
        return jsonResponse({ error: error instanceof OpError ? error.error : { code: "INTERNAL" } }, statusOf(error));
      }
    }
    const page = pages.get(url.pathname);
    if (page === undefined) return textResponse("not found\n", 404);
    const ctx = await this.contextFor(session, url, !live);
    try {
      const result = await page(ctx);
      if (live) return htmlResponse(result.live ?? "");
      return htmlResponse(layout(ctx, result));
    } catch (error) {
      return this.errorPage(ctx, error, live);
    }
  }

  /** The sign-in page, or a sign-in: rate-limited per client address, then a session cookie for a valid token. */
  private signIn(isPost: boolean, form: URLSearchParams | null, clientAddress: string): Response {
    if (!isPost) return htmlResponse(signInPage(null));
    const waitMs = this.limiter.attempt(clientAddress);
    if (waitMs > 0) {
      this.options.logger.warn("dashboard sign-in rate-limited", { remote: clientAddress });
      return htmlResponse(signInPage("Too many sign-in attempts from this address; wait a minute."), 429, { "retry-after": String(Math.ceil(waitMs / 1000)) });
    }
    const token = form?.get("token") ?? "";
    const access = this.options.tokens.access(token);
    if (access === null) {
      this.options.logger.warn("dashboard sign-in refused: invalid token", { remote: clientAddress });
      return htmlResponse(signInPage("That token is not valid."), 401);
    }
    // Only a cluster node keeps the token: it asks the other nodes as that token.
    const session = this.sessions.create(access, (this.options.clusterSeed ?? null) === null ? null : token);
    this.options.logger.info("dashboard sign-in", { remote: clientAddress, read_only: access.readOnly, session: session.opSession.connectionId });
    const maxAgeS = Math.floor(dashboardLimits.sessionMs / 1000);
    return redirect("/", { "set-cookie": `${cookieName}=${session.id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeS}` });
  }

  private sessionOf(request: Request): DashboardSession | null {
    if (!this.options.tokens.required) return this.sessions.anonymous;
    const cookie = request.headers.get("cookie") ?? "";
    for (const part of cookie.split(";")) {
      const [name, value] = part.trim().split("=", 2);
      if (name === cookieName && value !== undefined) return this.sessions.find(value);
    }
    return null;
  }

  private async contextFor(session: DashboardSession, url: URL, needNamespaces: boolean): Promise<PageContext> {
    let namespaces: string[] = [];
    const asked = url.searchParams.get("ns");
    if (needNamespaces || asked === null || asked === "") {
      const stats = await this.ops.call(session.opSession, "stats", {});
      namespaces = stats.ok ? Object.keys((stats.value.namespaces ?? {}) as object) : [];
      const scope = session.opSession.scope;
      if (scope !== null && !scope.all) for (const ns of scope.namespaces) if (!namespaces.includes(ns)) namespaces.push(ns);
      namespaces.sort();
    }
    const ns = asked !== null && asked !== "" ? asked : (namespaces[0] ?? "default");
    if (!namespaces.includes(ns) && needNamespaces) namespaces.push(ns);
    return {
      session, ops: this.ops, inspector: this.inspector, history: this.history, url, ns, namespaces,
      nowMs: this.options.clock.nowMs(),
      serverInfo: this.options.serverInfo,
      serverPanel: this.options.serverPanel,
      notice: noticeFor(url.searchParams),
    };
  }

  private errorPage(ctx: PageContext | null, error: unknown, live: boolean): Response {
    const status = error instanceof FormError ? 400 : statusOf(error);
    if (status === 500 && !(error instanceof OpError)) this.options.logger.error("dashboard request failed", { error: error instanceof Error ? error.message : String(error) });
    const message = error instanceof OpError ? `${error.error.code}: ${error.error.message}` : error instanceof FormError ? error.message : "internal error (logged)";
    const body = html`<p class="error" role="alert" data-status="${status}">${message}</p>`;
    if (live) return htmlResponse(body, status);
    return htmlResponse(ctx === null ? bare("Error", body) : layout(ctx, { title: "Error", top: body }), status);
  }
}

/** A static asset (GET and HEAD only), revalidated by its ETag. */
async function serveAsset(request: Request, url: URL): Promise<Response> {
  if (request.method !== "GET" && request.method !== "HEAD") return textResponse("method not allowed\n", 405, { allow: "GET, HEAD" });
  const asset = await readAsset(url.pathname.slice("/assets/".length));
  if (asset === null) return textResponse("not found\n", 404);
  const headers = { "content-type": asset.contentType, "cache-control": "no-cache", etag: asset.etag, "x-content-type-options": "nosniff" };
  if (request.headers.get("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
  return new Response(asset.body, { headers });
}
