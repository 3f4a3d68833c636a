// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ConversationFacet } from "./ConversationFacet";
import type { ConversationSummary } from "./ConversationSummary";

export type ConversationList = { 
/**
 * The page.
 */
conversations: Array<ConversationSummary>, 
/**
 * Every (framework, project) pair.
 */
facets: Array<ConversationFacet>, };
