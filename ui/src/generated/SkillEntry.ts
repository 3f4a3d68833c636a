// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SkillEntry = { 
/**
 * The item's id.
 */
id: string, 
/**
 * `procedure` or `pitfall`.
 */
kind: string, 
/**
 * Its title.
 */
title: string, };
