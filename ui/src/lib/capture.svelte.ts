import type { CaptureReport } from "../generated";
import type { Backend } from "../platform";
import { toApiError, type ApiError } from "./api-error";

/** What the runner needs from the status store: a way to refresh it. */
export type Refreshable = { refresh(): Promise<void> };

/**
 * "Capture now": one `capture_run` call at a time, shared by every view that offers the
 * button, with the status refreshed every `pollMs` while it runs (so the capture worker's
 * progress shows) and once more when it ends.
 */
export class CaptureRunner {
  busy = $state(false);
  /** The failure of the latest run (`memory_off` when memory is off), null after a success. */
  error = $state<ApiError | null>(null);
  /** The report of the latest successful run started from this page. */
  report = $state<CaptureReport | null>(null);

  #pollMs: number;

  constructor(pollMs = 1000) {
    this.#pollMs = pollMs;
  }

  /** Runs one capture pass; resolves to its report, or null when it failed or one is running. */
  async run(backend: Backend, status: Refreshable): Promise<CaptureReport | null> {
    if (this.busy) return null;
    this.busy = true;
    this.error = null;
    const timer = setInterval(() => void status.refresh(), this.#pollMs);
    try {
      const report = await backend.call("capture_run", {});
      this.report = report;
      return report;
    } catch (err) {
      this.error = toApiError(err);
      return null;
    } finally {
      clearInterval(timer);
      this.busy = false;
      void status.refresh();
    }
  }
}

export const capture = new CaptureRunner();
