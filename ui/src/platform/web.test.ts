import { describe, expect, it, vi } from "vitest";
import type { Status } from "../generated";
import { ApiError } from "../lib/api-error";
import { createWebBackend } from "./web";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function stubFetch(response: Response | Error) {
  return vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit): Promise<Response> => {
    if (response instanceof Error) throw response;
    return response;
  });
}

describe("web backend", () => {
  it("POSTs the request as JSON to /api/rpc/<method> with the bearer token", async () => {
    const fetch = stubFetch(jsonResponse(200, { enabled: false, changed_at: "2025-01-01T00:00:00Z" }));
    const backend = createWebBackend({ token: "tok-1", fetch });

    const res = await backend.call("memory_set", { enabled: false });

    expect(res).toEqual({ enabled: false, changed_at: "2025-01-01T00:00:00Z" });
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("/api/rpc/memory_set");
    expect(init?.method).toBe("POST");
    expect(JSON.parse(String(init?.body))).toEqual({ enabled: false });
    const headers = init?.headers as Record<string, string>;
    expect(headers.Authorization).toBe("Bearer tok-1");
    expect(headers["Content-Type"]).toBe("application/json");
  });

  it("sends {} for Empty requests and honours a base URL", async () => {
    const body = { version: "1" } as unknown as Status;
    const fetch = stubFetch(jsonResponse(200, body));
    const backend = createWebBackend({ token: "t", fetch, baseUrl: "http://127.0.0.1:9/" });
    await expect(backend.call("status", {})).resolves.toEqual(body);
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("http://127.0.0.1:9/api/rpc/status");
    expect(init?.body).toBe("{}");
  });

  it("sends no Authorization header without a token", async () => {
    const fetch = stubFetch(jsonResponse(200, { autostart: false }));
    await createWebBackend({ token: null, fetch }).call("preferences_get", {});
    const headers = fetch.mock.calls[0]![1]?.headers as Record<string, string>;
    expect(headers).not.toHaveProperty("Authorization");
  });

  it("throws ApiError with the code and message of a {code, message} error body", async () => {
    const fetch = stubFetch(jsonResponse(409, { code: "memory_off", message: "Memory is off" }));
    const err = await createWebBackend({ token: "t", fetch })
      .call("clear", { notes: false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect([e.code, e.message, e.status, e.unreachable]).toEqual(["memory_off", "Memory is off", 409, false]);
  });

  it("maps a 401 to unauthorized even without a JSON body", async () => {
    const fetch = stubFetch(new Response("nope", { status: 401, statusText: "Unauthorized" }));
    const err = await createWebBackend({ token: "bad", fetch })
      .call("status", {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("unauthorized");
    expect((err as ApiError).status).toBe(401);
  });

  it("reports a network failure as an unreachable service", async () => {
    const fetch = stubFetch(new TypeError("Failed to fetch"));
    const err = await createWebBackend({ token: "t", fetch })
      .call("status", {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).unreachable).toBe(true);
    expect((err as ApiError).code).toBe("unavailable");
  });

  it("rejects a 2xx answer that is not JSON", async () => {
    const fetch = stubFetch(new Response("<html>", { status: 200 }));
    const err = await createWebBackend({ token: "t", fetch })
      .call("status", {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("internal");
  });

  it("gives the model test and distillation the time they may take", async () => {
    const timeout = vi.spyOn(AbortSignal, "timeout");
    try {
      const fetch = vi.fn(async () => jsonResponse(200, {}));
      const backend = createWebBackend({ token: "t", fetch });
      await backend.call("status", {});
      await backend.call("llm_test", { provider: null, model: null, base_url: null, model_path: null });
      await backend.call("distill_now", {});
      expect(timeout.mock.calls.map((c) => c[0])).toEqual([15_000, 110_000, 3_600_000]);
    } finally {
      timeout.mockRestore();
    }
  });
});
