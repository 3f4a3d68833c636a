// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { IntegrationView } from "./IntegrationView";

export type IntegrationList = { 
/**
 * One per framework.
 */
integrations: Array<IntegrationView>, };
