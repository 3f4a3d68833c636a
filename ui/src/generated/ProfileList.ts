// Generated from Rust by cairn-core (cargo test -p cairn-core --test bindings). Do not edit.
import type { ProfileView } from "./ProfileView";

export type ProfileList = { 
/**
 * The profiles.
 */
profiles: Array<ProfileView>, };
