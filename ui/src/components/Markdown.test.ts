import { render } from "svelte/server";
import { describe, expect, it } from "vitest";
import Markdown from "./Markdown.svelte";

/** The component rendered on the server: the markup a browser would build, as a string. */
function html(source: string): string {
  return render(Markdown, { props: { source } }).body.replace(/<!--[^>]*-->/g, "");
}

describe("Markdown component", () => {
  it("renders headings, lists, code and links as elements", () => {
    const out = html("# Title\n\n- one\n- **two**\n\n```js\nlet a = 1 < 2;\n```\n\nSee [docs](https://example.com) and `x<y`.");
    expect(out).toContain("<h1>Title</h1>");
    expect(out).toMatch(/<ul><li[^>]*>one<\/li><li[^>]*><strong>two<\/strong><\/li><\/ul>/);
    expect(out).toContain('<pre data-lang="js"><code>let a = 1 &lt; 2;</code></pre>');
    expect(out).toMatch(/<a href="https:\/\/example.com\/"[^>]*rel="noopener noreferrer nofollow"[^>]*>docs<\/a>/);
    expect(out).toContain("<code>x&lt;y</code>");
  });

  it("escapes raw HTML and never renders a javascript: link", () => {
    const out = html('<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror="alert(2)">');
    expect(out).not.toContain("<script");
    expect(out).not.toContain("<img");
    expect(out).toContain("&lt;script>alert(1)&lt;/script>");
    expect(out).not.toMatch(/href="javascript:/i);
    expect(out).not.toContain("<a ");
  });
});
