// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type NotePrecondition = { "type": "content_sha256", 
/**
 * The expected hash.
 */
content_sha256: string, };
