// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ConfigView = { 
/**
 * The config file's path.
 */
path: string, 
/**
 * The effective settings as TOML.
 */
effective: string, };
