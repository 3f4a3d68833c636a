/** Pure helpers for showing captured conversations and search hits. */
import type { ConversationFacet } from "../generated";

/** Display names of the frameworks capture knows; unknown ones show their id. */
const FRAMEWORK_LABELS: Record<string, string> = {
  "claude-code": "Claude Code",
  codex: "Codex",
  "gemini-cli": "Gemini CLI",
  opencode: "OpenCode",
  kilo: "Kilo Code",
  cursor: "Cursor",
  crush: "Crush",
  "roo-code": "Roo Code",
  "qwen-code": "Qwen Code",
  "copilot-cli": "Copilot CLI",
  "factory-droid": "Factory Droid",
  aider: "Aider",
  continue: "Continue",
  cline: "Cline",
  goose: "Goose",
  amp: "Amp",
};

export function frameworkLabel(framework: string): string {
  return Object.hasOwn(FRAMEWORK_LABELS, framework) ? FRAMEWORK_LABELS[framework]! : framework;
}

/** A stable hue (0–359) per framework, for the small dot on its badge. */
export function frameworkHue(framework: string): number {
  const fixed: Record<string, number> = { "claude-code": 24, codex: 210, "gemini-cli": 265, opencode: 160, cursor: 330 };
  if (Object.hasOwn(fixed, framework)) return fixed[framework]!;
  let h = 0;
  for (const ch of framework) h = (h * 31 + ch.codePointAt(0)!) % 360;
  return h;
}

/**
 * A project identity, shortened for lists: a git remote identity (`github.com/acme/app`)
 * is kept as it is; a path (`/home/dev/projects/demo-app`, `C:\work\app`) becomes its
 * last segment. Null and empty give "".
 */
export function shortProject(project: string | null | undefined): string {
  if (project === null || project === undefined) return "";
  const p = project.trim();
  if (p === "") return "";
  const isPath = /^[/~\\]/.test(p) || /^[A-Za-z]:[\\/]/.test(p) || p.includes("\\") || p.startsWith(".");
  if (!isPath) return p.replace(/\/+$/, "");
  const parts = p.split(/[\\/]+/).filter((s) => s !== "" && s !== "~");
  const last = parts.at(-1);
  if (last === undefined || /^[A-Za-z]:$/.test(last)) return p;
  return last;
}

export type Option = { value: string; label: string; count: number };

/** The frameworks in the facets, with their conversation counts, by label. */
export function frameworkOptions(facets: readonly ConversationFacet[]): Option[] {
  const counts = new Map<string, number>();
  for (const f of facets) counts.set(f.framework, (counts.get(f.framework) ?? 0) + f.count);
  return [...counts]
    .map(([value, count]) => ({ value, label: frameworkLabel(value), count }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/**
 * The projects in the facets (only those of `framework` when one is given), with counts,
 * by short name. Conversations without a project cannot be filtered on and are left out.
 * Two projects with the same short name are told apart by their full identity.
 */
export function projectOptions(facets: readonly ConversationFacet[], framework: string | null = null): Option[] {
  const counts = new Map<string, number>();
  for (const f of facets) {
    if (f.project === null || f.project === "") continue;
    if (framework !== null && f.framework !== framework) continue;
    counts.set(f.project, (counts.get(f.project) ?? 0) + f.count);
  }
  const shortCounts = new Map<string, number>();
  for (const p of counts.keys()) shortCounts.set(shortProject(p), (shortCounts.get(shortProject(p)) ?? 0) + 1);
  return [...counts]
    .map(([value, count]) => {
      const short = shortProject(value);
      return { value, label: (shortCounts.get(short) ?? 0) > 1 ? value : short, count };
    })
    .sort((a, b) => a.label.localeCompare(b.label) || a.value.localeCompare(b.value));
}

/** How a turn ended, as the service reports it. */
export type Outcome = "success" | "error" | "interrupted" | "unknown";

export const OUTCOME_LABELS: Record<Outcome, string> = {
  success: "Success",
  error: "Error",
  interrupted: "Interrupted",
  unknown: "Unknown",
};

export function toOutcome(value: string): Outcome {
  return value === "success" || value === "error" || value === "interrupted" ? value : "unknown";
}

/** One step of a turn, read defensively from the service's loosely typed JSON. */
export type Step =
  | { type: "text"; text: string }
  | { type: "tool"; name: string; input: unknown; output: string | null; isError: boolean }
  | { type: "injected"; source: string; text: string }
  | { type: "other"; raw: unknown };

export function toStep(raw: Record<string, unknown>): Step {
  const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
  switch (raw.type) {
    case "text":
      return { type: "text", text: str(raw.text) ?? "" };
    case "tool": {
      const output = raw.output === null || raw.output === undefined ? null : (str(raw.output) ?? prettyJson(raw.output));
      return { type: "tool", name: str(raw.name) ?? "tool", input: raw.input ?? null, output, isError: raw.is_error === true };
    }
    case "injected":
      return { type: "injected", source: str(raw.source) ?? "unknown", text: str(raw.text) ?? "" };
    default:
      return { type: "other", raw };
  }
}

/** JSON, indented; a string is shown as it is. */
export function prettyJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

const SUMMARY_KEYS = [
  "command",
  "cmd",
  "pattern",
  "query",
  "file_path",
  "filePath",
  "path",
  "notebook_path",
  "url",
  "prompt",
  "description",
  "skill",
  "task",
];

/**
 * The one-line gist of a tool call's input: its command, file, pattern or query (a shell
 * command given as `["bash", "-lc", "…"]` shows the script), else its first string value.
 * Whitespace is collapsed; the result is cut to `max` characters.
 */
export function toolSummary(input: unknown, max = 120): string {
  return clip(oneLine(summaryOf(input)), max);
}

function summaryOf(input: unknown): string {
  if (input === null || input === undefined) return "";
  if (typeof input === "string") return firstLine(input);
  if (typeof input === "number" || typeof input === "boolean") return String(input);
  if (Array.isArray(input)) return commandLine(input);
  if (typeof input === "object") {
    const obj = input as Record<string, unknown>;
    for (const key of SUMMARY_KEYS) {
      const v = obj[key];
      if (typeof v === "string" && v.trim() !== "") return firstLine(v);
      if (Array.isArray(v) && v.length > 0) return commandLine(v);
    }
    for (const v of Object.values(obj)) {
      if (typeof v === "string" && v.trim() !== "") return firstLine(v);
    }
    return "";
  }
  return "";
}

/** `["bash", "-lc", "cargo test"]` → `cargo test`; other argument lists are joined. */
function commandLine(args: unknown[]): string {
  const parts = args.map((a) => (typeof a === "string" ? a : JSON.stringify(a)));
  const shell = parts.length === 3 && /(^|\/)(ba|z|fi|da)?sh$/.test(parts[0] ?? "") && /^-\w*c$/.test(parts[1] ?? "");
  return shell ? firstLine(parts[2] ?? "") : parts.join(" ");
}

function firstLine(s: string): string {
  const lines = s.split("\n").map((l) => l.trim());
  const first = lines.find((l) => l !== "") ?? "";
  return lines.filter((l) => l !== "").length > 1 ? `${first} …` : first;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${s.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** "Injected context (cairn)". */
export function injectedLabel(source: string): string {
  return `Injected context (${source})`;
}

/** A search passage for display: blank lines collapsed, ends trimmed (the words are unchanged). */
export function compactPassage(passage: string): string {
  return passage.replace(/\r\n?/g, "\n").replace(/\n[ \t]*(?:\n[ \t]*)+/g, "\n").trim();
}
