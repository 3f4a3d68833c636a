import { afterEach, describe, expect, it, vi } from "vitest";
import type { CaptureReport, Methods } from "../generated";
import type { Backend } from "../platform/backend";
import { ApiError } from "./api-error";
import { CaptureRunner } from "./capture.svelte";

const REPORT: CaptureReport = { started_at: "2025-01-01T00:00:00Z", duration_ms: 12, frameworks: [], warnings: [], secrets_redacted: 0, cloned_histories: [] };

function backendAnswering(answer: () => Promise<unknown>): Backend & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async call<M extends keyof Methods>(method: M): Promise<Methods[M]["res"]> {
      calls.push(method);
      return (await answer()) as Methods[M]["res"];
    },
  };
}

describe("CaptureRunner", () => {
  afterEach(() => vi.useRealTimers());

  it("runs capture_run once at a time and polls status while it runs", async () => {
    vi.useFakeTimers();
    let finish: (r: CaptureReport) => void = () => {};
    const backend = backendAnswering(() => new Promise((r) => (finish = r)));
    const status = { refresh: vi.fn(async () => {}) };
    const runner = new CaptureRunner(1000);

    const first = runner.run(backend, status);
    expect(runner.busy).toBe(true);
    await expect(runner.run(backend, status)).resolves.toBeNull();
    expect(backend.calls).toEqual(["capture_run"]);

    await vi.advanceTimersByTimeAsync(3000);
    expect(status.refresh).toHaveBeenCalledTimes(3);

    finish(REPORT);
    await expect(first).resolves.toEqual(REPORT);
    expect(runner.busy).toBe(false);
    expect(runner.report).toEqual(REPORT);
    expect(status.refresh).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(5000);
    expect(status.refresh).toHaveBeenCalledTimes(4);
  });

  it("keeps the error (memory_off) and clears it on the next success", async () => {
    let fail = true;
    const backend = backendAnswering(async () => {
      if (fail) throw new ApiError("memory_off", "memory is off: capture is stopped");
      return REPORT;
    });
    const runner = new CaptureRunner();
    const status = { refresh: async () => {} };
    await expect(runner.run(backend, status)).resolves.toBeNull();
    expect(runner.error?.code).toBe("memory_off");
    expect(runner.busy).toBe(false);
    fail = false;
    await runner.run(backend, status);
    expect(runner.error).toBeNull();
  });
});
