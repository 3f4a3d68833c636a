import { describe, expect, it } from "vitest";
import { ApiError, codeForHttpStatus, describeError, isApiErrorBody, toApiError } from "./api-error";

describe("ApiError", () => {
  it("carries code, message and status", () => {
    const e = new ApiError("conflict", "already running", { status: 409 });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("ApiError");
    expect(e.code).toBe("conflict");
    expect(e.message).toBe("already running");
    expect(e.status).toBe(409);
    expect(e.unreachable).toBe(false);
  });
});

describe("isApiErrorBody", () => {
  it("accepts only {code, message} with a known code", () => {
    expect(isApiErrorBody({ code: "memory_off", message: "m" })).toBe(true);
    expect(isApiErrorBody({ code: "teapot", message: "m" })).toBe(false);
    expect(isApiErrorBody({ code: "internal" })).toBe(false);
    expect(isApiErrorBody("internal")).toBe(false);
    expect(isApiErrorBody(null)).toBe(false);
  });
});

describe("toApiError", () => {
  it("converts a Tauri-style {code, message} rejection", () => {
    const e = toApiError({ code: "not_found", message: "no such item" });
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("not_found");
    expect(e.message).toBe("no such item");
  });

  it("returns ApiErrors unchanged and wraps anything else as internal", () => {
    const original = new ApiError("bad_request", "x");
    expect(toApiError(original)).toBe(original);
    const wrapped = toApiError(new TypeError("boom"));
    expect(wrapped.code).toBe("internal");
    expect(wrapped.message).toBe("boom");
    expect(toApiError("plain string").message).toBe("plain string");
    expect(describeError({ code: "memory_off", message: "Memory is off" })).toBe("Memory is off");
  });
});

describe("codeForHttpStatus", () => {
  it("classifies bodies-less HTTP failures", () => {
    expect(codeForHttpStatus(401)).toBe("unauthorized");
    expect(codeForHttpStatus(404)).toBe("not_found");
    expect(codeForHttpStatus(409)).toBe("conflict");
    expect(codeForHttpStatus(503)).toBe("unavailable");
    expect(codeForHttpStatus(500)).toBe("internal");
  });
});
