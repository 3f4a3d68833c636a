// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ExploreEdge } from "./ExploreEdge";
import type { ExploreNode } from "./ExploreNode";

export type ExploreRes = { 
/**
 * The start.
 */
start: ExploreNode, 
/**
 * Everything reached, by depth.
 */
nodes: Array<ExploreNode>, 
/**
 * How they connect.
 */
edges: Array<ExploreEdge>, };
