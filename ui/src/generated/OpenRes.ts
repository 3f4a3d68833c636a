// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { NoteDoc } from "./NoteDoc";
import type { OpenedRecord } from "./OpenedRecord";

export type OpenRes = { 
/**
 * `record` or `note`.
 */
kind: string, 
/**
 * The record, when the id is a record's.
 */
record: OpenedRecord | null, 
/**
 * The note, when the id is a note's.
 */
note: NoteDoc | null, };
