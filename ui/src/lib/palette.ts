/**
 * The command palette's commands and how typed text picks among them: every word typed must
 * match the command's title or one of its keywords; titles that start with the text come
 * first, then titles with a word starting with it, then other matches, each group in the
 * order the commands were given.
 */

/** The groups the palette lists commands under, in display order. */
export const COMMAND_GROUPS = ["Search", "Go to", "Memory", "Actions", "Theme"] as const;

export type CommandGroup = (typeof COMMAND_GROUPS)[number];

/** One entry of the palette. `run` does what the matching button in the UI does. */
export type Command = {
  /** Stable id (also the option's data-testid suffix). */
  id: string;
  title: string;
  group: CommandGroup;
  /** Other words the command is found by (e.g. "dark" for "Theme: dark"). */
  keywords?: readonly string[];
  /** Shown at the right of the row, e.g. "Ctrl+S". */
  hint?: string;
  /** False when the command cannot run now (e.g. the service is unreachable); it is still listed. */
  enabled?: boolean;
  run: () => void | Promise<void>;
};

/** Lower-case, accents removed, runs of spaces collapsed. */
export function normalize(text: string): string {
  return text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim();
}

/** True when the letters of `needle` appear in `hay` in order (not necessarily together). */
function isSubsequence(needle: string, hay: string): boolean {
  let i = 0;
  for (const ch of hay) {
    if (ch === needle[i]) i += 1;
    if (i === needle.length) return true;
  }
  return needle.length === 0;
}

/**
 * How well `query` matches `cmd`: 0 is best; null when it does not match. An empty query
 * matches everything equally (score 0).
 *
 * - 0: the title starts with the whole query;
 * - 1: every word of the query starts a word of the title;
 * - 2: every word of the query occurs in the title;
 * - 3: every word of the query occurs in the title or a keyword;
 * - 4: the query's letters occur in the title in order ("gtn" → "Go to Notes").
 */
export function scoreCommand(cmd: Pick<Command, "title" | "keywords">, query: string): number | null {
  const q = normalize(query);
  if (q === "") return 0;
  const title = normalize(cmd.title);
  if (title.startsWith(q)) return 0;
  const words = q.split(" ");
  const titleWords = title.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "");
  if (words.every((w) => titleWords.some((t) => t.startsWith(w)))) return 1;
  if (words.every((w) => title.includes(w))) return 2;
  const keywords = (cmd.keywords ?? []).map(normalize);
  if (words.every((w) => title.includes(w) || keywords.some((k) => k.includes(w)))) return 3;
  if (isSubsequence(q.replace(/ /g, ""), title.replace(/ /g, ""))) return 4;
  return null;
}

/** The commands matching `query`, best first; ties keep the order given. */
export function filterCommands<C extends Pick<Command, "title" | "keywords">>(commands: readonly C[], query: string): C[] {
  return commands
    .map((cmd, index) => ({ cmd, index, score: scoreCommand(cmd, query) }))
    .filter((e): e is { cmd: C; index: number; score: number } => e.score !== null)
    .sort((a, b) => a.score - b.score || a.index - b.index)
    .map((e) => e.cmd);
}

/** The index after moving `delta` rows from `current` in a list of `length`, wrapping round. */
export function moveActive(current: number, delta: number, length: number): number {
  if (length <= 0) return -1;
  if (current < 0) return delta >= 0 ? 0 : length - 1;
  return (((current + delta) % length) + length) % length;
}

/** True on Apple platforms, where the palette's shortcut is ⌘K rather than Ctrl+K. */
export function isApple(platform: string): boolean {
  return /mac|iphone|ipad|ipod/i.test(platform);
}

/** The palette's shortcut as shown to the user on `platform`. */
export function paletteShortcut(platform: string): string {
  return isApple(platform) ? "⌘K" : "Ctrl+K";
}

/** True for the key press that opens the palette: Ctrl+K, or ⌘K (Meta+K), without Alt or Shift. */
export function isPaletteKey(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey" | "shiftKey">): boolean {
  return e.key.toLowerCase() === "k" && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey;
}
