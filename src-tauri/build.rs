//! Build script: generates the Tauri context (config, icons, capabilities).
fn main() {
    tauri_build::build()
}
