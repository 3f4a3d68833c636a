// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IntegrationSetReq = { 
/**
 * The framework.
 */
framework: string, 
/**
 * Install (true) or remove (false).
 */
installed: boolean, };
