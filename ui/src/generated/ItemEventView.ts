// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ItemView } from "./ItemView";

export type ItemEventView = { 
/**
 * Position in the long-term log.
 */
seq: number, 
/**
 * When (RFC 3339).
 */
at: string, 
/**
 * created, merged, updated, superseded, archived, restored, used.
 */
kind: string, 
/**
 * Why, in a few words.
 */
reason: string | null, 
/**
 * The item's state after the event.
 */
item: ItemView, };
