// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { FrameworkCapture } from "./FrameworkCapture";

export type CaptureReport = { 
/**
 * When it started (RFC 3339).
 */
started_at: string, 
/**
 * How long it took, in milliseconds.
 */
duration_ms: number, 
/**
 * Per framework, for every framework that has a store on this machine.
 */
frameworks: Array<FrameworkCapture>, 
/**
 * Sentences about what went wrong (a few examples; counts are in `skipped`).
 */
warnings: Array<string>, 
/**
 * Secrets replaced by the scrubber before storage.
 */
secrets_redacted: number, 
/**
 * History files found inside projects that came with cloned repositories (committed by
 * someone else, unchanged here) and were not captured, by path. The user lists a folder
 * in `capture.trusted_history_folders` to capture them anyway.
 */
cloned_histories: Array<string>, };
