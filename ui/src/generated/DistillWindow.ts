// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { DistillDropped } from "./DistillDropped";
import type { DistillKept } from "./DistillKept";

export type DistillWindow = { 
/**
 * The window id.
 */
window: string, 
/**
 * Requests in it.
 */
requests: number, 
/**
 * Items the model proposed.
 */
proposed: number, 
/**
 * Items kept.
 */
kept: Array<DistillKept>, 
/**
 * Items dropped.
 */
dropped: Array<DistillDropped>, 
/**
 * Set when the answer stayed invalid (the window is not asked again).
 */
invalid: string | null, };
