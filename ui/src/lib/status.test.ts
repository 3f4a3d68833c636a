import { afterEach, describe, expect, it, vi } from "vitest";
import type { Methods, Status } from "../generated";
import type { Backend } from "../platform/backend";
import { ApiError } from "./api-error";
import { indicatorFor, pauseUntilText, StatusStore } from "./status.svelte";

function status(enabled: boolean): Status {
  return {
    version: "0.1.0",
    memory: { enabled, changed_at: null, paused: false, paused_until: null },
    data_dir: "/d",
    config_file: "/d/config.toml",
    counts: { records: 0, chunks: 0, items: 0, notes: 0 },
    last_clear: null,
    service: { pid: 1, started_at: "2025-01-01T00:00:00Z", address: null, host: "daemon" },
    workers: [],
    warnings: [],
    capture: null,
  };
}

function fakeBackend(answers: Array<Status | Error>): Backend & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async call<M extends keyof Methods>(method: M): Promise<Methods[M]["res"]> {
      calls.push(method);
      const next = answers.length > 1 ? answers.shift() : answers[0];
      if (next instanceof Error) throw next;
      return next as Methods[M]["res"];
    },
  };
}

describe("indicatorFor", () => {
  it("maps status and errors to on / off / unreachable", () => {
    expect(indicatorFor(null, null)).toBeNull();
    expect(indicatorFor(status(true), null)).toBe("on");
    expect(indicatorFor(status(false), null)).toBe("off");
    expect(indicatorFor(status(true), new ApiError("unauthorized", "no"))).toBe("unreachable");
    expect(indicatorFor(null, new ApiError("unavailable", "down", { unreachable: true }))).toBe("unreachable");
  });
});

describe("StatusStore", () => {
  afterEach(() => vi.useRealTimers());

  it("polls status on an interval and reflects errors", async () => {
    vi.useFakeTimers();
    const backend = fakeBackend([status(true), new ApiError("unauthorized", "no token"), status(false)]);
    const store = new StatusStore(backend, 3000);
    const stop = store.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.calls).toEqual(["status"]);
    expect(store.indicator).toBe("on");
    expect(store.connected).toBe(true);

    await vi.advanceTimersByTimeAsync(2999);
    expect(backend.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.calls).toHaveLength(2);
    expect(store.indicator).toBe("unreachable");
    expect(store.error?.code).toBe("unauthorized");
    expect(store.connected).toBe(false);

    await vi.advanceTimersByTimeAsync(3000);
    expect(store.indicator).toBe("off");
    expect(store.error).toBeNull();

    stop();
    await vi.advanceTimersByTimeAsync(30000);
    expect(backend.calls).toHaveLength(3);
  });

  it("skips timed polls while shouldPoll says no, but not the first one", async () => {
    vi.useFakeTimers();
    let visible = false;
    const backend = fakeBackend([status(true)]);
    const store = new StatusStore(backend, 1000, () => visible);
    const stop = store.start();
    await vi.advanceTimersByTimeAsync(5500);
    expect(backend.calls).toHaveLength(1);
    visible = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(backend.calls).toHaveLength(2);
    stop();
  });

  it("applies a memory_set answer immediately", async () => {
    const store = new StatusStore(fakeBackend([status(true)]));
    await store.refresh();
    store.applyMemory({ enabled: false, changed_at: "2025-01-02T00:00:00Z", paused: false, paused_until: null });
    expect(store.indicator).toBe("off");
    expect(store.status?.memory.changed_at).toBe("2025-01-02T00:00:00Z");
  });

  it("ignores an older status answer that arrives after a newer one", async () => {
    let resolveFirst: (s: Status) => void = () => {};
    let n = 0;
    const backend: Backend = {
      async call<M extends keyof Methods>(): Promise<Methods[M]["res"]> {
        n += 1;
        if (n === 1) return new Promise<Status>((r) => (resolveFirst = r)) as Promise<Methods[M]["res"]>;
        return status(false) as Methods[M]["res"];
      },
    };
    const store = new StatusStore(backend);
    const first = store.refresh();
    await store.refresh();
    resolveFirst(status(true));
    await first;
    expect(store.indicator).toBe("off");
  });
});

describe("memory pause", () => {
  const paused = (until: string | null) => ({ enabled: false, changed_at: null, paused: true, paused_until: until });

  it("shows a paused memory as paused, not off", () => {
    const s = status(false);
    expect(indicatorFor({ ...s, memory: paused(null) }, null)).toBe("paused");
    expect(indicatorFor(s, null)).toBe("off");
  });

  it("says until when, in local time", () => {
    const now = new Date(2026, 11, 2, 10, 0);
    const at = (d: Date) => d.toISOString();
    const time = (d: Date) => d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
    const soon = new Date(2026, 11, 2, 10, 15);
    expect(pauseUntilText(paused(at(soon)), now)).toBe(`until ${time(soon)}`);
    const midnight = new Date(2026, 11, 3, 0, 0);
    expect(pauseUntilText(paused(at(midnight)), now)).toBe(`until tomorrow, ${time(midnight)}`);
    expect(pauseUntilText(paused(at(new Date(2026, 11, 9, 9, 0))), now)).toMatch(/^until .*2026/);
    expect(pauseUntilText(paused(null), now)).toBe("until resumed");
    expect(pauseUntilText(status(false).memory, now)).toBeNull();
    expect(pauseUntilText(status(true).memory, now)).toBeNull();
  });

  it("pauses and resumes through the API, then refreshes", async () => {
    const calls: Array<[string, unknown]> = [];
    const backend: Backend = {
      async call<M extends keyof Methods>(method: M, params: Methods[M]["req"]): Promise<Methods[M]["res"]> {
        calls.push([method, params]);
        if (method === "memory_pause") return paused("2026-12-02T10:15:00Z") as Methods[M]["res"];
        if (method === "memory_set") return status(true).memory as Methods[M]["res"];
        return status(true) as Methods[M]["res"];
      },
    };
    const store = new StatusStore(backend);
    await store.refresh();
    await store.pause("1h");
    expect(calls[1]).toEqual(["memory_pause", { for: "1h", until: null }]);
    await store.resume();
    expect(calls.some(([m, p]) => m === "memory_set" && JSON.stringify(p) === '{"enabled":true}')).toBe(true);
    expect(calls.filter(([m]) => m === "status").length).toBeGreaterThanOrEqual(2);
  });

  it("switches memory off through memory_set (the palette's Turn memory off), then refreshes", async () => {
    const calls: Array<[string, unknown]> = [];
    const backend: Backend = {
      async call<M extends keyof Methods>(method: M, params: Methods[M]["req"]): Promise<Methods[M]["res"]> {
        calls.push([method, params]);
        if (method === "memory_set") return status(false).memory as Methods[M]["res"];
        return status(true) as Methods[M]["res"];
      },
    };
    const store = new StatusStore(backend);
    await store.refresh();
    await store.setMemory(false);
    expect(calls[1]).toEqual(["memory_set", { enabled: false }]);
    expect(calls.filter(([m]) => m === "status").length).toBeGreaterThanOrEqual(2);
  });

  it("setMemory passes the API's error on", async () => {
    const backend: Backend = {
      async call<M extends keyof Methods>(method: M): Promise<Methods[M]["res"]> {
        if (method === "memory_set") throw new Error("service unreachable");
        return status(true) as Methods[M]["res"];
      },
    };
    const store = new StatusStore(backend);
    await expect(store.setMemory(false)).rejects.toThrow("service unreachable");
  });
});
