import type { Methods } from "../generated";
import { ApiError, codeForHttpStatus, isApiErrorBody } from "../lib/api-error";
import type { Backend } from "./backend";

export type WebBackendOptions = {
  /** Bearer token from the address printed by `cairn daemon`; null sends no Authorization. */
  token: string | null;
  /** Origin (or path prefix) of the service; "" means same origin. */
  baseUrl?: string;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Per-call timeout in milliseconds. */
  timeoutMs?: number;
};

/** Methods that may take long, with the least time they are given. */
const SLOW_METHODS: Partial<Record<keyof Methods, number>> = {
  clear: 120_000,
  // The first pass on a machine with years of sessions reads them all.
  capture_run: 30 * 60_000,
  // One tiny request to a model provider: the service gives it at most 100 s.
  llm_test: 110_000,
  // Every settled conversation window, one model request each, within the day's budget.
  distill_now: 60 * 60_000,
  // Every window of the log again (or since a date), with the current provider and prompts.
  distill_rebuild: 60 * 60_000,
  // Relate, re-score, archive and rewrite changed profiles (one model call each).
  sleep_now: 60 * 60_000,
  // The offered local model (1.1 GB), downloaded and checked against its sha256.
  llm_download: 2 * 60 * 60_000,
};

/** Talks to the service over HTTP: `POST /api/rpc/<method>` with a JSON body. */
export function createWebBackend(options: WebBackendOptions): Backend {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = (options.baseUrl ?? "").replace(/\/+$/, "");
  const defaultTimeout = options.timeoutMs ?? 15_000;

  return {
    async call<M extends keyof Methods>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]> {
      const headers: Record<string, string> = {
        "Content-Type": "application/json",
        Accept: "application/json",
      };
      if (options.token) headers.Authorization = `Bearer ${options.token}`;
      const timeout = Math.max(defaultTimeout, SLOW_METHODS[method] ?? 0);

      let response: Response;
      try {
        response = await doFetch(`${base}/api/rpc/${encodeURIComponent(method)}`, {
          method: "POST",
          headers,
          body: JSON.stringify(req ?? {}),
          credentials: "omit",
          cache: "no-store",
          signal: AbortSignal.timeout(timeout),
        });
      } catch (err) {
        throw new ApiError("unavailable", "Cannot reach the Cairn service.", {
          unreachable: true,
          cause: err,
        });
      }

      const text = await response.text().catch(() => "");
      let body: unknown = undefined;
      if (text !== "") {
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
      }

      if (!response.ok) {
        if (isApiErrorBody(body)) {
          throw new ApiError(body.code, body.message, { status: response.status });
        }
        const fallback = text.trim().slice(0, 200) || response.statusText || `HTTP ${response.status}`;
        throw new ApiError(codeForHttpStatus(response.status), fallback, { status: response.status });
      }
      if (body === undefined) {
        throw new ApiError("internal", `The service sent an invalid response to ${method}.`, {
          status: response.status,
        });
      }
      return body as Methods[M]["res"];
    },
  };
}
