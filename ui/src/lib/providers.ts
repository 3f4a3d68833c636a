import type { DistillReport, LlmBudget, LlmSettingsReq, LlmStatus, LlmTestReq, LlmTestRes, LlmTotals } from "../generated";

/** One choice of `llm.provider`, with what it needs. */
export type ProviderInfo = {
  /** The value of `llm.provider` (`""` = none). */
  id: string;
  label: string;
  /** One short line on what it calls. */
  blurb: string;
  /** Takes a model name (empty = the provider's fast default). */
  model: boolean;
  /** Takes an endpoint (`llm.base_url`). */
  baseUrl: boolean;
  /** Takes a GGUF file (`llm.model_path`). */
  modelPath: boolean;
  /** Takes an API key kept in the OS keyring. */
  key: boolean;
  /** The model field's placeholder. */
  modelHint: string;
};

const CLI = { model: true, baseUrl: false, modelPath: false, key: false } as const;

/** Every provider Cairn knows, in the order the settings view lists them. */
export const PROVIDERS: readonly ProviderInfo[] = [
  {
    id: "",
    label: "None",
    blurb: "No model is called: conversations stay searchable and wait to be distilled.",
    model: false,
    baseUrl: false,
    modelPath: false,
    key: false,
    modelHint: "",
  },
  {
    id: "claude-cli",
    label: "Claude Code CLI",
    blurb: "Your own agent CLI (claude), signed in once, with its fast model (haiku).",
    ...CLI,
    modelHint: "haiku",
  },
  {
    id: "codex-cli",
    label: "Codex CLI (refused)",
    blurb:
      "Refused: headless Codex runs shell commands the model chooses and reads every file, so text in a captured conversation could act. Use the Claude Code CLI, the local model or an API key.",
    ...CLI,
    modelHint: "the Codex default",
  },
  {
    id: "gemini-cli",
    label: "Gemini CLI",
    blurb: "Your own agent CLI (gemini), signed in once, with its fast model (flash-lite).",
    ...CLI,
    modelHint: "flash-lite",
  },
  {
    id: "anthropic",
    label: "Anthropic API",
    blurb: "The Anthropic Messages API with your API key (claude-haiku-4-5 by default).",
    model: true,
    baseUrl: true,
    modelPath: false,
    key: true,
    modelHint: "claude-haiku-4-5",
  },
  {
    id: "openai",
    label: "OpenAI-compatible",
    blurb: "Any OpenAI-compatible endpoint: OpenAI, Ollama, LM Studio, vLLM or a llama.cpp server.",
    model: true,
    baseUrl: true,
    modelPath: false,
    key: true,
    modelHint: "e.g. qwen2.5:3b (required)",
  },
  {
    id: "local",
    label: "Local GGUF model",
    blurb: "A GGUF model file run inside Cairn: nothing leaves this machine.",
    model: false,
    baseUrl: false,
    modelPath: true,
    key: false,
    modelHint: "",
  },
];

/** The provider's entry; an unknown name gets a plain one that takes every field. */
export function providerInfo(id: string): ProviderInfo {
  return (
    PROVIDERS.find((p) => p.id === id) ?? {
      id,
      label: id,
      blurb: "A provider this page does not know.",
      model: true,
      baseUrl: true,
      modelPath: true,
      key: false,
      modelHint: "",
    }
  );
}

/** The providers to offer: the known ones the service accepts, in this page's order, plus any it names that this page does not know. */
export function providerChoices(serviceProviders: readonly string[]): ProviderInfo[] {
  const known = PROVIDERS.filter((p) => p.id === "" || serviceProviders.includes(p.id));
  const extra = serviceProviders.filter((id) => !PROVIDERS.some((p) => p.id === id)).map(providerInfo);
  return [...known, ...extra];
}

/** What the providers form holds (numbers as typed). */
export type ProviderForm = {
  provider: string;
  model: string;
  base_url: string;
  model_path: string;
  daily_calls: string;
  daily_usd: string;
  /** The turn note's LLM judge ("true"/"false", a string like the rest). */
  judge: string;
  /** The judge's deadline in milliseconds, as typed. */
  judge_ms: string;
};

/** The form filled from the settings in effect. */
export function formFromStatus(s: LlmStatus): ProviderForm {
  return {
    provider: s.provider,
    model: s.model,
    base_url: s.base_url,
    model_path: s.model_path,
    daily_calls: String(s.budget.calls),
    daily_usd: String(s.budget.usd),
    judge: String(s.judge),
    judge_ms: String(s.judge_ms),
  };
}

/** True when the form differs from the settings in effect. */
export function formChanged(form: ProviderForm, s: LlmStatus): boolean {
  const saved = formFromStatus(s);
  return (Object.keys(saved) as (keyof ProviderForm)[]).some((k) => form[k].trim() !== saved[k].trim());
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** The problem with the provider part of the form, naming the field; null when it is fine. */
function providerProblem(form: ProviderForm): string | null {
  const info = providerInfo(form.provider);
  const base = form.base_url.trim();
  if (info.baseUrl && base !== "" && !/^https?:\/\/[^\s/]+/i.test(base)) {
    return `The base URL ${JSON.stringify(base)} is not a web address: it must start with http:// or https:// (for example http://127.0.0.1:11434/v1).`;
  }
  if (form.provider === "openai" && form.model.trim() === "") {
    return "An OpenAI-compatible endpoint needs the model's name (for example gpt-4o-mini, or qwen2.5:3b for Ollama).";
  }
  const path = form.model_path.trim();
  if (info.modelPath && path === "") return "A local model needs the path of its GGUF file.";
  if (info.modelPath && !(path.startsWith("/") || path.startsWith("~/") || /^[A-Za-z]:[\\/]/.test(path))) {
    return `The model path ${JSON.stringify(path)} is not absolute: give the GGUF file's full path (or one starting with ~/).`;
  }
  return null;
}

/** The fields of a provider that apply to it (the others are left out, so the saved ones are used). */
function providerFields(form: ProviderForm): Pick<LlmSettingsReq, "provider" | "model" | "base_url" | "model_path"> {
  const info = providerInfo(form.provider);
  return {
    provider: form.provider,
    model: info.model ? form.model.trim() : "",
    base_url: info.baseUrl ? form.base_url.trim() : "",
    model_path: info.modelPath ? form.model_path.trim() : "",
  };
}

/** The `llm_test` request for the choice on screen (saved or not), or the problem with it. */
export function testRequest(form: ProviderForm): Checked<LlmTestReq> {
  if (form.provider === "") return { ok: false, error: "Choose a provider to test." };
  const problem = providerProblem(form);
  if (problem !== null) return { ok: false, error: problem };
  return { ok: true, value: providerFields(form) };
}

/** The `llm_settings_set` request for the form, or the problem with it. */
export function settingsRequest(form: ProviderForm): Checked<LlmSettingsReq> {
  const problem = form.provider === "" ? null : providerProblem(form);
  if (problem !== null) return { ok: false, error: problem };
  const callsText = form.daily_calls.trim();
  const calls = Number(callsText);
  if (callsText === "" || !Number.isInteger(calls) || calls < 0 || calls > 4_294_967_295) {
    return { ok: false, error: `The daily call limit must be a whole number, 0 or more (got ${JSON.stringify(callsText)}).` };
  }
  const usdText = form.daily_usd.trim().replace(/^\$/, "");
  const usd = Number(usdText);
  if (usdText === "" || !Number.isFinite(usd) || usd < 0) {
    return { ok: false, error: `The daily spending limit must be a number of dollars, 0 or more (got ${JSON.stringify(form.daily_usd.trim())}).` };
  }
  const msText = form.judge_ms.trim();
  const ms = Number(msText);
  if (msText === "" || !Number.isInteger(ms) || ms < 100 || ms > 10_000) {
    return { ok: false, error: `The judge's time limit must be a whole number of milliseconds from 100 to 10000 (got ${JSON.stringify(msText)}).` };
  }
  const judge = form.judge === "true" && form.provider !== "";
  return { ok: true, value: { ...providerFields(form), daily_calls: calls, daily_usd: usd, judge, judge_ms: ms } };
}

/** "$0.0021", "$0.35", "$12.00"; "unknown" for null. */
export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "unknown";
  if (usd === 0) return "$0.00";
  if (Math.abs(usd) < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toFixed(2)}`;
}

/** How full a budget is, 0–100 (a zero budget counts as spent). */
export function usedPercent(used: number, limit: number): number {
  if (!(limit > 0)) return 100;
  return Math.max(0, Math.min(100, Math.round((used / limit) * 100)));
}

/** The meter's two gauges: calls and money against the daily budget. */
export function budgetGauges(today: LlmTotals, budget: LlmBudget) {
  return {
    calls: { used: today.calls, limit: budget.calls, pct: usedPercent(today.calls, budget.calls) },
    cost: { used: today.cost_usd, limit: budget.usd, pct: usedPercent(today.cost_usd, budget.usd) },
  };
}

/** "812 in · 64 out". */
export function formatTokens(input: number, output: number): string {
  return `${input.toLocaleString()} in · ${output.toLocaleString()} out`;
}

/** The test's outcome in one line: the answer, or the error. */
export function describeTest(res: LlmTestRes): string {
  if (res.ok) return `${res.provider} (${res.model}) answered ${JSON.stringify(res.answer)}`;
  return res.error ?? `${res.provider} gave no valid answer`;
}

/** A distillation run in one sentence; "nothing settled" when there was nothing to do. */
export function describeDistill(r: DistillReport): string {
  if (r.windows === 0 && r.calls === 0) {
    return r.stopped ? `Nothing distilled: ${r.stopped}.` : "Nothing settled: no conversation is waiting to be distilled.";
  }
  const windows = `${r.windows} ${r.windows === 1 ? "window" : "windows"}`;
  const kept = `${r.items_kept} ${r.items_kept === 1 ? "item" : "items"} kept`;
  const dropped = `${r.items_dropped} dropped`;
  const calls = `${r.calls} model ${r.calls === 1 ? "call" : "calls"}`;
  const base = `${windows} distilled: ${kept}, ${dropped}; ${calls}, ${formatUsd(r.cost_usd)}.`;
  return r.stopped ? `${base} Stopped: ${r.stopped}.` : base;
}
