// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SkillsReq = { 
/**
 * The project identity (as capture computes it).
 */
project: string, 
/**
 * `claude-code`, `codex`, `opencode`, `gemini-cli`, `qwen-code` or `cursor`.
 */
framework: string, 
/**
 * The project's working folder (absolute), where the instruction file lives.
 */
dir: string, 
/**
 * For `skills_write`: remove Cairn's section instead of writing it.
 */
remove: boolean, };
