// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ErrorCode } from "./ErrorCode";

export type ApiErrorBody = { 
/**
 * The kind of failure, to branch on.
 */
code: ErrorCode, 
/**
 * A sentence for people.
 */
message: string, };
