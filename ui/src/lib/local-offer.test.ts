import { describe, expect, it } from "vitest";
import type { LlmOffer, WorkerStatus } from "../generated";
import { downloadPercent, offerFacts } from "./local-offer";

const offer: LlmOffer = {
  name: "Qwen2.5-1.5B-Instruct (Q4_K_M)",
  repo: "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
  revision: "91cad51170dc346986eccefdc2dd33a9da36ead9",
  file: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
  url: "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf",
  sha256: "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
  licence: "Apache-2.0",
  size_bytes: 1_117_320_736,
  memory_bytes: 8_987_400_192,
  memory_note: "7.1 GB of weights … plus 1.9 GB of key-value cache",
  speed: null,
  speed_note: "measured after the first call",
  downloaded: false,
  path: "/data/models/qwen2.5-1.5b-instruct/qwen2.5-1.5b-instruct-q4_k_m.gguf",
  in_use: false,
  downloading: false,
};

function worker(state: WorkerStatus["state"], progress: number | null, name = "models"): WorkerStatus {
  return { name, state, detail: null, progress, last_run: null };
}

describe("the local model offer", () => {
  it("shows size, memory, speed and licence before any download", () => {
    expect(offerFacts(offer)).toEqual([
      { label: "Size", value: "1.1 GB" },
      { label: "Memory", value: "about 9.0 GB", title: offer.memory_note },
      { label: "Speed", value: "measured after the first call" },
      { label: "Licence", value: "Apache-2.0" },
    ]);
    const measured = { ...offer, speed: "reads 90 prompt tokens/s, writes 6.0 answer tokens/s" };
    expect(offerFacts(measured)[2]?.value).toBe(measured.speed);
  });

  it("reads the download's progress from the models worker only while it runs", () => {
    expect(downloadPercent([worker("running", 0.4567)])).toBe(45.7);
    expect(downloadPercent([worker("idle", 1)])).toBeNull();
    expect(downloadPercent([worker("running", null)])).toBeNull();
    expect(downloadPercent([worker("running", 0.5, "capture")])).toBeNull();
    expect(downloadPercent([worker("running", 1.5)])).toBe(100);
  });
});
