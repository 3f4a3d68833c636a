// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { AgentFound } from "./AgentFound";

export type AgentsFound = { 
/**
 * The agents.
 */
agents: Array<AgentFound>, 
/**
 * History files found inside projects that came with cloned repositories and are not
 * captured (committed by someone else, unchanged here), by path.
 */
cloned_histories: Array<string>, };
