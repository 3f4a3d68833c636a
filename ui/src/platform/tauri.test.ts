import { beforeEach, describe, expect, it, vi } from "vitest";

// The Tauri IPC is the outside boundary here: replace it with a recorder.
const invoke = vi.fn();
vi.mock("@tauri-apps/api/core", () => ({ invoke: (...args: unknown[]) => invoke(...args) }));
vi.mock("@tauri-apps/plugin-autostart", () => ({
  enable: vi.fn(),
  disable: vi.fn(),
  isEnabled: vi.fn(async () => false),
}));

const { createTauriBackend } = await import("./tauri");
const { ApiError } = await import("../lib/api-error");

describe("tauri backend", () => {
  beforeEach(() => {
    invoke.mockReset();
  });

  it("invokes the single rpc command with method and params", async () => {
    invoke.mockResolvedValue({ enabled: true, changed_at: null });
    const res = await createTauriBackend().call("memory_set", { enabled: true });
    expect(res).toEqual({ enabled: true, changed_at: null });
    expect(invoke).toHaveBeenCalledWith("rpc", { method: "memory_set", params: { enabled: true } });
  });

  it("turns a {code, message} rejection into an ApiError", async () => {
    invoke.mockImplementation(async () => {
      throw { code: "conflict", message: "busy" };
    });
    const err = await createTauriBackend()
      .call("clear", { notes: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as InstanceType<typeof ApiError>).code).toBe("conflict");
    expect((err as InstanceType<typeof ApiError>).message).toBe("busy");
  });
});
