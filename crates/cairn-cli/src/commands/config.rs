//! `cairn config`: the config file's path, or the effective settings.
use super::{Ctx, Failure};
use crate::cli::ConfigCmd;

/// Prints the path or the settings.
pub fn run(ctx: &Ctx, what: ConfigCmd) -> Result<(), Failure> {
    match what {
        ConfigCmd::Path => {
            println!("{}", ctx.file.display());
            Ok(())
        }
        ConfigCmd::Show => {
            print!("{}", ctx.settings.to_toml());
            Ok(())
        }
    }
}
