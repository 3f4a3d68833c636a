/**
 * Markdown for note previews, read by a maintained CommonMark + GFM parser
 * (`mdast-util-from-markdown` with `micromark-extension-gfm` / `mdast-util-gfm`) and mapped
 * from its syntax tree (mdast) to a tree of plain tokens that a Svelte component renders
 * element by element. A note can never become markup: there is no HTML string anywhere, raw
 * HTML in a note stays literal text, and a link keeps its target only when it is an absolute
 * `http:`, `https:` or `mailto:` address (anything else, `javascript:` included, is shown as
 * plain text). Images are shown as links (or their alt text) — nothing is ever fetched.
 *
 * Covers CommonMark (headings, paragraphs, emphasis, code, lists, quotes, rules, links and
 * reference links, hard breaks, escapes and entities) and GFM (tables, task lists,
 * strikethrough, autolink literals, footnotes shown as text). Before parsing, input that would
 * cost micromark seconds or its stack (more than 32 nested container markers on one line, runs
 * of 256 or more `*`/`_`/`~`) is escaped into literal text, and a parser failure shows the
 * note as text.
 */

import type * as Md from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

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

/** Deeper nesting (quotes in lists in quotes…, emphasis in emphasis…) is shown as its text. */
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

/**
 * Container markers (`>`, `-`, `*`, `+`, `1.`, `1)`) one line may open before the rest of the
 * line is read as text. micromark's time grows with the square of a line's nesting, and a few
 * thousand nested list markers overflow its stack; nothing past [`MAX_DEPTH`] is shown as
 * structure anyway.
 */
const MAX_CONTAINERS_PER_LINE = 32;

const CONTAINER_MARKER = /[ \t]{0,3}(?:>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))[ \t]*/y;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;

/**
 * A run of this many `*`, `_` or `~` (or more) is escaped into literal text: resolving a run of
 * thousands costs micromark minutes (20,000 stars on each side of a word took 85 s). No
 * emphasis is that deep, and a code banner is far shorter.
 */
const MAX_DELIMITER_RUN = 256;
const LONG_DELIMITER_RUN = new RegExp(`([*_~])\\1{${MAX_DELIMITER_RUN - 1},}`, "g");

/**
 * The source made safe for micromark: every container marker past the per-line limit escaped
 * (`\>`, `\-`, `1\.`), and over-long delimiter runs escaped, into text.
 */
function limitNesting(source: string): string {
  if (source.length < MAX_CONTAINERS_PER_LINE * 2) return source;
  return source
    .split("\n")
    .map((line) => {
      if (line.length >= MAX_DELIMITER_RUN) line = line.replace(LONG_DELIMITER_RUN, (run) => run.replace(/./g, "\\$&"));
      if (line.length < MAX_CONTAINERS_PER_LINE * 2 || THEMATIC_BREAK.test(line)) return line;
      CONTAINER_MARKER.lastIndex = 0;
      for (let n = 0; n < MAX_CONTAINERS_PER_LINE; n++) {
        const at = CONTAINER_MARKER.lastIndex;
        if (CONTAINER_MARKER.exec(line) === null || CONTAINER_MARKER.lastIndex === at) return line;
      }
      const at = CONTAINER_MARKER.lastIndex;
      const m = /^[ \t]{0,3}(?:>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))/.exec(line.slice(at));
      if (m === null) return line;
      // Escape the marker's punctuation: `\>` and `\-` are text, and so is `1\.`.
      const punct = at + m[0].length - 1;
      return line.slice(0, punct) + "\\" + line.slice(punct);
    })
    .join("\n");
}

/**
 * The mdast syntax tree of a Markdown document (CommonMark + GFM). Should the parser ever
 * fail, the document is one paragraph of its own text rather than a broken preview.
 */
function syntaxTree(source: string): Md.Root {
  try {
    return fromMarkdown(limitNesting(source), { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  } catch {
    return { type: "root", children: [{ type: "paragraph", children: [{ type: "text", value: source }] }] };
  }
}

/** Parses a Markdown document into blocks. */
export function parseMarkdown(source: string): Block[] {
  const root = syntaxTree(source);
  return new Mapper(root).blocks(root.children, 0);
}

/**
 * Parses one block's inline content (a paragraph's text): the inline tokens of the blocks
 * the text makes, joined.
 */
export function parseInline(src: string, depth = 0): Inline[] {
  const root = syntaxTree(src);
  const mapper = new Mapper(root);
  const out: Inline[] = [];
  for (const node of root.children) {
    if (node.type === "paragraph" || node.type === "heading") out.push(...mapper.inlines(node.children, depth));
    else if (node.type === "html") out.push({ type: "text", text: node.value });
    else out.push({ type: "text", text: textOf(node) });
  }
  return merged(out);
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

/** The text a syntax-tree node holds, without formatting (iterative: any depth is fine). */
function textOf(node: Md.Nodes): string {
  let out = "";
  const stack: Md.Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === "break") out += "\n";
    else if (n.type === "image" || n.type === "imageReference") out += n.alt ?? "";
    else if ("value" in n) out += n.value;
    else if ("children" in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** Adjacent text tokens joined into one. */
function merged(nodes: Inline[]): Inline[] {
  const out: Inline[] = [];
  for (const n of nodes) {
    const last = out.at(-1);
    if (n.type === "text" && last?.type === "text") out[out.length - 1] = { type: "text", text: last.text + n.text };
    else if (!(n.type === "text" && n.text === "")) out.push(n);
  }
  return out;
}

/** Links inside a link's text become their text (a link cannot hold a link). */
function withoutLinks(nodes: Inline[]): Inline[] {
  return merged(
    nodes.flatMap((n): Inline[] => {
      if (n.type === "link") return withoutLinks(n.children);
      if (n.type === "strong" || n.type === "em" || n.type === "del") return [{ ...n, children: withoutLinks(n.children) }];
      return [n];
    }),
  );
}

/** Maps one document's mdast nodes to tokens, resolving reference links by its definitions. */
class Mapper {
  private readonly definitions = new Map<string, Md.Definition>();

  constructor(root: Md.Root) {
    // Definitions sit at the top level or inside containers; collect them all (iteratively).
    const stack: Md.Nodes[] = [root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.type === "definition" && !this.definitions.has(n.identifier)) this.definitions.set(n.identifier, n);
      else if ("children" in n) stack.push(...n.children);
    }
  }

  blocks(nodes: readonly Md.Nodes[], depth: number): Block[] {
    return nodes.flatMap((n) => this.block(n, depth));
  }

  private block(node: Md.Nodes, depth: number): Block[] {
    if (depth > MAX_DEPTH) return [{ type: "paragraph", children: [{ type: "text", text: textOf(node) }] }];
    switch (node.type) {
      case "paragraph":
        return [{ type: "paragraph", children: this.inlines(node.children, depth) }];
      case "heading":
        return [{ type: "heading", level: node.depth, children: this.inlines(node.children, depth) }];
      case "thematicBreak":
        return [{ type: "hr" }];
      case "code":
        return [{ type: "code", lang: node.lang ?? null, text: node.value }];
      case "html":
        // Raw HTML is shown as what it is: text.
        return [{ type: "paragraph", children: [{ type: "text", text: node.value }] }];
      case "blockquote":
        return [{ type: "blockquote", children: this.blocks(node.children, depth + 1) }];
      case "list": {
        const loose = Boolean(node.spread) || node.children.some((item) => item.spread ?? item.children.length > 1);
        return [
          {
            type: "list",
            ordered: Boolean(node.ordered),
            start: node.ordered ? (node.start ?? 1) : 1,
            tight: !loose,
            items: node.children.map((item) => ({
              checked: item.checked ?? null,
              children: this.blocks(item.children, depth + 1),
            })),
          },
        ];
      }
      case "table": {
        const [head, ...rows] = node.children;
        const width = head?.children.length ?? 0;
        const cells = (row: Md.TableRow): Inline[][] =>
          Array.from({ length: width }, (_, c) => {
            const cell = row.children[c];
            return cell ? this.inlines(cell.children, depth + 1) : [];
          });
        return [
          {
            type: "table",
            align: Array.from({ length: width }, (_, c) => node.align?.[c] ?? null),
            head: head ? cells(head) : [],
            rows: rows.map(cells),
          },
        ];
      }
      case "definition":
        return [];
      case "footnoteDefinition": {
        // Footnotes are shown where they are written, marked with their label.
        const inner = this.blocks(node.children, depth + 1);
        const mark: Inline = { type: "text", text: `[^${node.label ?? node.identifier}]: ` };
        const first = inner[0];
        if (first?.type === "paragraph") return [{ type: "paragraph", children: merged([mark, ...first.children]) }, ...inner.slice(1)];
        return [{ type: "paragraph", children: [mark] }, ...inner];
      }
      default: {
        const text = textOf(node);
        return text === "" ? [] : [{ type: "paragraph", children: [{ type: "text", text }] }];
      }
    }
  }

  inlines(nodes: readonly Md.Nodes[], depth: number): Inline[] {
    return merged(nodes.flatMap((n) => this.inline(n, depth)));
  }

  private inline(node: Md.Nodes, depth: number): Inline[] {
    if (depth > MAX_DEPTH) return [{ type: "text", text: textOf(node) }];
    switch (node.type) {
      case "text":
        return [{ type: "text", text: node.value }];
      case "html":
        // Inline HTML (`<b>`, `<img …>`, `<script>`) stays literal text.
        return [{ type: "text", text: node.value }];
      case "inlineCode":
        return [{ type: "code", text: node.value }];
      case "break":
        return [{ type: "break" }];
      case "strong":
        return [{ type: "strong", children: this.inlines(node.children, depth + 1) }];
      case "emphasis":
        return [{ type: "em", children: this.inlines(node.children, depth + 1) }];
      case "delete":
        return [{ type: "del", children: this.inlines(node.children, depth + 1) }];
      case "link":
        return this.link(node.url, node.title ?? null, withoutLinks(this.inlines(node.children, depth + 1)));
      case "linkReference": {
        const children = withoutLinks(this.inlines(node.children, depth + 1));
        const def = this.definitions.get(node.identifier);
        return def ? this.link(def.url, def.title ?? null, children) : children;
      }
      case "image":
        return this.image(node.url, node.title ?? null, node.alt ?? "");
      case "imageReference": {
        const def = this.definitions.get(node.identifier);
        const alt = node.alt ?? "";
        return def ? this.image(def.url, def.title ?? null, alt) : alt === "" ? [] : [{ type: "text", text: alt }];
      }
      case "footnoteReference":
        return [{ type: "text", text: `[^${node.label ?? node.identifier}]` }];
      default:
        return [{ type: "text", text: textOf(node) }];
    }
  }

  /** A link when its address is safe; otherwise just its text. */
  private link(url: string, title: string | null, children: Inline[]): Inline[] {
    const href = safeHref(url);
    return href === null ? children : [{ type: "link", href, title, children }];
  }

  /** An image is never loaded (nothing is fetched): it shows as a link to itself, or its alt text. */
  private image(url: string, title: string | null, alt: string): Inline[] {
    const label: Inline[] = [{ type: "text", text: alt || url }];
    return this.link(url, title, label);
  }
}
