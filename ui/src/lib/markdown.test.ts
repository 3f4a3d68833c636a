import { describe, expect, it } from "vitest";
import { parseInline, parseMarkdown, plainText, safeHref, type Block, type Inline } from "./markdown";

const text = (t: string): Inline => ({ type: "text", text: t });

/** Every link in a block tree. */
function links(blocks: Block[]): { href: string; text: string }[] {
  const out: { href: string; text: string }[] = [];
  const walkInline = (nodes: Inline[]) => {
    for (const n of nodes) {
      if (n.type === "link") out.push({ href: n.href, text: plainText(n.children) });
      if ("children" in n) walkInline(n.children);
    }
  };
  const walk = (bs: Block[]) => {
    for (const b of bs) {
      if (b.type === "heading" || b.type === "paragraph") walkInline(b.children);
      else if (b.type === "blockquote") walk(b.children);
      else if (b.type === "list") b.items.forEach((item) => walk(item.children));
      else if (b.type === "table") [b.head, ...b.rows].flat().forEach(walkInline);
    }
  };
  walk(blocks);
  return out;
}

describe("headings", () => {
  it("reads ATX headings of every level, with closing hashes dropped", () => {
    expect(parseMarkdown("# One\n## Two ##\n###### Six")).toEqual([
      { type: "heading", level: 1, children: [text("One")] },
      { type: "heading", level: 2, children: [text("Two")] },
      { type: "heading", level: 6, children: [text("Six")] },
    ]);
  });

  it("needs a space after the hashes, and at most six of them", () => {
    expect(parseMarkdown("#hashtag")).toEqual([{ type: "paragraph", children: [text("#hashtag")] }]);
    expect(parseMarkdown("####### seven")[0]?.type).toBe("paragraph");
  });

  it("reads setext headings", () => {
    expect(parseMarkdown("Title\n=====\n\nSub\n---")).toEqual([
      { type: "heading", level: 1, children: [text("Title")] },
      { type: "heading", level: 2, children: [text("Sub")] },
    ]);
  });

  it("formats inline content inside a heading", () => {
    expect(parseMarkdown("## The `cairn` *way*")).toEqual([
      {
        type: "heading",
        level: 2,
        children: [text("The "), { type: "code", text: "cairn" }, text(" "), { type: "em", children: [text("way")] }],
      },
    ]);
  });
});

describe("paragraphs and inline formatting", () => {
  it("joins lines into one paragraph and splits on blank lines", () => {
    expect(parseMarkdown("one\ntwo\n\nthree")).toEqual([
      { type: "paragraph", children: [text("one\ntwo")] },
      { type: "paragraph", children: [text("three")] },
    ]);
  });

  it("reads strong, emphasis and strikethrough, nested", () => {
    expect(parseInline("**bold** and *it* and ~~gone~~")).toEqual([
      { type: "strong", children: [text("bold")] },
      text(" and "),
      { type: "em", children: [text("it")] },
      text(" and "),
      { type: "del", children: [text("gone")] },
    ]);
    // CommonMark (spec example 413): `***x***` is emphasis around strong.
    expect(parseInline("***both***")).toEqual([{ type: "em", children: [{ type: "strong", children: [text("both")] }] }]);
    expect(parseInline("*a **b** c*")).toEqual([
      { type: "em", children: [text("a "), { type: "strong", children: [text("b")] }, text(" c")] },
    ]);
  });

  it("leaves snake_case, lone stars and unclosed delimiters alone", () => {
    expect(parseInline("snake_case_name")).toEqual([text("snake_case_name")]);
    expect(parseInline("2 * 3 * 4")).toEqual([text("2 * 3 * 4")]);
    expect(parseInline("**open")).toEqual([text("**open")]);
  });

  it("honours backslash escapes and hard breaks", () => {
    expect(parseInline("\\*not em\\*")).toEqual([text("*not em*")]);
    expect(parseInline("line  \nnext")).toEqual([text("line"), { type: "break" }, text("next")]);
    expect(parseInline("line\\\nnext")).toEqual([text("line"), { type: "break" }, text("next")]);
  });
});

describe("code", () => {
  it("reads inline code literally, whatever it holds", () => {
    expect(parseInline("run `rm *.md` then `` a`b ``")).toEqual([
      text("run "),
      { type: "code", text: "rm *.md" },
      text(" then "),
      { type: "code", text: "a`b" },
    ]);
    expect(parseInline("`**not bold** [no](https://x.test)`")).toEqual([
      { type: "code", text: "**not bold** [no](https://x.test)" },
    ]);
  });

  it("reads fenced code blocks with their language, keeping Markdown and HTML literal", () => {
    const md = "```ts\nconst a = 1;\n# not a heading\n<b>x</b>\n```\nafter";
    expect(parseMarkdown(md)).toEqual([
      { type: "code", lang: "ts", text: "const a = 1;\n# not a heading\n<b>x</b>" },
      { type: "paragraph", children: [text("after")] },
    ]);
  });

  it("reads tilde fences, unclosed fences (to the end) and indented code", () => {
    expect(parseMarkdown("~~~\na\n~~~")).toEqual([{ type: "code", lang: null, text: "a" }]);
    expect(parseMarkdown("```\nnever closed\n\nstill code")).toEqual([
      { type: "code", lang: null, text: "never closed\n\nstill code" },
    ]);
    expect(parseMarkdown("    indented\n      more\n\npara")).toEqual([
      { type: "code", lang: null, text: "indented\n  more" },
      { type: "paragraph", children: [text("para")] },
    ]);
  });
});

describe("lists", () => {
  it("reads bullet lists as tight lists of paragraphs", () => {
    expect(parseMarkdown("- one\n- two\n* other list")).toEqual([
      {
        type: "list",
        ordered: false,
        start: 1,
        tight: true,
        items: [
          { checked: null, children: [{ type: "paragraph", children: [text("one")] }] },
          { checked: null, children: [{ type: "paragraph", children: [text("two")] }] },
        ],
      },
      {
        type: "list",
        ordered: false,
        start: 1,
        tight: true,
        items: [{ checked: null, children: [{ type: "paragraph", children: [text("other list")] }] }],
      },
    ]);
  });

  it("reads ordered lists with their start number, and loose lists", () => {
    const [list] = parseMarkdown("3. three\n\n4. four");
    expect(list).toMatchObject({ type: "list", ordered: true, start: 3, tight: false });
    expect(list?.type === "list" && list.items.length).toBe(2);
  });

  it("nests lists by indentation and reads task boxes", () => {
    const [list] = parseMarkdown("- [x] done\n- [ ] todo\n  - child\n    1. grandchild");
    expect(list?.type).toBe("list");
    if (list?.type !== "list") return;
    expect(list.items.map((i) => i.checked)).toEqual([true, false]);
    const todo = list.items[1]!.children;
    expect(todo[0]).toEqual({ type: "paragraph", children: [text("todo")] });
    expect(todo[1]).toMatchObject({ type: "list", ordered: false });
    const child = todo[1]?.type === "list" ? todo[1].items[0]!.children : [];
    expect(child[1]).toMatchObject({ type: "list", ordered: true, start: 1 });
  });

  it("does not mistake a rule or emphasis for a list", () => {
    expect(parseMarkdown("* * *")).toEqual([{ type: "hr" }]);
    expect(parseMarkdown("*em* text")[0]?.type).toBe("paragraph");
    expect(parseMarkdown("-not a list")[0]?.type).toBe("paragraph");
  });
});

describe("quotes, rules and tables", () => {
  it("reads block quotes with blocks inside", () => {
    expect(parseMarkdown("> # Q\n> text\nlazy")).toEqual([
      {
        type: "blockquote",
        children: [
          { type: "heading", level: 1, children: [text("Q")] },
          { type: "paragraph", children: [text("text\nlazy")] },
        ],
      },
    ]);
  });

  it("reads GFM tables with alignment, escaped pipes and short rows", () => {
    expect(parseMarkdown("| a | b |\n|:--|--:|\n| 1 | x \\| y |\n| 2 |")).toEqual([
      {
        type: "table",
        align: ["left", "right"],
        head: [[text("a")], [text("b")]],
        rows: [
          [[text("1")], [text("x | y")]],
          [[text("2")], []],
        ],
      },
    ]);
  });

  // micromark takes about a second on 3,000 nested emphasis markers (quadratic), so this test
  // gets more than vitest's default 5 s on a busy machine.
  it("survives deep nesting without exhausting the stack", { timeout: 30_000 }, () => {
    const deep = ">".repeat(5000) + " x";
    expect(() => parseMarkdown(deep)).not.toThrow();
    // Past the depth limit the rest is shown as its text.
    expect(JSON.stringify(parseMarkdown(deep))).toMatch(/"text":">+ x"/);
    // Thousands of list markers on one line overflow micromark's own stack unless limited.
    const lists = "- ".repeat(5000) + "x";
    expect(JSON.stringify(parseMarkdown(lists))).toMatch(/"text":"(- )+x"/);
    expect(JSON.stringify(parseMarkdown("1. ".repeat(3000) + "x"))).toMatch(/"text":"(1\. )+x"/);
    expect(() => parseInline("*".repeat(3000) + "x" + "*".repeat(3000))).not.toThrow();
    expect(() => parseInline("[".repeat(2000) + "x")).not.toThrow();
  });
});

describe("links are safe", () => {
  it("keeps http, https and mailto links", () => {
    expect(parseInline('[docs](https://example.com/a?b=1 "The docs")')).toEqual([
      { type: "link", href: "https://example.com/a?b=1", title: "The docs", children: [text("docs")] },
    ]);
    expect(links(parseMarkdown("[mail](mailto:me@example.com) <https://x.test/p> see http://y.test/q.")).map((l) => l.href)).toEqual([
      "mailto:me@example.com",
      "https://x.test/p",
      "http://y.test/q",
    ]);
  });

  it("refuses javascript: links in every disguise, keeping their text", () => {
    const attempts = [
      "[click](javascript:alert(1))",
      "[click](JavaScript:alert(1))",
      "[click]( javascript:alert(1) )",
      "[click](java\tscript:alert(1))",
      "[click](<javascript:alert(1)>)",
      "[click](\u0001javascript:alert(1))",
      "[click](&#106;avascript:alert(1))",
      "[click](data:text/html;base64,PHNjcmlwdD4=)",
      "[click](vbscript:msgbox)",
      "![img](javascript:alert(1))",
    ];
    for (const md of attempts) {
      const blocks = parseMarkdown(md);
      expect(links(blocks), md).toEqual([]);
      expect(JSON.stringify(blocks)).toContain(md.startsWith("!") ? "img" : "click");
    }
    // CommonMark reads `<javascript:…>` as an autolink; refused, it shows as its text.
    expect(parseInline("<javascript:alert(1)>")).toEqual([text("javascript:alert(1)")]);
  });

  it("does not link relative or protocol-relative addresses", () => {
    expect(links(parseMarkdown("[a](notes/other.md) [b](//evil.test) [c](#top)"))).toEqual([]);
  });

  it("shows images as links to themselves, never loading them", () => {
    expect(parseInline("![a chart](https://example.com/c.png)")).toEqual([
      { type: "link", href: "https://example.com/c.png", title: null, children: [text("a chart")] },
    ]);
  });

  it("never nests a link in a link", () => {
    // CommonMark: a link cannot contain a link, so the inner one wins and the outer brackets
    // stay text (GFM then links the bare URL after them).
    expect(parseInline("[a [b](https://b.test)](https://a.test)")).toEqual([
      text("[a "),
      { type: "link", href: "https://b.test/", title: null, children: [text("b")] },
      text("]("),
      { type: "link", href: "https://a.test/", title: null, children: [text("https://a.test")] },
      text(")"),
    ]);
    // An image inside a link is its alt text there, not a second link.
    expect(parseInline("[![logo](https://x.test/l.png)](https://a.test)")).toEqual([
      { type: "link", href: "https://a.test/", title: null, children: [text("logo")] },
    ]);
  });

  it("safeHref accepts only absolute http, https and mailto URLs", () => {
    expect(safeHref("https://example.com")).toBe("https://example.com/");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("file:///etc/passwd")).toBeNull();
    expect(safeHref("relative/path")).toBeNull();
    expect(safeHref("")).toBeNull();
  });
});

describe("raw HTML stays text", () => {
  it("keeps <script> and other tags as literal text tokens", () => {
    const blocks = parseMarkdown('<script>alert("x")</script>\n\n<img src=x onerror=alert(1)> **bold**');
    expect(blocks).toEqual([
      { type: "paragraph", children: [text('<script>alert("x")</script>')] },
      { type: "paragraph", children: [text("<img src=x onerror=alert(1)> "), { type: "strong", children: [text("bold")] }] },
    ]);
  });
});

describe("GFM and CommonMark from the parser", () => {
  it("reads GFM tables with centre alignment, inline formatting and extra cells dropped", () => {
    expect(parseMarkdown("Name | Kind | Note\n:-: | --- | ---\n`a` | **b** | c | extra")).toEqual([
      {
        type: "table",
        align: ["center", null, null],
        head: [[text("Name")], [text("Kind")], [text("Note")]],
        rows: [[[{ type: "code", text: "a" }], [{ type: "strong", children: [text("b")] }], [text("c")]]],
      },
    ]);
  });

  it("reads task lists, ordered tasks and a paragraph-like [x] that is not a task", () => {
    const [list] = parseMarkdown("1. [ ] first\n2. [X] second\n3. [x]not a task");
    expect(list?.type === "list" && list.items.map((i) => i.checked)).toEqual([false, true, null]);
    expect(list?.type === "list" && list.items[2]!.children).toEqual([{ type: "paragraph", children: [text("[x]not a task")] }]);
  });

  it("reads strikethrough with one or two tildes, but not three", () => {
    expect(parseInline("~~two~~ ~one~")).toEqual([
      { type: "del", children: [text("two")] },
      text(" "),
      { type: "del", children: [text("one")] },
    ]);
    expect(parseMarkdown("~~~\nfenced\n~~~")).toEqual([{ type: "code", lang: null, text: "fenced" }]);
  });

  it("links GFM autolink literals: www., http(s) and e-mail addresses", () => {
    expect(links(parseMarkdown("see www.example.com, https://x.test/a_(b) and me@example.com."))).toEqual([
      { href: "http://www.example.com/", text: "www.example.com" },
      { href: "https://x.test/a_(b)", text: "https://x.test/a_(b)" },
      { href: "mailto:me@example.com", text: "me@example.com" },
    ]);
  });

  it("nests lists of mixed kinds, loose and tight", () => {
    const [outer] = parseMarkdown("- a\n  1. one\n  2. two\n     - deep\n- b\n\n  more of b");
    expect(outer).toMatchObject({ type: "list", ordered: false, tight: false });
    if (outer?.type !== "list") throw new Error("not a list");
    const inner = outer.items[0]!.children[1];
    expect(inner).toMatchObject({ type: "list", ordered: true, start: 1, tight: true });
    const deep = inner?.type === "list" ? inner.items[1]!.children[1] : undefined;
    expect(deep).toMatchObject({ type: "list", ordered: false, items: [{ children: [{ type: "paragraph", children: [text("deep")] }] }] });
    expect(outer.items[1]!.children).toEqual([
      { type: "paragraph", children: [text("b")] },
      { type: "paragraph", children: [text("more of b")] },
    ]);
  });

  it("shows raw HTML blocks and inline tags as text, never as elements", () => {
    expect(parseMarkdown('<div onclick="x()">\n*hi*\n</div>\n\nA <b>bold</b> <iframe src="https://evil.test">')).toEqual([
      { type: "paragraph", children: [text('<div onclick="x()">\n*hi*\n</div>')] },
      { type: "paragraph", children: [text('A <b>bold</b> <iframe src="https://evil.test">')] },
    ]);
  });

  it("refuses javascript: and data: targets in reference links and images, keeping the text", () => {
    const blocks = parseMarkdown("[go][x] ![pic][y] [ok][z]\n\n[x]: javascript:alert(1)\n[y]: data:image/png;base64,AAAA\n[z]: https://ok.test");
    expect(blocks).toEqual([
      {
        type: "paragraph",
        children: [text("go pic "), { type: "link", href: "https://ok.test/", title: null, children: [text("ok")] }],
      },
    ]);
  });

  it("limits nesting per line without changing ordinary lines or rules", () => {
    expect(parseMarkdown("- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -")).toEqual([{ type: "hr" }]);
    const thirtyTwo = parseMarkdown("> ".repeat(32) + "x");
    expect(JSON.stringify(thirtyTwo)).not.toContain(">");
    const thirtyThree = parseMarkdown("> ".repeat(33) + "x");
    expect(JSON.stringify(thirtyThree)).toContain('"text":"> x"');
  });

  it("shows over-long delimiter runs literally, and keeps code banners intact", { timeout: 30_000 }, () => {
    const stars = "*".repeat(20_000);
    expect(parseMarkdown(`${stars}x${stars}`)).toEqual([{ type: "paragraph", children: [text(`${stars}x${stars}`)] }]);
    const banner = `/${"*".repeat(120)}/`;
    expect(parseMarkdown("```c\n" + banner + "\n```")).toEqual([{ type: "code", lang: "c", text: banner }]);
  });

  it("decodes entities and keeps footnotes as marked text", () => {
    expect(parseInline("a &amp; b &copy;")).toEqual([text("a & b ©")]);
    const blocks = parseMarkdown("Claim[^1].\n\n[^1]: Source.");
    expect(blocks).toEqual([
      { type: "paragraph", children: [text("Claim[^1].")] },
      { type: "paragraph", children: [text("[^1]: Source.")] },
    ]);
  });
});
