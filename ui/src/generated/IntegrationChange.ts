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
notes: Array<string>, 
/**
 * What was done to Cairn's hooks (same words as `action`); absent when the framework
 * takes no hook.
 */
hooks?: string, 
/**
 * The hook file (or OpenCode plugin file) edited.
 */
hooks_path?: string, 
/**
 * The backup of the hook file made before editing it.
 */
hooks_backup?: string, 
/**
 * What the user must still do by hand (Codex: open `codex` once and trust the hooks).
 */
manual?: string, };
