// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type IndexMigrateReq = { 
/**
 * Where to: `remote` (a Qdrant server or cluster).
 */
to: string, 
/**
 * Its gRPC URL (`https://qdrant.example.com:6334`); the config's `index.url` by default.
 */
url: string | null, };
