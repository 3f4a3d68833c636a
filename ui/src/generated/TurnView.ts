// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type TurnView = { 
/**
 * Record id.
 */
id: string, 
/**
 * The user's request.
 */
request: string, 
/**
 * When (RFC 3339).
 */
started_at: string, 
/**
 * Last activity (RFC 3339).
 */
ended_at: string | null, 
/**
 * How it ended.
 */
outcome: string, 
/**
 * The model.
 */
model: string | null, 
/**
 * Replies and tool steps, in order: objects with `type` = `text` (`text`), `tool`
 * (`name`, `input`, `output`, `is_error`) or `injected` (`source`, `text`).
 */
steps: Array<Record<string, unknown>>, 
/**
 * Whether the end of the turn was seen.
 */
complete: boolean, };
