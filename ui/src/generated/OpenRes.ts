// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteDoc } from "./NoteDoc";
import type { OpenedItem } from "./OpenedItem";
import type { OpenedRecord } from "./OpenedRecord";

export type OpenRes = { 
/**
 * `record`, `item` or `note`.
 */
kind: string, 
/**
 * The record, when the id is a record's.
 */
record: OpenedRecord | null, 
/**
 * The item with its history, relations and source requests, when the id is an item's.
 */
item?: OpenedItem, 
/**
 * The note, when the id is a note's.
 */
note: NoteDoc | null, };
