// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type ItemView = { 
/**
 * Its id (`i_…`).
 */
id: string, 
/**
 * fact, decision, procedure, pitfall, architecture, preference, observation, episode.
 */
kind: string, 
/**
 * A short title.
 */
title: string, 
/**
 * The summary: its search key.
 */
summary: string, 
/**
 * The whole body.
 */
body: string, 
/**
 * Requests someone might make that this item answers.
 */
cues: Array<string>, 
/**
 * What it is about.
 */
concepts: Array<string>, 
/**
 * 1 to 5.
 */
importance: number, 
/**
 * stated, inferred, contested or ambiguous.
 */
certainty: string, 
/**
 * Project identity.
 */
project: string | null, 
/**
 * The records it came from.
 */
sources: Array<string>, 
/**
 * When it happened (RFC 3339).
 */
happened_at: string | null, 
/**
 * When it was said: its newest source request (RFC 3339).
 */
said_at: string | null, 
/**
 * When a lasting thing ended (RFC 3339).
 */
ended_at: string | null, 
/**
 * The item that replaced it, when superseded.
 */
superseded_by: string | null, 
/**
 * It left the active index (the log keeps it).
 */
archived: boolean, 
/**
 * Whose text states it: `user` (the request), `agent` (the agent's replies and tool
 * calls), `outside` (only tool output, fetched pages or files read: never written into
 * instruction files, never replacing what the user or the agent stated) or `unchecked`
 * (distilled before Cairn recorded it; treated like `outside`).
 */
provenance: string, };
