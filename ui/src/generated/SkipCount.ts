// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SkipCount = { 
/**
 * The reason, as a short phrase.
 */
reason: string, 
/**
 * How many.
 */
count: number, };
