import type { MemoryState, Status } from "../generated";
import type { Backend } from "../platform";
import { ApiError, toApiError } from "./api-error";

/** What the status indicator shows. */
export type Indicator = "on" | "off" | "paused" | "unreachable";

/** Any failure to get a status (network, auth, server error) counts as unreachable. */
export function indicatorFor(status: Status | null, error: ApiError | null): Indicator | null {
  if (error !== null) return "unreachable";
  if (status === null) return null;
  if (status.memory.enabled) return "on";
  return status.memory.paused ? "paused" : "off";
}

export const INDICATOR_LABELS: Record<Indicator, string> = {
  on: "Memory on",
  off: "Memory off",
  paused: "Memory paused",
  unreachable: "Service unreachable",
};

/** The ways to pause memory, as `memory_pause` takes them. */
export const PAUSE_CHOICES = [
  { for: "15m", label: "15 minutes" },
  { for: "1h", label: "1 hour" },
  { for: "tomorrow", label: "Until tomorrow" },
  { for: "until_resumed", label: "Until resumed" },
] as const;

/** How long a pause lasts. */
export type PauseChoice = (typeof PAUSE_CHOICES)[number]["for"];

/**
 * "until 14:30", "until tomorrow, 00:00", "until Dec 9, 2026, 09:00" or "until resumed" for a
 * paused memory (in the browser's time zone); null when memory is not paused.
 */
export function pauseUntilText(memory: MemoryState, now: Date = new Date()): string | null {
  if (memory.enabled || !memory.paused) return null;
  if (!memory.paused_until) return "until resumed";
  const until = new Date(memory.paused_until);
  if (Number.isNaN(until.getTime())) return `until ${memory.paused_until}`;
  const time = until.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const dayOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((dayOf(until) - dayOf(now)) / 86_400_000);
  if (days === 0) return `until ${time}`;
  if (days === 1) return `until tomorrow, ${time}`;
  return `until ${until.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}`;
}

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

  /** Pauses memory (throws the API's error), then refreshes the status. */
  async pause(choice: PauseChoice): Promise<void> {
    try {
      this.applyMemory(await this.#backend.call("memory_pause", { for: choice, until: null }));
    } finally {
      void this.refresh();
    }
  }

  /** Ends a pause (or switches memory on), then refreshes the status. */
  async resume(): Promise<void> {
    try {
      this.applyMemory(await this.#backend.call("memory_set", { enabled: true }));
    } finally {
      void this.refresh();
    }
  }

  /** Switches memory on or off (throws the API's error), then refreshes the status. */
  async setMemory(enabled: boolean): Promise<void> {
    try {
      this.applyMemory(await this.#backend.call("memory_set", { enabled }));
    } finally {
      void this.refresh();
    }
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
