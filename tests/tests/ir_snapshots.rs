//! File-based expected output: the IR text of corpus modules, kept in `tests/snapshots/`.
//!
//! To re-bless after an intended change to lowering or the text form, run
//! `UPDATE_EXPECT=1 cargo test -p pinv-tests --test ir_snapshots` and review the diff.

use expect_test::expect_file;
use pinv_core::ir::write::{write_module, WriteOptions};
use pinv_tests::compile_corpus;

fn snapshot(file: &str) -> String {
    let (_, compiled) = compile_corpus(file);
    write_module(&compiled.module, &WriteOptions::default())
}

#[test]
fn straight_line() {
    expect_file!["../snapshots/straight.ir"].assert_eq(&snapshot("straight.pinv"));
}

#[test]
fn branches() {
    expect_file!["../snapshots/branches.ir"].assert_eq(&snapshot("branches.pinv"));
}

#[test]
fn loops() {
    expect_file!["../snapshots/loops.ir"].assert_eq(&snapshot("loops.pinv"));
}

#[test]
fn declared_inverse() {
    expect_file!["../snapshots/unary.ir"].assert_eq(&snapshot("unary.pinv"));
}

#[test]
fn integers_and_short_circuit() {
    expect_file!["../snapshots/ints.ir"].assert_eq(&snapshot("ints.pinv"));
}
