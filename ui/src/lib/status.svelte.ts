import type { MemoryState, Status } from "../generated";
import type { Backend } from "../platform";
import { ApiError, toApiError } from "./api-error";

/** What the status indicator shows. */
export type Indicator = "on" | "off" | "unreachable";

/** Any failure to get a status (network, auth, server error) counts as unreachable. */
export function indicatorFor(status: Status | null, error: ApiError | null): Indicator | null {
  if (error !== null) return "unreachable";
  if (status === null) return null;
  return status.memory.enabled ? "on" : "off";
}

export const INDICATOR_LABELS: Record<Indicator, string> = {
  on: "Memory on",
  off: "Memory off",
  unreachable: "Service unreachable",
};

export const POLL_INTERVAL_MS = 3000;

/** The service status, polled every few seconds and refreshed right after every change. */
export class StatusStore {
  /** Last status the service returned (kept while the service is unreachable). */
  status = $state<Status | null>(null);
  /** Error of the latest status call, null when it succeeded. */
  error = $state<ApiError | null>(null);
  indicator = $derived(indicatorFor(this.status, this.error));
  /** True when the latest status call succeeded, so controls may act. */
  connected = $derived(this.error === null && this.status !== null);

  #backend: Backend;
  #intervalMs: number;
  #seq = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #shouldPoll: () => boolean;

  /**
   * `shouldPoll` is asked before each timed poll (e.g. skip while the window is hidden);
   * explicit `refresh()` calls always go through.
   */
  constructor(backend: Backend, intervalMs = POLL_INTERVAL_MS, shouldPoll: () => boolean = () => true) {
    this.#backend = backend;
    this.#intervalMs = intervalMs;
    this.#shouldPoll = shouldPoll;
  }

  /** Fetches the status now. A newer refresh supersedes an older one still in flight. */
  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    try {
      const status = await this.#backend.call("status", {});
      if (seq !== this.#seq) return;
      this.status = status;
      this.error = null;
    } catch (err) {
      if (seq !== this.#seq) return;
      this.error = toApiError(err);
    }
  }

  /** Applies a memory state returned by `memory_set` before the next status arrives. */
  applyMemory(memory: MemoryState): void {
    if (this.status !== null) this.status = { ...this.status, memory };
  }

  /** Starts polling; returns a function that stops it. */
  start(): () => void {
    if (this.#running) return () => this.stop();
    this.#running = true;
    let first = true;
    const tick = async () => {
      if (first || this.#shouldPoll()) await this.refresh();
      first = false;
      if (this.#running) this.#timer = setTimeout(tick, this.#intervalMs);
    };
    void tick();
    return () => this.stop();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
