// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { TurnView } from "./TurnView";

export type Conversation = { 
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
 * Every request, oldest first.
 */
turns: Array<TurnView>, };
