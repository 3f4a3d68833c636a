// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type DistillDropped = { 
/**
 * Its title.
 */
title: string, 
/**
 * Its kind.
 */
kind: string, 
/**
 * Why.
 */
reason: string, };
