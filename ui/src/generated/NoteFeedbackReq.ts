// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NoteFeedbackReq = { 
/**
 * The turn (`t_…`, or `last`).
 */
turn: string, 
/**
 * The entry's id.
 */
id: string, 
/**
 * `not_useful` or `useful`; none removes the label.
 */
label: string | null, };
