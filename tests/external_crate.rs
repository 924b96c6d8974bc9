//! A crate outside this workspace that depends on the facade alone (under its own name, and
//! renamed) defines kernels, a device function and an `elementwise!` operation, launches them on
//! the CPU backend and checks the results: the paths the macros generate must resolve there.
//!
//! Each test builds a crate with Cargo (about a minute the first time), so they are ignored by
//! default: `cargo test --test external_crate -- --ignored`.

use std::path::Path;
use std::process::Command;

/// The user's program: exits with an error unless every result is right.
const MAIN: &str = r#"
use DEP::prelude::*;

#[device]
fn twice(x: f32) -> f32 {
    2.0 * x
}

#[kernel]
fn double_plus(x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = twice(x[i]) + y[i];
    }
}

DEP::kernels::elementwise! {
    /// `out = x * x`.
    fn square(; x: f32) -> f32 { x * x }
}

fn main() -> DEP::Result<()> {
    let stream = Gpu::cpu().default_stream();
    let x = DeviceBuffer::from_host(&stream, &[1.0f32, 2.0, 3.0])?;
    let mut y = DeviceBuffer::from_host(&stream, &[10.0f32; 3])?;
    double_plus::launch(&stream, LaunchConfig::for_len(3, 32), &x, &mut y)?;
    let mut squares = DeviceBuffer::<f32>::zeroed(&stream, 3)?;
    square(&stream, &x, &mut squares)?;
    let total = DEP::kernels::reduce::sum(&stream, &y)?;
    let (y, squares) = (y.to_host(&stream)?, squares.to_host(&stream)?);
    if y != [12.0, 14.0, 16.0] || squares != [1.0, 4.0, 9.0] || total != 42.0 {
        eprintln!("wrong results: {y:?} {squares:?} {total}");
        std::process::exit(1);
    }
    println!("external crate ok");
    Ok(())
}
"#;

/// Builds and runs the program in a fresh crate whose only dependency is the facade, under
/// the dependency key `key` (`package = "gpu-dsl"` when it differs).
fn run_external(key: &str) {
    let facade = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let package = match key {
        "gpu-dsl" => String::new(),
        _ => "package = \"gpu-dsl\", ".to_string(),
    };
    let manifest = format!(
        "[package]\nname = \"external-user\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\n{key} = {{ {package}path = {:?} }}\n\n[workspace]\n",
        facade.display().to_string()
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let source = MAIN.replace("DEP", &key.replace('-', "_"));
    std::fs::write(dir.path().join("src/main.rs"), source).unwrap();
    // The workspace's lock file: the same dependency versions, available offline.
    std::fs::copy(facade.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // A target folder of its own: the one running this test is locked by Cargo.
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--offline"])
        .current_dir(dir.path())
        .env(
            "CARGO_TARGET_DIR",
            facade.join("target/tests/external-crate"),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("external crate ok"),
        "{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "builds a crate with Cargo: about a minute"]
fn a_crate_depending_on_the_facade_alone() {
    run_external("gpu-dsl");
}

#[test]
#[ignore = "builds a crate with Cargo: about a minute"]
fn a_crate_depending_on_the_facade_renamed() {
    run_external("gpu");
}
