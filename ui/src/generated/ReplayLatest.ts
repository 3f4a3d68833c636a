// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ReplayReport } from "./ReplayReport";

export type ReplayLatest = { 
/**
 * None when no replay has run.
 */
report: ReplayReport | null, };
