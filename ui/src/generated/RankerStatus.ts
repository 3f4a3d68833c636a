// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { RankerFigures } from "./RankerFigures";

export type RankerStatus = { 
/**
 * `shipped` or `personal`.
 */
model: string, 
/**
 * The bar the turn note shows entries at.
 */
bar: number, 
/**
 * Its figures, when known.
 */
figures: RankerFigures | null, 
/**
 * What a personal model was trained on (`store`: this machine's turn notes; `file`: a
 * labelled file).
 */
source: string | null, 
/**
 * When a personal model was trained (RFC 3339), when known.
 */
trained_at: string | null, 
/**
 * For a personal model trained on this machine's turn notes: the shipped model's
 * figures on the same turns, at its own bar.
 */
shipped: RankerFigures | null, 
/**
 * The personal model's file (whether or not one is there).
 */
path: string, 
/**
 * Why a personal model file present is not used (trained on other inputs, unreadable).
 */
problem: string | null, 
/**
 * Sleep's nightly training of a personal model: its rule, and the latest training and
 * what came of it, or that it is off because the shipped model was chosen.
 */
nightly: string, };
