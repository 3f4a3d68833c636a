// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ItemView } from "./ItemView";

export type ItemList = { 
/**
 * The items.
 */
items: Array<ItemView>, };
