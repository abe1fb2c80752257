// A small inline SVG line for a series (a topic's depth over the last hour):
// drawn by the server with attributes only, so it needs no script and no
// inline style under the Content-Security-Policy.

import { html, type Html } from "../html.ts";

const widthPx = 120;
const heightPx = 24;

export function sparkline(values: readonly number[]): Html {
  if (values.length < 2) return html`<span class="muted">–</span>`;
  const max = Math.max(1, ...values);
  const step = widthPx / (values.length - 1);
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(heightPx - 1 - (v / max) * (heightPx - 2)).toFixed(1)}`).join(" ");
  const last = values[values.length - 1] as number;
  return html`<svg class="spark" width="${widthPx}" height="${heightPx}" viewBox="0 0 ${widthPx} ${heightPx}" role="img" aria-label="depth now ${last}, peak ${max}"><polyline points="${points}" fill="none" stroke="currentColor" stroke-width="1.5"/></svg>`;
}
