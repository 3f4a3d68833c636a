// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { AgentFound } from "./AgentFound";

export type AgentsFound = { 
/**
 * The agents.
 */
agents: Array<AgentFound>, };
