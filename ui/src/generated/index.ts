// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type { ApiErrorBody } from "./ApiErrorBody";
export type { ClearReport } from "./ClearReport";
export type { ClearReq } from "./ClearReq";
export type { ConfigView } from "./ConfigView";
export type { Counts } from "./Counts";
export type { Empty } from "./Empty";
export type { ErrorCode } from "./ErrorCode";
export type { MemorySetReq } from "./MemorySetReq";
export type { MemoryState } from "./MemoryState";
export type { Preferences } from "./Preferences";
export type { ServiceHost } from "./ServiceHost";
export type { ServiceInfo } from "./ServiceInfo";
export type { Status } from "./Status";
export type { WorkerState } from "./WorkerState";
export type { WorkerStatus } from "./WorkerStatus";
export type { Methods } from "./methods";
export { METHOD_NAMES } from "./methods";
