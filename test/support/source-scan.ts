// A small reader of TypeScript source for the tidy test (test/tidy.test.ts):
// the text with everything that is not code blanked out, and the block
// bodies of functions with their lengths. Not a parser: it knows comments,
// strings, template literals and regular expressions well enough that the
// braces left are code (the tidy test checks that they balance in every
// file), and it takes a `{` for a function body when `=>` or a parameter
// list (with an optional return type) comes before it. Expression-bodied
// arrows have no block and are not measured.

/** Keywords whose parenthesized head is followed by a block that is not a function. */
const controlKeywords = new Set(["if", "for", "while", "switch", "catch", "with"]);

/** Keywords after which a `/` starts a regular expression, not a division. */
const regexAfterWords = new Set(["return", "typeof", "case", "in", "of", "delete", "void", "throw", "new", "else", "do", "yield", "await"]);

/** Characters after which a `/` starts a regular expression. */
const regexAfterChars = "(,=:[!&|?{};+-*%<>~^";

/**
 * The text with comments, string and template text, and regular
 * expressions replaced by spaces (newlines kept, so offsets and line
 * numbers stay): what is left is code. A template's `${…}` stays code.
 */
export function codeOnly(text: string): string {
  const out = text.split("");
  const blank = (i: number) => {
    if (out[i] !== "\n") out[i] = " ";
  };
  /** Brace depth at each open `${`, to know which `}` returns to template text. */
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const inTemplate = (): void => {
    // Template text from i (just past a backquote or a closing `}`) to its end or the next `${`.
    while (i < text.length) {
      const c = text[i]!;
      if (c === "\\") {
        blank(i++);
        blank(i++);
      } else if (c === "`") {
        blank(i++);
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        // Both characters blanked: the `}` that ends the substitution is blanked too, so braces left still pair.
        blank(i++);
        blank(i++);
        templates.push(depth);
        depth++;
        return;
      } else {
        blank(i++);
      }
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") blank(i++);
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      while (i < stop) blank(i++);
    } else if (c === '"' || c === "'") {
      blank(i++);
      while (i < text.length && text[i] !== c && text[i] !== "\n") {
        if (text[i] === "\\") blank(i++);
        blank(i++);
      }
      blank(i++);
    } else if (c === "`") {
      blank(i++);
      inTemplate();
    } else if (c === "/" && startsRegex(out, i)) {
      blank(i++);
      let inClass = false;
      while (i < text.length && text[i] !== "\n") {
        const r = text[i]!;
        if (r === "\\") blank(i++);
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        blank(i++);
      }
      blank(i++);
    } else if (c === "{") {
      depth++;
      i++;
    } else if (c === "}") {
      depth--;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        blank(i++);
        inTemplate();
      } else {
        i++;
      }
    } else {
      i++;
    }
  }
  return out.join("");
}

/** Whether the `/` at i starts a regular expression: by what code comes before it. */
function startsRegex(out: string[], i: number): boolean {
  let j = i - 1;
  while (j >= 0 && /\s/.test(out[j]!)) j--;
  if (j < 0) return true;
  const before = out[j]!;
  if (regexAfterChars.includes(before)) return true;
  if (!/[\w$]/.test(before)) return false;
  let start = j;
  while (start > 0 && /[\w$]/.test(out[start - 1]!)) start--;
  return regexAfterWords.has(out.slice(start, j + 1).join(""));
}

export interface FunctionSpan {
  /** The function's name where the code names it (declaration, method, `name = (…) =>`), else "(anonymous)". */
  name: string;
  /** 1-based line of its header (the parameter list, or the `{` when none is found). */
  line: number;
  /** Lines from the header to the closing brace, both included. */
  lines: number;
}

/** The block-bodied functions of `text` (nested ones too, each measured whole). */
export function functionSpans(text: string): FunctionSpan[] {
  const code = codeOnly(text);
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const spans: FunctionSpan[] = [];
  for (let open = code.indexOf("{"); open !== -1; open = code.indexOf("{", open + 1)) {
    const params = functionParams(code, open);
    if (params === null) continue;
    const close = matching(code, open, "{", "}", 1);
    if (close === -1) continue;
    const header = params === -1 ? open : params;
    spans.push({ name: nameBefore(code, header, params === -1), line: lineOf(header), lines: lineOf(close) - lineOf(header) + 1 });
  }
  return spans;
}

/**
 * When the `{` at `open` opens a function body: the offset of its parameter
 * list's `(`, or -1 for an arrow whose parameters were not found. Null when
 * the block is not a function body.
 */
function functionParams(code: string, open: number): number | null {
  let j = skipSpaceBack(code, open - 1);
  if (code[j] === ">" && code[j - 1] === "=") {
    const k = skipSpaceBack(code, j - 2);
    return code[k] === ")" ? matching(code, k, ")", "(", -1) : -1;
  }
  // A return type may stand between the parameters and the body: walk back to a `)` followed by `:`.
  // Right after a `:` a brace opens a type or a value, never a body.
  if (code[j] === ":") return null;
  if (code[j] !== ")") {
    const colon = returnTypeColon(code, j);
    if (colon === -1) return null;
    j = skipSpaceBack(code, colon - 1);
    if (code[j] !== ")") return null;
  }
  const paren = matching(code, j, ")", "(", -1);
  if (paren === -1) return null;
  const word = wordBefore(code, paren);
  return controlKeywords.has(word) ? null : paren;
}

/**
 * Walking back from `from` over a return type (names, generics, unions,
 * arrays, object and tuple types) at depth 0: the offset of the `:` that
 * starts it, or -1 when the text is not a return type.
 */
function returnTypeColon(code: string, from: number): number {
  let depth = 0;
  for (let j = from; j >= 0; j--) {
    const c = code[j]!;
    if (c === ">" && code[j - 1] === "=") j--; // a function type's arrow, not a bracket
    // Formatted code puts a space before a comparison or shift (`a < b`, `x >>> 0`), never before a generic bracket: an operator means no return type.
    else if ((c === "<" || c === ">") && /\s/.test(code[j - 1] ?? "")) return -1;
    else if (c === ")" || c === "]" || c === "}" || c === ">") depth++;
    else if (c === "(" || c === "[" || c === "{" || c === "<") {
      if (depth === 0) return -1;
      depth--;
    } else if (depth === 0) {
      if (c === ":") return j;
      // A return type sits on its parameters' line (outside its own brackets): a line break means this is no return type.
      if (c === ";" || c === "=" || c === "," || c === "\n") return -1;
    }
  }
  return -1;
}

/** The offset of the bracket matching the one at `at`, walking in `step` direction; -1 when none. */
function matching(code: string, at: number, self: string, other: string, step: 1 | -1): number {
  let depth = 0;
  for (let j = at; j >= 0 && j < code.length; j += step) {
    if (code[j] === self) depth++;
    else if (code[j] === other && --depth === 0) return j;
  }
  return -1;
}

function skipSpaceBack(code: string, j: number): number {
  while (j >= 0 && /\s/.test(code[j]!)) j--;
  return j;
}

/** The identifier right before `at` (skipping spaces and a generic parameter list), or "". */
function wordBefore(code: string, at: number): string {
  let j = skipSpaceBack(code, at - 1);
  if (code[j] === ">") j = skipSpaceBack(code, matching(code, j, ">", "<", -1) - 1);
  const end = j + 1;
  while (j >= 0 && /[\w$#]/.test(code[j]!)) j--;
  return code.slice(j + 1, end);
}

/** A function's name: the word before its parameters, or for an arrow the `name =` or `name:` before it. */
function nameBefore(code: string, header: number, arrowWithoutParams: boolean): string {
  if (arrowWithoutParams) return "(anonymous)";
  const word = wordBefore(code, header);
  if (word !== "" && word !== "function" && word !== "async") return word;
  let j = skipSpaceBack(code, header - 1);
  while (j >= 0 && /[\w$]/.test(code[j]!)) j--;
  j = skipSpaceBack(code, j);
  if (code[j] === "=" || code[j] === ":") {
    const name = wordBefore(code, j);
    if (name !== "") return name;
  }
  return "(anonymous)";
}
