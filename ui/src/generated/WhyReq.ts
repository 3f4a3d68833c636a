// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type WhyReq = { 
/**
 * The turn's id (`t_…`), or `last` for the latest turn.
 */
turn: string, };
