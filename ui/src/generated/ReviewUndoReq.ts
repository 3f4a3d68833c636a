// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewUndoReq = { 
/**
 * The action's id (`rv_…`).
 */
action: string, };
