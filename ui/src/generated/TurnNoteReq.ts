// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type TurnNoteReq = { 
/**
 * The framework id, as `cairn integrate --list` names it (`claude-code`, `codex`, …).
 */
framework: string, 
/**
 * The project identity of the turn's working directory.
 */
project: string | null, 
/**
 * The agent's session id: that conversation's own records and items are left out.
 */
session_id: string | null, 
/**
 * The framework's id of this turn, when it gives one.
 */
turn_id: string | null, 
/**
 * The user's message.
 */
prompt: string, 
/**
 * The conversation's latest messages before this one, oldest first (optional: the
 * service also reads the session's captured requests).
 */
context: Array<string>, 
/**
 * Compute and answer, but log nothing (the eval and the bench).
 */
dry_run: boolean, 
/**
 * When the turn happens (RFC 3339), to replay history: what was remembered after it
 * is left out and ages count from it. Default: now.
 */
at: string | null, };
