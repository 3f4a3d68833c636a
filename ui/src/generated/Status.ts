// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { CaptureReport } from "./CaptureReport";
import type { Counts } from "./Counts";
import type { MemoryState } from "./MemoryState";
import type { ServiceInfo } from "./ServiceInfo";
import type { WorkerStatus } from "./WorkerStatus";

export type Status = { 
/**
 * Cairn's version.
 */
version: string, 
/**
 * The memory switch.
 */
memory: MemoryState, 
/**
 * Where the data lives.
 */
data_dir: string, 
/**
 * The config file in use.
 */
config_file: string, 
/**
 * How much is remembered.
 */
counts: Counts, 
/**
 * When memory was last cleared (RFC 3339), if ever.
 */
last_clear: string | null, 
/**
 * The process that owns the store.
 */
service: ServiceInfo, 
/**
 * Background workers.
 */
workers: Array<WorkerStatus>, 
/**
 * Problems the user should know about (each a sentence).
 */
warnings: Array<string>, 
/**
 * The last capture pass, if one ran since the service started.
 */
capture: CaptureReport | null, };
