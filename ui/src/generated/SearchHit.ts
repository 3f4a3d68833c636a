// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SearchHit = { 
/**
 * The record's, item's or note's id.
 */
id: string, 
/**
 * What it is: `record`, `item` or `note`.
 */
source: string, 
/**
 * A note's or an item's title (absent for records).
 */
title: string | null, 
/**
 * An item's kind (fact, decision, …); absent for records and notes.
 */
item_kind?: string, 
/**
 * Whose text states an item (`user`, `agent`, `outside`, `unchecked`, as
 * [`ItemView::provenance`]); absent for records and notes.
 */
item_provenance?: string, 
/**
 * Framework.
 */
framework: string, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * Session id.
 */
session_id: string, 
/**
 * When (RFC 3339).
 */
timestamp: string, 
/**
 * How the turn ended.
 */
outcome: string, 
/**
 * The best matching passage.
 */
passage: string, 
/**
 * Relevance.
 */
score: number, 
/**
 * Inside the requested date range (true when none was given).
 */
in_range: boolean, };
