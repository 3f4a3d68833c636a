// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
export type SleepReport = { 
/**
 * Active items at the start.
 */
active: number, 
/**
 * `related` edges added (neighbours from similarity 0.80).
 */
related: number, 
/**
 * Items re-scored (priority = importance × recency × use).
 */
rescored: number, 
/**
 * Items archived (low and unused for 180 days; the log keeps them).
 */
archived: Array<string>, 
/**
 * Subjects whose profile was rewritten (`project:<id>` or `machine`).
 */
profiles: Array<string>, 
/**
 * Subjects whose items did not change since their profile.
 */
profiles_unchanged: number, 
/**
 * Subjects left for another night (the nightly cap, the budget, the provider).
 */
profiles_left: number, 
/**
 * Model calls made.
 */
calls: number, 
/**
 * Money spent (US dollars; unknown costs count as 0).
 */
cost_usd: number, 
/**
 * Why profiles stopped early, if they did.
 */
stopped: string | null, 
/**
 * How long it took, in milliseconds.
 */
took_ms: number, 
/**
 * What the nightly training of a personal turn-note ranker did, in a sentence.
 */
ranker: string | null, };
