// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type DistillDiffItem = { 
/**
 * Its id.
 */
id: string, 
/**
 * Its kind.
 */
kind: string, 
/**
 * Its title.
 */
title: string, };
