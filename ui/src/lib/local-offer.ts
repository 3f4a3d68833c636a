import type { LlmOffer, WorkerStatus } from "../generated";

/** The worker board's name for model downloads. */
export const MODELS_WORKER = "models";

/** Bytes in decimal gigabytes (`1.1 GB`), as the CLI and docs/guide.md give the offer's figures. */
export function gigabytes(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/** The download's progress from the worker board, in percent, while it runs; null otherwise. */
export function downloadPercent(workers: WorkerStatus[]): number | null {
  const w = workers.find((w) => w.name === MODELS_WORKER);
  if (!w || w.state !== "running" || w.progress === null) return null;
  return Math.max(0, Math.min(100, Math.round(w.progress * 1000) / 10));
}

/** The figures the offer shows before a download, one line each. */
export function offerFacts(offer: LlmOffer): { label: string; value: string; title?: string }[] {
  return [
    { label: "Size", value: gigabytes(offer.size_bytes) },
    { label: "Memory", value: `about ${gigabytes(offer.memory_bytes)}`, title: offer.memory_note },
    { label: "Speed", value: offer.speed ?? offer.speed_note },
    { label: "Licence", value: offer.licence },
  ];
}
