import { describe, expect, it } from "vitest";
import type { DistillReport, LlmStatus, LlmTestRes } from "../generated";
import {
  budgetGauges,
  describeDistill,
  describeTest,
  formChanged,
  formFromStatus,
  formatUsd,
  providerChoices,
  providerInfo,
  settingsRequest,
  testRequest,
  usedPercent,
  type ProviderForm,
} from "./providers";

const STATUS: LlmStatus = {
  provider: "claude-cli",
  model: "",
  base_url: "",
  model_path: "",
  providers: ["claude-cli", "codex-cli", "gemini-cli", "anthropic", "openai", "local"],
  key_stored: null,
  budget: { calls: 200, usd: 1 },
  today: { calls: 3, ok: 2, invalid: 0, failed: 1, refused: 0, input_tokens: 100, output_tokens: 20, cost_usd: 0.25 },
  over_budget: false,
  recent: [],
  judge: false,
  judge_ms: 800,
  local_speed: null,
};

function form(over: Partial<ProviderForm>): ProviderForm {
  return { ...formFromStatus(STATUS), ...over };
}

describe("provider choices", () => {
  it("lists none first, then the service's providers in this page's order", () => {
    const ids = providerChoices(["local", "openai", "claude-cli"]).map((p) => p.id);
    expect(ids).toEqual(["", "claude-cli", "openai", "local"]);
  });

  it("keeps a provider the page does not know", () => {
    expect(providerChoices(["claude-cli", "mistral-cli"]).map((p) => p.id)).toEqual(["", "claude-cli", "mistral-cli"]);
    expect(providerInfo("mistral-cli").label).toBe("mistral-cli");
  });

  it("asks keys of the APIs only, and a file of local only", () => {
    expect(providerInfo("anthropic").key && providerInfo("openai").key).toBe(true);
    expect(providerInfo("claude-cli").key || providerInfo("local").key).toBe(false);
    expect(providerInfo("local").modelPath).toBe(true);
    expect(providerInfo("openai").modelPath).toBe(false);
  });
});

describe("the form", () => {
  it("starts from the settings in effect and notices a change", () => {
    expect(formFromStatus(STATUS).daily_calls).toBe("200");
    expect(formChanged(formFromStatus(STATUS), STATUS)).toBe(false);
    expect(formChanged(form({ provider: "codex-cli" }), STATUS)).toBe(true);
    expect(formChanged(form({ daily_usd: " 1 " }), STATUS)).toBe(false);
  });

  it("tests only the fields the provider takes", () => {
    const r = testRequest(form({ provider: "claude-cli", model: " haiku ", base_url: "http://x", model_path: "/m.gguf" }));
    expect(r).toEqual({ ok: true, value: { provider: "claude-cli", model: "haiku", base_url: "", model_path: "" } });
  });

  it("refuses a base URL that is not a web address, naming it", () => {
    const r = testRequest(form({ provider: "openai", model: "qwen2.5:3b", base_url: "localhost:11434/v1" }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/base URL "localhost:11434\/v1".*http:\/\//);
    expect(testRequest(form({ provider: "openai", model: "m", base_url: "http://127.0.0.1:11434/v1" })).ok).toBe(true);
  });

  it("needs a model for openai and an absolute file for local", () => {
    const noModel = testRequest(form({ provider: "openai", model: "" }));
    expect(!noModel.ok && noModel.error).toMatch(/model's name/);
    const relative = testRequest(form({ provider: "local", model_path: "models/x.gguf" }));
    expect(!relative.ok && relative.error).toMatch(/not absolute/);
    expect(testRequest(form({ provider: "local", model_path: "~/m.gguf" })).ok).toBe(true);
    const none = testRequest(form({ provider: "" }));
    expect(!none.ok && none.error).toMatch(/Choose a provider/);
  });

  it("saves the budget as numbers and refuses one that is not", () => {
    const ok = settingsRequest(form({ daily_calls: " 50 ", daily_usd: "$0.5" }));
    expect(ok).toEqual({
      ok: true,
      value: { provider: "claude-cli", model: "", base_url: "", model_path: "", daily_calls: 50, daily_usd: 0.5, judge: false, judge_ms: 800 },
    });
    const calls = settingsRequest(form({ daily_calls: "2.5" }));
    expect(!calls.ok && calls.error).toMatch(/call limit.*"2.5"/);
    const usd = settingsRequest(form({ daily_usd: "-1" }));
    expect(!usd.ok && usd.error).toMatch(/spending limit.*"-1"/);
    expect(settingsRequest(form({ provider: "", base_url: "nonsense" })).ok).toBe(true);
  });

  it("saves the turn-note judge with its time limit, only with a provider", () => {
    const on = settingsRequest(form({ judge: "true", judge_ms: " 1500 " }));
    expect(on.ok && on.value.judge).toBe(true);
    expect(on.ok && on.value.judge_ms).toBe(1500);
    expect(formChanged(form({ judge: "true" }), STATUS)).toBe(true);
    const none = settingsRequest(form({ provider: "", judge: "true" }));
    expect(none.ok && none.value.judge).toBe(false);
    for (const bad of ["50", "20000", "1.5", ""]) {
      const r = settingsRequest(form({ judge_ms: bad }));
      expect(!r.ok && r.error).toMatch(/judge's time limit/);
    }
  });
});

describe("figures", () => {
  it("formats money, small and large", () => {
    expect(formatUsd(null)).toBe("unknown");
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(0.0021)).toBe("$0.0021");
    expect(formatUsd(1.5)).toBe("$1.50");
  });

  it("fills the meter against the budget, a zero budget being spent", () => {
    expect(usedPercent(1, 200)).toBe(1);
    expect(usedPercent(300, 200)).toBe(100);
    expect(usedPercent(0, 0)).toBe(100);
    const g = budgetGauges(STATUS.today, STATUS.budget);
    expect(g.calls).toEqual({ used: 3, limit: 200, pct: 2 });
    expect(g.cost.pct).toBe(25);
  });

  it("describes a test's answer or its error", () => {
    const res: LlmTestRes = {
      provider: "claude-cli",
      model: "claude-haiku-4-5",
      ok: true,
      answer: { ok: true },
      error: null,
      input_tokens: 812,
      output_tokens: 64,
      cost_usd: 0.0021,
      duration_ms: 2113,
      attempts: 1,
    };
    expect(describeTest(res)).toBe('claude-cli (claude-haiku-4-5) answered {"ok":true}');
    expect(describeTest({ ...res, ok: false, answer: null, error: "claude: not found" })).toBe("claude: not found");
  });

  it("says nothing settled when a run found no window", () => {
    const empty: DistillReport = {
      windows: 0,
      left: 0,
      items_kept: 0,
      items_dropped: 0,
      created: 0,
      merged: 0,
      superseded: 0,
      related: 0,
      calls: 0,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      stopped: null,
      details: [],
    };
    expect(describeDistill(empty)).toMatch(/^Nothing settled/);
    expect(describeDistill({ ...empty, stopped: "the daily budget is spent" })).toBe("Nothing distilled: the daily budget is spent.");
    expect(describeDistill({ ...empty, windows: 2, items_kept: 3, items_dropped: 1, calls: 2, cost_usd: 0.01 })).toBe(
      "2 windows distilled: 3 items kept, 1 dropped; 2 model calls, $0.01.",
    );
  });
});
