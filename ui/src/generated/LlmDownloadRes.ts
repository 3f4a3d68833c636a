// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { LlmOffer } from "./LlmOffer";

export type LlmDownloadRes = { 
/**
 * The offer as it stands after the download.
 */
offer: LlmOffer, 
/**
 * Bytes fetched (0 when the file was already there).
 */
fetched_bytes: number, 
/**
 * How long it took, in milliseconds.
 */
duration_ms: number, };
