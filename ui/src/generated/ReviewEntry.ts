// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ReviewSubject } from "./ReviewSubject";

export type ReviewEntry = { 
/**
 * Its stable key (`duplicate:i_a:i_b`, `stale:i_c`, …): the same finding keeps it.
 */
key: string, 
/**
 * `duplicate`, `contradiction`, `stale` or `junk`.
 */
category: string, 
/**
 * Why it is here, in a sentence.
 */
reason: string, 
/**
 * How sure the finding is, 0 to 1 (similarity for pairs).
 */
score: number, 
/**
 * What it is about: two for duplicates and contradictions, one otherwise. The first is
 * the one Cairn suggests keeping. Both of a pair are of one kind (items, records or
 * notes); records offer only `archive` (out of search and the turn note, kept in the
 * log) and `keep`.
 */
subjects: Array<ReviewSubject>, 
/**
 * The actions it offers: `merge`, `supersede`, `archive`, `keep`.
 */
actions: Array<string>, };
