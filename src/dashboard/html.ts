// Safe HTML building: every interpolated value is escaped unless it is
// already an Html (built by this same tag). User-supplied text (topic names,
// ids, payloads, reasons, feature names) can therefore only ever be text; no
// page concatenates strings into markup by hand.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeText(value: string): string {
  return value.replace(/[&<>"']/g, (c) => escapes[c] as string);
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join("");
  return escapeText(String(value));
}

/** Tagged template: literal parts are markup, interpolations are escaped (Html passes through). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as HtmlValue) + (strings[i + 1] as string);
  return new Html(out);
}

/** A query string from pairs, each part URL-encoded (null values left out). */
export function query(params: Record<string, string | number | null | undefined>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === "") continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}
