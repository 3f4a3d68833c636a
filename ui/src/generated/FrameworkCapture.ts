// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { SkipCount } from "./SkipCount";

export type FrameworkCapture = { 
/**
 * The framework (`claude-code`, …).
 */
framework: string, 
/**
 * Session files or stores read (changed since the last pass).
 */
sessions: number, 
/**
 * Records added.
 */
added: number, 
/**
 * Records stored again because the turn went on.
 */
revised: number, 
/**
 * Files or stores skipped, lines or rows skipped: each with its reason.
 */
skipped: Array<SkipCount>, };
