//! Compiling and invalidating many times in one process does not grow memory without bound:
//! the JIT memory of an invalidated entry is freed (`JITModule::free_memory`), and so is the
//! rest of the unit.
//!
//! `PINV_JIT_MEMORY_CYCLES` sets the number of compile–invalidate cycles (default 10,000: about
//! 5 s in a debug build). This file holds one test, so no other test allocates in the process
//! while it measures. Linux only (it reads `/proc/self/statm`).

use pinv_core::ir::Const;
use pinv_core::jit::{CodeCache, InverseDeps, InverseKey, LayerVersion};
use pinv_core::SourceFile;
use std::sync::Arc;

const SOURCE: &str = "
fn poly(x: f64, y: f64) -> f64 { let a = x * y + 1.0; a * a - sin(x) / (y + 2.0) }
fn sum(n: i64) -> i64 { let mut i = 0; let mut r = 0; while i < n { r += i * i; i += 1; } r }
fn calls(x: f64) -> f64 { poly(x, x + 1.0) + poly(x, 2.0) }
";

/// Resident memory in bytes.
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn compile_invalidate_cycles_do_not_grow_memory() {
    let Some(_) = resident() else {
        eprintln!("no /proc/self/statm: skipped");
        return;
    };
    let cycles: usize = std::env::var("PINV_JIT_MEMORY_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let file = SourceFile::new("mem.pinv", SOURCE);
    let module = Arc::new(pinv_core::compile_source(&file).expect("compiles").module);
    let names = ["poly", "sum", "calls"];
    let cache = CodeCache::new();
    let key = InverseKey::new([7]);
    let deps = InverseDeps {
        functions: vec![],
        layers: vec![LayerVersion {
            layer: 1,
            version: 0,
        }],
    };
    let cycle = |i: usize| {
        let name = names[i % names.len()];
        let id = module.get(name).expect("defined");
        // Forward code, used and invalidated by redefinition; inverse-owned code, invalidated by a
        // layer edit.
        let code = cache.forward(&module, id).expect("compiles");
        let args: Vec<Const> = module.functions[id]
            .sig
            .params
            .iter()
            .map(|&t| Const::zero(t))
            .collect();
        code.call(&args).expect("runs");
        drop(code);
        cache.redefine(name);
        cache.inverse(&key, &module, id, &deps).expect("compiles");
        cache.edit_layer(1);
    };
    // Warm up allocator pools and lazily initialized state before measuring.
    for i in 0..300 {
        cycle(i);
    }
    let before = resident().unwrap_or(0);
    let start = std::time::Instant::now();
    for i in 0..cycles {
        cycle(i);
    }
    let after = resident().unwrap_or(0);
    let growth = after.saturating_sub(before);
    eprintln!(
        "{cycles} cycles ({} compilations) in {:.1?}: resident {} MB → {} MB",
        2 * cycles,
        start.elapsed(),
        before >> 20,
        after >> 20
    );
    assert!(
        growth < 50 << 20,
        "resident memory grew by {} MB over {cycles} cycles",
        growth >> 20
    );
    assert_eq!(
        cache.stats().forward_entries + cache.stats().inverse_entries,
        0
    );
}
