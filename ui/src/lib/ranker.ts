// The turn note's ranker as Settings shows it (ranker_status, ranker_reset): which model is in
// use, its bar and its figures in words.
import type { RankerFigures, RankerStatus } from "../generated";

/** A share as a whole percentage, or a dash when unknown. */
export function share(v: number | null): string {
  return v === null || !Number.isFinite(v) ? "—" : `${Math.round(v * 100)}%`;
}

/** The model in use, in words. */
export function modelLabel(s: RankerStatus): string {
  if (s.model !== "personal") return "Shipped model";
  return s.source === "store" ? "Personal model (trained on your turn notes)" : "Personal model";
}

/** One model's figures: precision, hit rate, silence at its bar, and AUC. */
export function figuresLine(f: RankerFigures): string {
  const parts = [
    `precision ${share(f.precision)}`,
    `hit rate ${share(f.hit_rate)}`,
    `silence ${share(f.silence)}`,
    `AUC ${f.auc === null ? "—" : f.auc.toFixed(3)}`,
  ];
  if (f.requests !== null) parts.push(`${f.requests} requests`);
  return `At bar ${f.bar.toFixed(2)}: ${parts.join(", ")}`;
}
