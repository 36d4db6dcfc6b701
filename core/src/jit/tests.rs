use super::*;
use crate::interp::{InterpConfig, Interpreter, RuntimeErrorKind, TapeSource};
use crate::ir::Const;
use crate::SourceFile;

fn module(src: &str) -> Arc<Module> {
    let file = SourceFile::new("t.pinv", src);
    match crate::compile(&file) {
        Ok(c) => Arc::new(c.module),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn smoke() {
    let m = module("fn f(x: f64, y: f64) -> f64 { x * y + 1.0 }\nfn g(n: i64) -> i64 { let mut i = 0; let mut r = 0; while i < n { r += i; i += 1; } r }\nfn h(a: i64, b: i64) -> (i64, bool) { (a / b, a < b) }");
    let f = m.get("f").unwrap();
    let c = compile(Arc::clone(&m), f).unwrap();
    assert_eq!(
        c.call(&[Const::F64(2.0), Const::F64(3.0)]).unwrap(),
        [Const::F64(7.0)]
    );
    let g = m.get("g").unwrap();
    let c = compile(Arc::clone(&m), g).unwrap();
    let cfg = InterpConfig::default().with_step_limit(1000);
    let o = c.call_traced(&cfg, &[Const::I64(10)], None).unwrap();
    let i = Interpreter::new(&m)
        .with_config(cfg)
        .call_traced(g, &[Const::I64(10)], None)
        .unwrap();
    assert_eq!(o, i);
    let e = c.call_traced(&cfg, &[Const::I64(1000)], None).unwrap_err();
    let ie = Interpreter::new(&m)
        .with_config(cfg)
        .call_traced(g, &[Const::I64(1000)], None)
        .unwrap_err();
    assert_eq!(e.kind, ie.kind);
    let h = m.get("h").unwrap();
    let c = compile(Arc::clone(&m), h).unwrap();
    assert_eq!(
        c.call(&[Const::I64(7), Const::I64(2)]).unwrap(),
        [Const::I64(3), Const::Bool(false)]
    );
    let e = c.call(&[Const::I64(7), Const::I64(0)]).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::DivisionByZero);
    let e = c.call(&[Const::I64(i64::MIN), Const::I64(-1)]).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::Overflow);
    let _ = TapeSource::new(vec![]);
}
