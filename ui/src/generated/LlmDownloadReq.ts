// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type LlmDownloadReq = { 
/**
 * Once it is there, make it the model provider (`llm.provider = "local"`,
 * `llm.model_path` = the file), saved in the config file. Left out: settings unchanged.
 */
use_it: boolean, };
