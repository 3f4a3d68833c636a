// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { SkillEntry } from "./SkillEntry";

export type SkillsPreview = { 
/**
 * The framework.
 */
framework: string, 
/**
 * The instruction file (absolute).
 */
file: string, 
/**
 * Whether the file exists.
 */
exists: boolean, 
/**
 * The section Cairn writes, markers included (empty when the project has no procedure
 * or pitfall: writing then removes the section).
 */
section: string, 
/**
 * The items in it, procedures first.
 */
entries: Array<SkillEntry>, 
/**
 * The project's procedures and pitfalls kept out of it: those stated only by outside
 * text (tool output, fetched pages, files read) or not yet checked. Text from outside
 * never becomes an instruction to an agent.
 */
withheld: Array<SkillEntry>, 
/**
 * Cairn's section as the file holds it now, if it has one.
 */
current: string | null, 
/**
 * True when the file already holds exactly this section.
 */
up_to_date: boolean, 
/**
 * After `skills_write`: `created`, `updated`, `unchanged`, `removed` or `absent`
 * (nothing to remove); `None` for a preview.
 */
action: string | null, };
