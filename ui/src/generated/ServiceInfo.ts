// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ServiceHost } from "./ServiceHost";

export type ServiceInfo = { 
/**
 * Its process id.
 */
pid: number, 
/**
 * When it started (RFC 3339).
 */
started_at: string, 
/**
 * The loopback address of its HTTP API, when it serves one.
 */
address: string | null, 
/**
 * Which kind of process it is.
 */
host: ServiceHost, };
