import { toApiError, type ApiError } from "./api-error";

/**
 * Where a list a view loads from the service stands: loading, loaded at least once, and the
 * latest failure. Only the latest request counts: an earlier one that answers later is
 * ignored, so a slow answer never replaces a newer list.
 */
export class ListLoad {
  loading = $state(false);
  /** A request has succeeded since the list was created or reset. */
  loaded = $state(false);
  error = $state<ApiError | null>(null);

  #seq = 0;

  /** Forgets what was loaded, e.g. before another list takes this one's place. */
  reset(): void {
    this.loaded = false;
    this.error = null;
  }

  /** Sends `request`; while it is still the latest, hands its answer to `apply`. */
  async run<T>(request: () => Promise<T>, apply: (res: T) => void): Promise<void> {
    const seq = ++this.#seq;
    this.loading = true;
    try {
      const res = await request();
      if (seq !== this.#seq) return;
      apply(res);
      this.error = null;
      this.loaded = true;
    } catch (err) {
      if (seq !== this.#seq) return;
      this.error = toApiError(err);
    } finally {
      if (seq === this.#seq) this.loading = false;
    }
  }
}
