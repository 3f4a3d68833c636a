// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ItemEventView } from "./ItemEventView";
import type { ItemRelationView } from "./ItemRelationView";
import type { ItemView } from "./ItemView";
import type { OpenedRecord } from "./OpenedRecord";

export type OpenedItem = { 
/**
 * The item as it is now.
 */
item: ItemView, 
/**
 * Every event, oldest first.
 */
history: Array<ItemEventView>, 
/**
 * Its relations (related, supersedes, contradicts), strongest first.
 */
relations: Array<ItemRelationView>, 
/**
 * The items it replaced and the ones that replaced it, oldest first (itself included).
 */
chain: Array<string>, 
/**
 * Its source requests, whole.
 */
sources: Array<OpenedRecord>, };
