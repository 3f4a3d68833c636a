// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ErrorCode = "bad_request" | "unauthorized" | "not_found" | "conflict" | "memory_off" | "forbidden" | "unavailable" | "internal";
