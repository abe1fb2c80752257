// The dashboard's static files, embedded: each `with { type: "file" }`
// import is bundled into dist/orq by `bun build --compile`, so the binary
// serves the dashboard from an empty folder. Served under /assets/<name>
// with `Cache-Control: no-cache` and an ETag of their bytes: the browser
// revalidates each time (an upgrade is seen at once) and gets 304 when unchanged.

import appJs from "./assets/app.js" with { type: "file" };
import appCss from "./assets/app.css" with { type: "file" };
import favicon from "./assets/favicon.svg" with { type: "file" };
import uplotJs from "uplot/dist/uPlot.iife.min.js" with { type: "file" };
import uplotCss from "uplot/dist/uPlot.min.css" with { type: "file" };

interface Asset {
  path: string;
  contentType: string;
}

const assets: ReadonlyMap<string, Asset> = new Map([
  ["app.js", { path: appJs, contentType: "text/javascript; charset=utf-8" }],
  ["app.css", { path: appCss, contentType: "text/css; charset=utf-8" }],
  ["favicon.svg", { path: favicon, contentType: "image/svg+xml" }],
  ["uPlot.iife.min.js", { path: uplotJs, contentType: "text/javascript; charset=utf-8" }],
  ["uPlot.min.css", { path: uplotCss, contentType: "text/css; charset=utf-8" }],
]);

export interface AssetBody {
  body: Uint8Array;
  contentType: string;
  etag: string;
}

/** Read once, then kept: a few small files. */
const loaded = new Map<string, AssetBody>();

/** The asset's bytes, type and ETag, or null for an unknown name. */
export async function readAsset(name: string): Promise<AssetBody | null> {
  const cached = loaded.get(name);
  if (cached !== undefined) return cached;
  const asset = assets.get(name);
  if (asset === undefined) return null;
  const body = new Uint8Array(await Bun.file(asset.path).arrayBuffer());
  const entry = { body, contentType: asset.contentType, etag: `"${Bun.hash(body).toString(36)}"` };
  loaded.set(name, entry);
  return entry;
}
