/**
 * A small Markdown reader for note previews. It turns Markdown into a tree of plain tokens
 * (blocks and inline runs) that a Svelte component renders element by element, so a note can
 * never become markup: there is no HTML string anywhere, raw HTML in a note stays literal
 * text, and a link keeps its target only when it is an absolute `http:`, `https:` or
 * `mailto:` address (anything else, `javascript:` included, is shown as plain text).
 *
 * Covers what notes use: ATX and setext headings, paragraphs, emphasis, strong, strikethrough,
 * inline code, fenced and indented code blocks, bullet, ordered and task lists (nested),
 * block quotes, rules, GFM tables, links, autolinks and bare URLs, images (shown as links —
 * nothing is fetched), backslash escapes and hard line breaks. Not a full CommonMark
 * implementation: emphasis uses a simpler rule than the spec's delimiter algorithm, and
 * reference-style links are left as text.
 */

export type Inline =
  | { type: "text"; text: string }
  | { type: "code"; text: string }
  | { type: "strong"; children: Inline[] }
  | { type: "em"; children: Inline[] }
  | { type: "del"; children: Inline[] }
  | { type: "link"; href: string; title: string | null; children: Inline[] }
  | { type: "break" };

export type Align = "left" | "center" | "right" | null;

export type ListItem = {
  /** A task item's box: true ticked, false empty, null for an ordinary item. */
  checked: boolean | null;
  children: Block[];
};

export type Block =
  | { type: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; children: Inline[] }
  | { type: "paragraph"; children: Inline[] }
  | { type: "code"; lang: string | null; text: string }
  | { type: "list"; ordered: boolean; start: number; tight: boolean; items: ListItem[] }
  | { type: "blockquote"; children: Block[] }
  | { type: "table"; align: Align[]; head: Inline[][]; rows: Inline[][][] }
  | { type: "hr" };

/** Deeper nesting (quotes in lists in quotes…) is read as text, so no input can exhaust the stack. */
const MAX_DEPTH = 16;

const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/**
 * The address a link may point to, or null when it must not be a link: only absolute
 * `http:`, `https:` and `mailto:` URLs pass (parsed the way the browser parses them, so
 * `JavaScript:`, `java\tscript:` and leading control characters are all caught).
 */
export function safeHref(raw: string): string | null {
  const trimmed = raw.trim();
  if (trimmed === "") return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
}

/** Parses a Markdown document into blocks. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n").map(expandLeadingTabs);
  return parseBlocks(lines, 0);
}

/** The text of inline tokens without their formatting (for alt text, titles, tests). */
export function plainText(nodes: readonly Inline[]): string {
  return nodes
    .map((n) => {
      switch (n.type) {
        case "text":
        case "code":
          return n.text;
        case "break":
          return "\n";
        default:
          return plainText(n.children);
      }
    })
    .join("");
}

// ── Blocks ──

const BLANK = /^[ \t]*$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const HR = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const TABLE_DELIM = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function expandLeadingTabs(line: string): string {
  if (!line.includes("\t")) return line;
  let out = "";
  let col = 0;
  let i = 0;
  for (; i < line.length; i++) {
    const c = line[i];
    if (c === "\t") {
      const n = 4 - (col % 4);
      out += " ".repeat(n);
      col += n;
    } else if (c === " ") {
      out += " ";
      col++;
    } else break;
  }
  return out + line.slice(i);
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

type Fence = { indent: number; marker: string; lang: string | null };

function matchFence(line: string): Fence | null {
  const m = FENCE.exec(line);
  if (!m) return null;
  const marker = m[2]!;
  const info = m[3]!.trim();
  if (marker[0] === "`" && info.includes("`")) return null;
  const lang = info.split(/\s+/)[0] ?? "";
  return { indent: m[1]!.length, marker, lang: lang === "" ? null : lang };
}

function isListStart(line: string, interrupting: boolean): boolean {
  const m = LIST_ITEM.exec(line);
  if (!m || HR.test(line)) return false;
  if (!interrupting) return true;
  // Interrupting a paragraph: a non-empty item, and an ordered one only when it starts at 1.
  if (m[4] === undefined || m[4].trim() === "") return false;
  const marker = m[2]!;
  return !/\d/.test(marker[0]!) || parseInt(marker, 10) === 1;
}

/** Whether `line` starts a block that ends a paragraph. */
function interrupts(line: string): boolean {
  return matchFence(line) !== null || ATX.test(line) || HR.test(line) || QUOTE.test(line) || isListStart(line, true);
}

function parseBlocks(lines: string[], depth: number): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (BLANK.test(line)) {
      i++;
      continue;
    }

    const fence = matchFence(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length) {
        const l = lines[i]!;
        const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(l);
        if (close && close[1]![0] === fence.marker[0] && close[1]!.length >= fence.marker.length) {
          i++;
          break;
        }
        // Content lines lose up to the fence's own indentation.
        body.push(l.slice(Math.min(fence.indent, indentOf(l))));
        i++;
      }
      blocks.push({ type: "code", lang: fence.lang, text: body.join("\n") });
      continue;
    }

    const atx = ATX.exec(line);
    if (atx) {
      const level = atx[1]!.length as 1 | 2 | 3 | 4 | 5 | 6;
      const text = (atx[2] ?? "").replace(/(?:^|[ \t]+)#+[ \t]*$/, "").trim();
      blocks.push({ type: "heading", level, children: parseInline(text, 0) });
      i++;
      continue;
    }

    if (HR.test(line)) {
      blocks.push({ type: "hr" });
      i++;
      continue;
    }

    if (depth < MAX_DEPTH && QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const q = QUOTE.exec(l);
        if (q) inner.push(q[1]!);
        else if (!BLANK.test(l) && !interrupts(l) && inner.length > 0 && !BLANK.test(inner.at(-1)!)) inner.push(l);
        else break;
        i++;
      }
      blocks.push({ type: "blockquote", children: parseBlocks(inner, depth + 1) });
      continue;
    }

    if (depth < MAX_DEPTH && isListStart(line, false)) {
      const { block, next } = parseList(lines, i, depth);
      blocks.push(block);
      i = next;
      continue;
    }

    if (indentOf(line) >= 4) {
      const body: string[] = [];
      while (i < lines.length && (indentOf(lines[i]!) >= 4 || BLANK.test(lines[i]!))) {
        body.push(lines[i]!.slice(Math.min(4, indentOf(lines[i]!))));
        i++;
      }
      while (body.length > 0 && BLANK.test(body.at(-1)!)) body.pop();
      blocks.push({ type: "code", lang: null, text: body.join("\n") });
      continue;
    }

    const table = parseTable(lines, i);
    if (table) {
      blocks.push(table.block);
      i = table.next;
      continue;
    }

    // A paragraph, possibly underlined into a setext heading.
    const para: string[] = [line.trimStart()];
    i++;
    let heading: 1 | 2 | null = null;
    while (i < lines.length) {
      const l = lines[i]!;
      if (BLANK.test(l)) break;
      const setext = SETEXT.exec(l);
      if (setext) {
        heading = setext[1]![0] === "=" ? 1 : 2;
        i++;
        break;
      }
      if (interrupts(l)) break;
      para.push(l.trimStart());
      i++;
    }
    const text = para.join("\n").replace(/[ \t]+$/, "");
    blocks.push(
      heading === null
        ? { type: "paragraph", children: parseInline(text, 0) }
        : { type: "heading", level: heading, children: parseInline(text, 0) },
    );
  }
  return blocks;
}

function parseList(lines: string[], start: number, depth: number): { block: Block; next: number } {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const kind = listKind(first[2]!);
  const items: ListItem[] = [];
  let tight = true;
  let i = start;
  while (i < lines.length) {
    const line = lines[i]!;
    const m = LIST_ITEM.exec(line);
    if (!m || HR.test(line)) break;
    const k = listKind(m[2]!);
    if (k.ordered !== kind.ordered || k.delim !== kind.delim) break;

    const width = m[1]!.length + m[2]!.length;
    const spacing = m[3] ?? "";
    let content = m[4] ?? "";
    let contentIndent: number;
    if (spacing.length === 0 || content.trim() === "") {
      contentIndent = width + 1;
      content = content.trim();
    } else if (spacing.length > 4) {
      contentIndent = width + 1;
      content = spacing.slice(1) + content;
    } else {
      contentIndent = width + spacing.length;
    }

    const itemLines = [content];
    i++;
    let lastBlank = false;
    while (i < lines.length) {
      const l = lines[i]!;
      if (BLANK.test(l)) {
        itemLines.push("");
        lastBlank = true;
        i++;
        continue;
      }
      if (indentOf(l) >= contentIndent) {
        itemLines.push(l.slice(contentIndent));
        lastBlank = false;
        i++;
        continue;
      }
      if (lastBlank || interrupts(l) || isListStart(l, false)) break;
      // A lazy continuation of the item's paragraph.
      itemLines.push(l.trimStart());
      i++;
    }
    let trailingBlank = false;
    while (itemLines.length > 1 && itemLines.at(-1) === "") {
      itemLines.pop();
      trailingBlank = true;
    }
    if (itemLines.slice(1).includes("")) tight = false;
    if (trailingBlank && i < lines.length) {
      const next = LIST_ITEM.exec(lines[i]!);
      if (next && !HR.test(lines[i]!) && listKind(next[2]!).delim === kind.delim) tight = false;
    }

    let checked: boolean | null = null;
    const task = /^\[([ xX])\](?:[ \t]+|$)/.exec(itemLines[0]!);
    if (task) {
      checked = task[1] !== " ";
      itemLines[0] = itemLines[0]!.slice(task[0].length);
    }
    items.push({ checked, children: parseBlocks(itemLines, depth + 1) });
  }
  return { block: { type: "list", ordered: kind.ordered, start: kind.start, tight, items }, next: i };
}

function listKind(marker: string): { ordered: boolean; delim: string; start: number } {
  const ordered = /\d/.test(marker[0]!);
  return ordered ? { ordered, delim: marker.slice(-1), start: parseInt(marker, 10) } : { ordered, delim: marker, start: 1 };
}

/** Splits a table row on its unescaped pipes. */
function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells: string[] = [];
  let cell = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\" && s[i + 1] === "|") {
      cell += "\\|";
      i++;
    } else if (c === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

function parseTable(lines: string[], start: number): { block: Block; next: number } | null {
  const header = lines[start]!;
  const delim = lines[start + 1];
  if (delim === undefined || !header.includes("|") || !delim.includes("|") || !TABLE_DELIM.test(delim)) return null;
  const head = splitRow(header);
  const align: Align[] = splitRow(delim).map((d) => {
    const left = d.startsWith(":");
    const right = d.endsWith(":");
    return left && right ? "center" : right ? "right" : left ? "left" : null;
  });
  if (head.length !== align.length) return null;
  const rows: Inline[][][] = [];
  let i = start + 2;
  while (i < lines.length && !BLANK.test(lines[i]!) && !interrupts(lines[i]!)) {
    const cells = splitRow(lines[i]!);
    rows.push(head.map((_, c) => parseInline(cells[c] ?? "", 0)));
    i++;
  }
  return { block: { type: "table", align, head: head.map((h) => parseInline(h, 0)), rows }, next: i };
}

// ── Inlines ──

const PUNCT = /[!-/:-@[-`{-~]/;
const MAX_LABEL = 1000;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const BARE_URL = /^https?:\/\/[^\s<>]+/;
const AUTOLINK = /^<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/;
const EMAIL_AUTOLINK = /^<([^\s@<>\\]+@[^\s@<>\\]+)>/;

function runLength(src: string, at: number, ch: string): number {
  let n = 0;
  while (src[at + n] === ch) n++;
  return n;
}

/** The index of the backtick run of exactly `run` that closes a code span, or -1. */
function findBacktickClose(src: string, from: number, run: number): number {
  let j = from;
  while (j < src.length) {
    if (src[j] === "`") {
      const r = runLength(src, j, "`");
      if (r === run) return j;
      j += r;
    } else j++;
  }
  return -1;
}

/** Where a code span starting at `at` ends (the index after it), or -1 when it does not close. */
function skipCodeSpan(src: string, at: number): number {
  const run = runLength(src, at, "`");
  const close = findBacktickClose(src, at + run, run);
  return close < 0 ? -1 : close + run;
}

function unescape(s: string): string {
  return s.replace(/\\([!-/:-@[-`{-~])/g, "$1");
}

type LinkMatch = { label: string; href: string; title: string | null; end: number };

/** Reads `[label](destination "title")` starting at the `[` at `at`. */
function parseLinkAt(src: string, at: number): LinkMatch | null {
  let depth = 0;
  let j = at;
  // Labels are short; the cap keeps a run of unclosed brackets from costing quadratic time.
  const limit = Math.min(src.length, at + MAX_LABEL);
  for (; j < limit; j++) {
    const ch = src[j];
    if (ch === "\\") {
      j++;
    } else if (ch === "`") {
      const end = skipCodeSpan(src, j);
      j = (end < 0 ? j + runLength(src, j, "`") : end) - 1;
    } else if (ch === "[") {
      depth++;
    } else if (ch === "]") {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= limit || src[j + 1] !== "(") return null;
  const label = src.slice(at + 1, j);
  let k = j + 2;
  const skipSpace = () => {
    while (k < src.length && /\s/.test(src[k]!)) k++;
  };
  skipSpace();
  let href: string;
  if (src[k] === "<") {
    const end = src.indexOf(">", k);
    if (end < 0 || src.slice(k + 1, end).includes("\n")) return null;
    href = src.slice(k + 1, end);
    k = end + 1;
  } else {
    const begin = k;
    let parens = 0;
    while (k < src.length) {
      const ch = src[k]!;
      if (ch === "\\" && k + 1 < src.length) {
        k += 2;
        continue;
      }
      if (/\s/.test(ch)) break;
      if (ch === "(") parens++;
      else if (ch === ")") {
        if (parens === 0) break;
        parens--;
      }
      k++;
    }
    href = src.slice(begin, k);
  }
  skipSpace();
  let title: string | null = null;
  const open = src[k];
  if (open === '"' || open === "'" || open === "(") {
    const end = src.indexOf(open === "(" ? ")" : open, k + 1);
    if (end < 0) return null;
    title = unescape(src.slice(k + 1, end));
    k = end + 1;
    skipSpace();
  }
  if (src[k] !== ")") return null;
  return { label, href: unescape(href), title, end: k + 1 };
}

/** Links inside a link's text become their text (a link cannot hold a link). */
function withoutLinks(nodes: Inline[]): Inline[] {
  const flat = nodes.flatMap((n): Inline[] => {
    if (n.type === "link") return withoutLinks(n.children);
    if (n.type === "strong" || n.type === "em" || n.type === "del") return [{ ...n, children: withoutLinks(n.children) }];
    return [n];
  });
  const out: Inline[] = [];
  for (const n of flat) {
    const last = out.at(-1);
    if (n.type === "text" && last?.type === "text") out[out.length - 1] = { type: "text", text: last.text + n.text };
    else out.push(n);
  }
  return out;
}

type Delimited = { node: Inline; end: number };

/**
 * For one string: per delimiter (`*1`, `**2`, …), the earliest position from which a search
 * for a closer already reached the end in vain. A closer's fitness does not depend on where
 * the search started, so any later opener of the same kind fails too — which keeps a line of
 * unmatched `*`s linear instead of quadratic.
 */
type CloserMemo = Map<string, number>;

/** Emphasis (`*`/`_`), strong (`**`/`__`) or strikethrough (`~~`) opening at `at`. */
function parseDelimited(src: string, at: number, depth: number, memo: CloserMemo): Delimited | null {
  const ch = src[at]!;
  const run = runLength(src, at, ch);
  const after = src[at + run];
  if (after === undefined || /\s/.test(after)) return null;
  if (ch === "_" && at > 0 && WORD_CHAR.test(src[at - 1]!)) return null;
  const sizes = ch === "~" ? (run === 2 ? [2] : []) : run >= 2 ? [2, 1] : [1];
  for (const size of sizes) {
    const kind = `${ch}${size}`;
    const failedFrom = memo.get(kind);
    if (failedFrom !== undefined && at >= failedFrom) continue;
    const found = findCloser(src, at, run, size, ch, depth);
    if (found) return found;
    memo.set(kind, Math.min(failedFrom ?? Infinity, at));
  }
  return null;
}

function findCloser(src: string, at: number, run: number, size: number, ch: string, depth: number): Delimited | null {
  let j = at + run;
  while (j < src.length) {
    const cj = src[j];
    if (cj === "\\") {
      j += 2;
      continue;
    }
    if (cj === "`") {
      const end = skipCodeSpan(src, j);
      j = end < 0 ? j + runLength(src, j, "`") : end;
      continue;
    }
    if (cj !== ch) {
      j++;
      continue;
    }
    const r = runLength(src, j, ch);
    const before = src[j - 1]!;
    const next = src[j + r];
    const fits = r === size || (r >= 3 && ch !== "~");
    const flanking = !/\s/.test(before) && (ch !== "_" || next === undefined || !WORD_CHAR.test(next));
    if (fits && flanking) {
      const closeAt = j + r - size;
      const inner = src.slice(at + size, closeAt);
      if (inner.trim() !== "") {
        const type = ch === "~" ? "del" : size === 2 ? "strong" : "em";
        return { node: { type, children: parseInline(inner, depth + 1) }, end: closeAt + size };
      }
    }
    j += r;
  }
  return null;
}

/** Trailing punctuation is not part of a bare URL; nor is an unbalanced closing parenthesis. */
function trimBareUrl(url: string): string {
  let u = url.replace(/[.,:;!?'"*_~]+$/, "");
  while (u.endsWith(")") && (u.match(/\)/g)?.length ?? 0) > (u.match(/\(/g)?.length ?? 0)) {
    u = u.slice(0, -1).replace(/[.,:;!?'"*_~]+$/, "");
  }
  return u;
}

/** Parses the inline content of one block. */
export function parseInline(src: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  if (depth > MAX_DEPTH) return src === "" ? out : [{ type: "text", text: src }];
  let text = "";
  const flush = () => {
    if (text !== "") out.push({ type: "text", text });
    text = "";
  };
  const push = (...nodes: Inline[]) => {
    flush();
    for (const n of nodes) {
      const last = out.at(-1);
      if (n.type === "text" && last?.type === "text") last.text += n.text;
      else out.push(n);
    }
  };

  const memo: CloserMemo = new Map();
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;

    if (c === "\\") {
      const next = src[i + 1];
      if (next === "\n") {
        push({ type: "break" });
        i += 2;
      } else if (next !== undefined && PUNCT.test(next)) {
        text += next;
        i += 2;
      } else {
        text += c;
        i++;
      }
      continue;
    }

    if (c === "\n") {
      const hard = / {2,}$/.test(text);
      text = text.replace(/[ \t]+$/, "");
      if (hard) push({ type: "break" });
      else text += "\n";
      i++;
      continue;
    }

    if (c === "`") {
      const run = runLength(src, i, "`");
      const close = findBacktickClose(src, i + run, run);
      if (close < 0) {
        text += src.slice(i, i + run);
        i += run;
        continue;
      }
      let code = src.slice(i + run, close).replace(/\n/g, " ");
      if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "") code = code.slice(1, -1);
      push({ type: "code", text: code });
      i = close + run;
      continue;
    }

    if (c === "[" || (c === "!" && src[i + 1] === "[")) {
      const image = c === "!";
      const link = parseLinkAt(src, image ? i + 1 : i);
      if (link) {
        const href = safeHref(link.href);
        const label = withoutLinks(parseInline(link.label, depth + 1));
        // An image is never loaded (nothing is fetched): it shows as a link to itself.
        const children: Inline[] = image ? [{ type: "text", text: plainText(label) || link.href }] : label;
        if (href !== null) push({ type: "link", href, title: link.title, children });
        else push(...children);
        i = link.end;
        continue;
      }
    }

    if (c === "<") {
      const auto = AUTOLINK.exec(src.slice(i, i + 2100));
      const email = auto ? null : EMAIL_AUTOLINK.exec(src.slice(i, i + 400));
      const target = auto ? auto[1]! : email ? `mailto:${email[1]!}` : null;
      if (target !== null) {
        const whole = (auto ?? email)![0];
        const href = safeHref(target);
        const label = auto ? auto[1]! : email![1]!;
        if (href !== null) push({ type: "link", href, title: null, children: [{ type: "text", text: label }] });
        else text += whole;
        i += whole.length;
        continue;
      }
    }

    if (c === "h" && (i === 0 || !WORD_CHAR.test(src[i - 1]!))) {
      const bare = BARE_URL.exec(src.slice(i, i + 2100));
      if (bare) {
        const url = trimBareUrl(bare[0]);
        const href = safeHref(url);
        if (href !== null) {
          push({ type: "link", href, title: null, children: [{ type: "text", text: url }] });
          i += url.length;
          continue;
        }
      }
    }

    if (c === "*" || c === "_" || c === "~") {
      const found = parseDelimited(src, i, depth, memo);
      if (found) {
        push(found.node);
        i = found.end;
      } else {
        const run = runLength(src, i, c);
        text += src.slice(i, i + run);
        i += run;
      }
      continue;
    }

    text += c;
    i++;
  }
  flush();
  return out;
}
