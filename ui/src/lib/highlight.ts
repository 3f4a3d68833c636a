/**
 * Client-side highlighting of query words in a passage. The result is a list of plain text
 * segments (rendered as text nodes and `<mark>` elements by the caller), never HTML, so text
 * from a conversation can never become markup.
 */

export type Segment = { text: string; hit: boolean };

/** Query syntax words that are not themselves searched for. */
const OPERATORS = new Set(["and", "or", "not"]);

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower case without accents, as the search index compares words. */
export function foldWord(word: string): string {
  return word.normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase();
}

/**
 * The words of a query, folded, without duplicates: what the index matched on. Quotes,
 * `+`/`-` prefixes and other punctuation are separators; AND/OR/NOT are left out, and so are
 * words after a `-` (excluded words never appear in a hit).
 */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const token of query.split(/\s+/)) {
    if (token.startsWith("-")) continue;
    if (OPERATORS.has(token.toLowerCase()) && token === token.toUpperCase()) continue;
    for (const m of token.matchAll(WORD)) terms.add(foldWord(m[0]));
  }
  return [...terms];
}

/**
 * Splits `text` into segments, marking every whole word that equals one of the query's
 * words. Joining the segments' text gives back `text` exactly.
 */
export function highlight(text: string, query: string | readonly string[]): Segment[] {
  const terms = new Set(typeof query === "string" ? queryTerms(query) : query.map(foldWord));
  const out: Segment[] = [];
  const push = (s: string, hit: boolean) => {
    if (s === "") return;
    const last = out.at(-1);
    if (last !== undefined && last.hit === hit && !hit) last.text += s;
    else out.push({ text: s, hit });
  };
  let at = 0;
  if (terms.size > 0) {
    for (const m of text.matchAll(WORD)) {
      if (!terms.has(foldWord(m[0]))) continue;
      push(text.slice(at, m.index), false);
      push(m[0], true);
      at = m.index + m[0].length;
    }
  }
  push(text.slice(at), false);
  return out;
}
