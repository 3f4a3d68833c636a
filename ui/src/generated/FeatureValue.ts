// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type FeatureValue = { 
/**
 * The feature's name.
 */
name: string, 
/**
 * Its value (absent: the signal was missing).
 */
value: number | null, };
