// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ProfileTimelineEntry = { 
/**
 * `YYYY-MM-DD`.
 */
date: string, 
/**
 * What happened or held from then.
 */
text: string, };
