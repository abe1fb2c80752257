// How values are shown: bytes as text, JSON or hex (always escaped later by
// html.ts), durations and instants in short human form, numbers with
// thousands separators. Pure functions of their inputs (times are given).

import { dashboardLimits } from "../limits.ts";
import { html, type Html } from "./html.ts";

const { shownBytesMax, shownHexBytesMax } = dashboardLimits;

const decoder = new TextDecoder("utf-8", { fatal: true });

export type BytesView = { kind: "empty" } | { kind: "json"; text: string } | { kind: "text"; text: string } | { kind: "hex"; text: string };

/** JSON (pretty) when the bytes are UTF-8 JSON, text when they are UTF-8, else hex. */
export function viewBytes(bytes: Uint8Array | null | undefined): BytesView {
  if (bytes === null || bytes === undefined || bytes.length === 0) return { kind: "empty" };
  let text: string | null = null;
  try {
    text = decoder.decode(bytes.length > shownBytesMax ? bytes.subarray(0, shownBytesMax) : bytes);
  } catch {
    // Not UTF-8 (or cut inside a character): shown as hex below.
    text = null;
  }
  if (text !== null) {
    if (bytes.length <= shownBytesMax) {
      try {
        return { kind: "json", text: JSON.stringify(JSON.parse(text), null, 2) };
      } catch {
        // Not JSON: shown as text.
      }
    }
    return { kind: "text", text: bytes.length > shownBytesMax ? `${text}… (${bytes.length} bytes)` : text };
  }
  const shown = bytes.subarray(0, shownHexBytesMax);
  const hex = Array.from(shown, (b) => b.toString(16).padStart(2, "0")).join(" ");
  return { kind: "hex", text: bytes.length > shownHexBytesMax ? `${hex} … (${bytes.length} bytes)` : hex };
}

export function bytesBlock(bytes: Uint8Array | null | undefined): Html {
  const view = viewBytes(bytes);
  if (view.kind === "empty") return html`<span class="muted">empty</span>`;
  return html`<div class="bytes"><span class="tag">${view.kind}</span><pre>${view.text}</pre></div>`;
}

/** A one-line preview for tables. */
export function bytesPreview(bytes: Uint8Array | null | undefined, chars = 60): string {
  const view = viewBytes(bytes);
  if (view.kind === "empty") return "";
  const flat = view.kind === "json" ? JSON.stringify(JSON.parse(view.text)) : view.text;
  return flat.length > chars ? `${flat.slice(0, chars)}…` : flat;
}

export function count(n: unknown): string {
  return typeof n === "number" ? n.toLocaleString("en-US") : "–";
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export function instant(atMs: unknown): string {
  return typeof atMs === "number" ? new Date(atMs).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "–";
}

/** A value as compact JSON (requires, capabilities), for escaped display. */
export function json(value: unknown): string {
  return JSON.stringify(value) ?? "";
}
