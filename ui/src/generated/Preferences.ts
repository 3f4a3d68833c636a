// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type Preferences = { 
/**
 * Launch Cairn at login (off by default).
 */
autostart: boolean, };
