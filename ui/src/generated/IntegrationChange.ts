// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IntegrationChange = { 
/**
 * The framework.
 */
framework: string, 
/**
 * The file edited (or that would have been).
 */
path: string, 
/**
 * `installed`, `updated`, `already_installed`, `removed` or `not_installed`.
 */
action: string, 
/**
 * The backup made before editing, if the file existed.
 */
backup: string | null, 
/**
 * Anything worth knowing (a symlinked config edited at its target, …).
 */
notes: Array<string>, };
