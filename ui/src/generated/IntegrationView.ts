// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { IntegrationBackup } from "./IntegrationBackup";

export type IntegrationView = { 
/**
 * The framework (`claude-code`, `codex`, …).
 */
framework: string, 
/**
 * Its config file.
 */
path: string, 
/**
 * Whether the framework seems installed (its home exists).
 */
detected: boolean, 
/**
 * Whether the config file exists.
 */
exists: boolean, 
/**
 * Whether Cairn is registered there.
 */
installed: boolean, 
/**
 * Whether the registration runs this Cairn binary (false: stale path).
 */
current: boolean, 
/**
 * The copies of the config file Cairn made before changing it, newest first (only the
 * newest few are kept; each is readable by the owner only).
 */
backups: Array<IntegrationBackup>, 
/**
 * Cairn's hooks there (the turn note, the note titles at session start): `installed`,
 * `outdated` (all there, some run another Cairn binary), `partial`, `not_installed`;
 * absent when the framework takes no hook (see `hooks_note`).
 */
hooks?: string, 
/**
 * The hook file (or OpenCode plugin file) Cairn edits.
 */
hooks_path?: string, 
/**
 * Why the framework takes no hook, or why its hook file cannot be read.
 */
hooks_note?: string, 
/**
 * What the user must do by hand once Cairn is installed (Codex: trust the hooks).
 */
manual?: string, };
