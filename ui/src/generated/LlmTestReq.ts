// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmTestReq = { 
/**
 * The provider to test instead of `llm.provider`.
 */
provider: string | null, 
/**
 * The model instead of `llm.model`.
 */
model: string | null, 
/**
 * The endpoint instead of `llm.base_url`.
 */
base_url: string | null, 
/**
 * The GGUF file instead of `llm.model_path`.
 */
model_path: string | null, };
