// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { FeatureValue } from "./FeatureValue";

export type InjectionEntry = { 
/**
 * Its id.
 */
id: string, 
/**
 * `record`, `item` or `note`.
 */
kind: string, 
/**
 * For an item, its kind.
 */
item_kind: string | null, 
/**
 * Its title.
 */
title: string, 
/**
 * The ranker's probability.
 */
probability: number, 
/**
 * Whether the note showed it.
 */
shown: boolean, 
/**
 * The ranker's inputs for it.
 */
features: Array<FeatureValue>, 
/**
 * A person's label: `not_useful` or `useful`.
 */
label: string | null, 
/**
 * For a shown entry, what became of it once the agent's answer was captured: `used`
 * (the answer reused a rare identifier of it, or the agent opened it) or `ignored`;
 * none while not yet known (and for entries not shown). A person's label wins over it.
 */
outcome: string | null, 
/**
 * Why it was used, in a few words (the identifiers reused, or that it was opened).
 */
outcome_because: string | null, };
