// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ReviewActReq = { 
/**
 * The entry's key, as the inbox gave it.
 */
entry: string, 
/**
 * `merge`, `supersede`, `archive` or `keep`.
 */
action: string, 
/**
 * For a pair: the subject that stays (the first subject by default). `merge` folds the
 * other into it, `supersede` marks the other replaced by it, `archive` archives the
 * other. For one subject, ignored.
 */
keep: string | null, };
