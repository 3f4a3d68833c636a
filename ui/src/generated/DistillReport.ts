// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { DistillWindow } from "./DistillWindow";

export type DistillReport = { 
/**
 * Windows distilled.
 */
windows: number, 
/**
 * Settled windows left for later (budget spent, provider failing, memory off).
 */
left: number, 
/**
 * Items kept.
 */
items_kept: number, 
/**
 * Items dropped.
 */
items_dropped: number, 
/**
 * Kept as new items.
 */
created: number, 
/**
 * Merged into known items.
 */
merged: number, 
/**
 * Superseded a known item.
 */
superseded: number, 
/**
 * Related to a known item.
 */
related: number, 
/**
 * Model calls made.
 */
calls: number, 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Answer tokens.
 */
output_tokens: number, 
/**
 * Money spent (US dollars; unknown costs count as 0).
 */
cost_usd: number, 
/**
 * Why the run stopped early, if it did.
 */
stopped: string | null, 
/**
 * Each window.
 */
details: Array<DistillWindow>, };
