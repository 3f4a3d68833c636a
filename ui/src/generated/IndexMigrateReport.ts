// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IndexMigrateReport = { 
/**
 * The backend the vectors went to.
 */
to: string, 
/**
 * Its URL.
 */
url: string, 
/**
 * Points written there (from the store's vectors; no model call).
 */
points: number, 
/**
 * Points the collection holds afterwards.
 */
collection_points: number, 
/**
 * The config file that now names the new backend.
 */
config_file: string, 
/**
 * How long it took, in milliseconds.
 */
duration_ms: number, };
