// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type RankerFigures = { 
/**
 * The bar: an entry is shown when its probability is at least this.
 */
bar: number, 
/**
 * Cross-fitted ROC AUC over the candidates it was measured on.
 */
auc: number | null, 
/**
 * Of the entries its notes show at the bar, the share needed.
 */
precision: number | null, 
/**
 * Of the requests needing an entry, the share whose note shows a needed one.
 */
hit_rate: number | null, 
/**
 * Of the requests needing none, the share with no note.
 */
silence: number | null, 
/**
 * Requests the notes were measured on.
 */
requests: number | null, };
