// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { TurnView } from "./TurnView";

export type OpenedRecord = { 
/**
 * Framework.
 */
framework: string, 
/**
 * Session id.
 */
session_id: string, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * Working directory.
 */
cwd: string | null, 
/**
 * The request with every reply and tool step, whole.
 */
turn: TurnView, 
/**
 * Its position in the conversation (1-based).
 */
position: number, 
/**
 * Requests in the conversation.
 */
session_turns: number, 
/**
 * The requests just before and after it, by id, for context.
 */
neighbours: Array<string>, };
