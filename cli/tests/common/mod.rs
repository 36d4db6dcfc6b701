//! What the CLI tests share: running the binary as a user would, and temporary programs.
//!
//! Each test file is its own crate and uses a part of this module; the rest would be dead code
//! there, hence the `allow`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The workspace root: commands run there, so `tests/corpus/...` paths work.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the binary with `args`.
pub fn pinv(args: &[&str]) -> Output {
    pinv_env(args, &[])
}

/// Runs the binary with `args` and extra environment variables.
pub fn pinv_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pinv"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace())
        .output()
        .expect("the pinv binary runs")
}

/// Runs the binary and returns its exit code, or `None` if it did not end within `limit` (it
/// is then killed): a hang fails the test instead of stopping the suite.
pub fn pinv_within(args: &[&str], limit: Duration) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pinv"))
        .args(args)
        .current_dir(workspace())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the pinv binary runs");
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output then standard error, for assertion messages.
pub fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// A temporary directory of this test process.
pub fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pinv-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes a file into the temporary directory and returns its path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = temp_dir().join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}
