// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type OpenReq = { 
/**
 * A record id (`r_…`), an item id (`i_…`) or a note id (`n_…`), as search returns them.
 */
id: string, };
