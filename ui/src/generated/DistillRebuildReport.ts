// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { DistillDiffItem } from "./DistillDiffItem";
import type { DistillReport } from "./DistillReport";

export type DistillRebuildReport = { 
/**
 * The distillation run.
 */
run: DistillReport, 
/**
 * Items made that did not exist.
 */
added: Array<DistillDiffItem>, 
/**
 * Items found again whose content changed (same id).
 */
changed: Array<DistillDiffItem>, 
/**
 * Items not found again: archived (the log keeps them).
 */
dropped: Array<DistillDiffItem>, 
/**
 * Items found again unchanged.
 */
unchanged: number, };
