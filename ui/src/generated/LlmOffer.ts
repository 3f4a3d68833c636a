// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmOffer = { 
/**
 * A name for people (`Qwen2.5-1.5B-Instruct (Q4_K_M)`).
 */
name: string, 
/**
 * The Hugging Face repository.
 */
repo: string, 
/**
 * The pinned commit.
 */
revision: string, 
/**
 * The GGUF file.
 */
file: string, 
/**
 * Where it is downloaded from (`HF_ENDPOINT` moves it to a mirror).
 */
url: string, 
/**
 * Its pinned sha256: a download that hashes otherwise is refused.
 */
sha256: string, 
/**
 * The licence (SPDX).
 */
licence: string, 
/**
 * The download's size in bytes.
 */
size_bytes: number, 
/**
 * The memory needed to run it, in bytes (see `memory_note`).
 */
memory_bytes: number, 
/**
 * How `memory_bytes` is estimated.
 */
memory_note: string, 
/**
 * Its pace on this machine as last measured (one line), `None` before its first call.
 */
speed: string | null, 
/**
 * The pace, or "measured after the first call" when it has not run here yet.
 */
speed_note: string, 
/**
 * True when the file is in Cairn's model cache, checked against its sha256.
 */
downloaded: boolean, 
/**
 * Where the file is (or will be once downloaded).
 */
path: string, 
/**
 * True when `llm.provider` is `local` with this file as `llm.model_path`.
 */
in_use: boolean, 
/**
 * True while a download of it runs (its progress is on the worker board, `models`).
 */
downloading: boolean, };
