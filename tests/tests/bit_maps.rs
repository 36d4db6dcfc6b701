//! Bit maps (`invert/src/solve/bits.rs`), sums mod 2⁶⁴ (`invert/src/solve/modular.rs`) and
//! constant multiplications inverted exactly: the
//! functions of `tests/programs/bitmix.pinv` (PRNG steps, hash finalisers, bit fields, Morton
//! codes, CRC steps, with loops and branches too) and of `tests/corpus/bits.pinv`.
//!
//! For each: the forward code equals a Rust reference implementation; the inverse reads θ only
//! for the bits the function loses (none for a bijection), each as one read of the free bits;
//! every θ drawn is accepted and sound, the PGF gives x back, and the interpreter and native code
//! agree bit for bit. A y outside the image is a domain error for every θ.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 300 here).

use pinv::check::{check_inverse, CheckConfig, Status};
use pinv::theta::{SlotKind, ThetaSlot};
use pinv::{Const, Program, Sampler};
use pinv_core::ir::Domain;
use pinv_core::jit::Engine;
use pinv_core::rng::Rng;
use pinv_tests::corpus_dir;

fn cases() -> usize {
    pinv_tests::check_cases().min(300)
}

fn program() -> Program {
    let path = corpus_dir().join("../programs/bitmix.pinv");
    Program::load(path).expect("bitmix.pinv compiles")
}

type Reference = fn(&[u64]) -> Vec<u64>;

fn lshr(x: u64, k: u32) -> u64 {
    x >> k
}

/// Each function: its Rust reference, and the masks of the θ reads its inverse should have
/// (one per input word that loses bits; none for a bijection). A mask of 0 stands for a read of
/// any i64 (the walk's own rule for a single mask, `int`, where every value is fine).
fn functions() -> Vec<(&'static str, Reference, Vec<u64>)> {
    const HIGH32: u64 = 0xffff_ffff_0000_0000;
    vec![
        (
            "xorshift64",
            |x| {
                let mut s = x[0];
                s ^= s << 13;
                s ^= lshr(s, 7);
                s ^= s << 17;
                vec![s]
            },
            vec![],
        ),
        (
            "xorshift64star",
            |x| {
                let mut s = x[0];
                s ^= s >> 12;
                s ^= s << 25;
                s ^= s >> 27;
                vec![s.wrapping_mul(0x2545_f491_4f6c_dd1d)]
            },
            vec![],
        ),
        (
            "xorshift32",
            |x| {
                let mut s = x[0] as u32;
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                vec![u64::from(s)]
            },
            vec![HIGH32],
        ),
        (
            "fmix64",
            |x| {
                let mut h = x[0];
                h ^= h >> 33;
                h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
                h ^= h >> 33;
                h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
                h ^= h >> 33;
                vec![h]
            },
            vec![],
        ),
        (
            "murmur64a_mix",
            |x| {
                let m = 0xc6a4_a793_5bd1_e995u64;
                let mut k = x[0].wrapping_mul(m);
                k ^= k >> 47;
                vec![k.wrapping_mul(m)]
            },
            vec![],
        ),
        (
            "fnv1a_round",
            |x| vec![(0xcbf2_9ce4_8422_2325u64 ^ x[0]).wrapping_mul(0x0100_0000_01b3)],
            vec![],
        ),
        (
            "pcg_step",
            |x| {
                let s = x[0]
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                vec![s ^ (s >> 18)]
            },
            vec![],
        ),
        ("gray", |x| vec![x[0] ^ (x[0] >> 1)], vec![]),
        ("bswap64", |x| vec![x[0].swap_bytes()], vec![]),
        (
            "rgb_pack",
            |x| vec![((x[0] & 0xff) << 16) | ((x[1] & 0xff) << 8) | (x[2] & 0xff)],
            vec![!0xff; 3],
        ),
        (
            "rgb_unpack",
            |x| vec![(x[0] >> 16) & 0xff, (x[0] >> 8) & 0xff, x[0] & 0xff],
            vec![!0xff_ffff],
        ),
        (
            "field_insert",
            |x| vec![(x[0] & !(0x3f << 5)) | ((x[1] & 0x3f) << 5)],
            vec![0x3f << 5, !0x3f],
        ),
        (
            "morton2",
            |x| {
                let spread = |v: u64| (0..16).fold(0u64, |a, i| a | ((v >> i & 1) << (2 * i)));
                vec![spread(x[0] & 0xffff) | (spread(x[1] & 0xffff) << 1)]
            },
            vec![!0xffff, !0xffff],
        ),
        (
            "xoroshiro128_step",
            |x| {
                let (s0, s1) = (x[0], x[1] ^ x[0]);
                vec![s0.rotate_left(24) ^ s1 ^ (s1 << 16), s1.rotate_left(37)]
            },
            vec![],
        ),
        (
            "crc32_bit",
            |x| {
                let c = x[0] & 0xffff_ffff;
                vec![(c >> 1) ^ (0xedb8_8320 & (c & 1).wrapping_neg())]
            },
            vec![HIGH32],
        ),
        (
            "crc16_bit",
            |x| {
                let c = x[0] & 0xffff;
                let top = (c >> 15) & 1;
                vec![((c << 1) ^ (0x1021 & top.wrapping_neg())) & 0xffff]
            },
            vec![!0xffff],
        ),
        (
            "affine13",
            |x| {
                let t = x[0].wrapping_add(7).wrapping_mul(5);
                vec![t.wrapping_add(x[0] << 3)]
            },
            vec![],
        ),
        (
            "times8",
            |x| vec![x[0].wrapping_mul(8).wrapping_add(1)],
            vec![0xe000_0000_0000_0000],
        ),
        (
            "crc16_byte",
            |x| {
                let mut c = (x[0] ^ ((x[1] & 0xff) << 8)) & 0xffff;
                for _ in 0..8 {
                    c = if c & 0x8000 != 0 {
                        ((c << 1) ^ 0x1021) & 0xffff
                    } else {
                        (c << 1) & 0xffff
                    };
                }
                vec![c]
            },
            vec![!0xffff, !0],
        ),
        (
            "gray_decode",
            |x| {
                let mut g = x[0];
                for s in [1, 2, 4, 8, 16, 32] {
                    g ^= g >> s;
                }
                vec![g]
            },
            vec![],
        ),
        (
            "fmix32",
            |x| {
                let mut h = x[0] as u32;
                h ^= h >> 16;
                h = h.wrapping_mul(0x85eb_ca6b);
                h ^= h >> 13;
                h = h.wrapping_mul(0xc2b2_ae35);
                h ^= h >> 16;
                vec![u64::from(h)]
            },
            vec![0xffff_ffff_0000_0000],
        ),
        (
            "fnv1a32_byte",
            |x| {
                let h = (x[0] ^ (x[1] & 0xff)) as u32;
                vec![u64::from(h.wrapping_mul(0x0100_0193))]
            },
            vec![0xffff_ffff_0000_0000, !0],
        ),
        (
            "lcg32",
            |x| {
                let s = (x[0] as u32)
                    .wrapping_mul(1_664_525)
                    .wrapping_add(1_013_904_223);
                vec![u64::from(s)]
            },
            vec![0],
        ),
    ]
}

fn words(c: &[Const]) -> Vec<u64> {
    c.iter().map(|v| v.as_i64().expect("i64") as u64).collect()
}

fn domain(slot: &ThetaSlot) -> Domain {
    match slot.kind {
        SlotKind::Value { domain, .. } => domain,
        SlotKind::Choice { n } => panic!("a choice of {n}"),
    }
}

fn consts(w: &[u64]) -> Vec<Const> {
    w.iter().map(|&v| Const::I64(v as i64)).collect()
}

#[test]
fn forward_code_is_the_reference() {
    let program = program();
    let mut rng = Rng::new(7);
    for (name, reference, _) in functions() {
        let arity = program.function(name).expect("defined").1.sig.params.len();
        for _ in 0..200 {
            let x: Vec<u64> = (0..arity).map(|_| rng.next_u64()).collect();
            let got = program.run(name, &consts(&x)).expect("runs");
            assert_eq!(words(&got), reference(&x), "{name}{x:x?}");
        }
    }
}

#[test]
fn theta_is_read_only_for_lost_bits() {
    let program = program();
    for (name, _, masks) in functions() {
        let inverse = program.invert(name).expect("invertible");
        let domains: Vec<Domain> = inverse.schema().slots.iter().map(domain).collect();
        let want: Vec<Domain> = masks
            .iter()
            .map(|&mask| match mask {
                0 => Domain::Int,
                mask => Domain::Bits { mask },
            })
            .collect();
        assert_eq!(domains, want, "{name}:\n{}", inverse.schema());
    }
    // The corpus's bit mixers are bijections (or onto pairs of halves): no θ at all.
    let corpus = Program::load(corpus_dir().join("bits.pinv")).expect("bits.pinv");
    for name in ["splitmix", "rotl13", "xor_fold", "halves", "mulxs"] {
        let inverse = corpus.invert(name).expect("invertible");
        assert!(
            inverse.schema().slots.is_empty(),
            "{name} reads θ:\n{}",
            inverse.schema()
        );
    }
    // A CRC-32 byte step in a loop of branches: θ for the 32 high bits of the register and
    // for the byte (its low 8 bits only shift which register bits give the output).
    let inverse = corpus.invert("crc_byte").expect("invertible");
    let domains: Vec<Domain> = inverse.schema().slots.iter().map(domain).collect();
    let want = [0xffff_ffff_0000_0000, !0].map(|mask| Domain::Bits { mask });
    assert_eq!(domains, want, "crc_byte:\n{}", inverse.schema());
}

#[test]
fn every_theta_gives_a_preimage_and_the_pgf_gives_x_back() {
    let config = CheckConfig {
        cases: cases(),
        ..CheckConfig::default()
    };
    let mut failures = Vec::new();
    let program = program();
    let corpus = Program::load(corpus_dir().join("bits.pinv")).expect("bits.pinv");
    let names = functions().into_iter().map(|f| (&program, f.0));
    let corpus_names = [
        "splitmix", "rotl13", "xor_fold", "halves", "crc_byte", "mulxs",
    ]
    .into_iter()
    .map(|n| (&corpus, n));
    for (p, name) in names.chain(corpus_names) {
        for engine in [Engine::Interp, Engine::Jit] {
            let inverse = p.invert(name).expect("invertible").with_engine(engine);
            let r = check_inverse(&inverse, &config);
            let ok = r.status == Status::Ok
                && r.soundness.violations == 0
                && r.soundness.accepted == r.soundness.trials
                && r.completeness.recovered == r.completeness.trials;
            if !ok {
                failures.push(format!(
                    "{name} ({engine:?}): {:?}, accepted {:.1}%, {:?}, {:?}, {:?}",
                    r.status,
                    r.acceptance(),
                    r.soundness,
                    r.completeness,
                    r.message
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn interpreter_and_native_code_agree_on_every_theta() {
    let program = program();
    let mut rng = Rng::new(11);
    for (name, reference, _) in functions() {
        let interp = program
            .invert(name)
            .expect("invertible")
            .with_engine(Engine::Interp);
        let native = program
            .invert(name)
            .expect("invertible")
            .with_engine(Engine::Jit);
        let arity = interp.input_types().len();
        let mut sampler = Sampler::new(rng.next_u64());
        for k in 0..100 {
            let x: Vec<u64> = (0..arity).map(|_| rng.next_u64()).collect();
            // y from an input, or any words (mostly outside the image of a lossy map).
            let y = if k % 4 == 3 {
                (0..reference(&x).len()).map(|_| rng.next_u64()).collect()
            } else {
                reference(&x)
            };
            let (a, theta) = interp.sample(&consts(&y), &mut sampler);
            let b = native.call_with_tape(&consts(&y), &theta);
            match (&a, &b) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{name}: y = {y:x?}, θ = {theta:?}");
                    assert_eq!(reference(&words(a)), y, "{name}: unsound at y = {y:x?}");
                }
                (Err(a), Err(b)) => {
                    assert!(a.is_domain_error() && b.is_domain_error(), "{a} / {b}")
                }
                _ => panic!("{name}: y = {y:x?}, θ = {theta:?}: {a:?} vs {b:?}"),
            }
        }
    }
}

#[test]
fn a_y_outside_the_image_is_a_domain_error() {
    let program = program();
    // xorshift32 produces only 32-bit words; rgb_pack only 24-bit ones.
    for (name, y) in [("xorshift32", 1u64 << 40), ("rgb_pack", 1 << 24)] {
        let inverse = program.invert(name).expect("invertible");
        for theta in [0u64, 0xff00] {
            let t = inverse
                .schema()
                .slots
                .iter()
                .map(|s| match domain(s) {
                    Domain::Bits { mask } => Const::I64((theta & mask) as i64),
                    other => panic!("{other}"),
                })
                .collect::<Vec<_>>();
            let err = inverse
                .call_with_tape(&[Const::I64(y as i64)], &t)
                .expect_err("no preimage");
            assert!(err.is_domain_error(), "{name}: {err}");
            assert!(err.to_string().contains("no preimage"), "{name}: {err}");
        }
    }
    // A θ with a bit outside its mask is out of its domain.
    let inverse = program.invert("xorshift32").expect("invertible");
    let err = inverse
        .call_with_tape(&[Const::I64(5)], &[Const::I64(1)])
        .expect_err("bit 0 is not free");
    assert!(err.is_domain_error(), "{err}");
}

/// What a random chain may contain.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Chain {
    /// Bijective steps: xorshifts both ways, rotations, multiplications by odd constants,
    /// additions and xors of constants, `!`.
    Bijective,
    /// GF(2)-linear steps only, masks included: one bit map, every θ a preimage.
    Linear,
    /// Everything, masks between additions and multiplications included: sound and complete,
    /// but a mask after an addition rejects some θ (its carries are not linear).
    Mixed,
    /// 32-bit code on the low word: xorshifts, multiplications by odd constants and additions,
    /// each masked to 32 bits. A bijection of the low word: θ is the high half, and every θ is
    /// accepted.
    Word32,
}

/// A random chain of word operations on `x`. Returns the program text and a Rust model of it.
fn random_chain(seed: u64, kind: Chain) -> (String, Vec<(u8, u32, u64)>) {
    let mut rng = Rng::new(seed);
    let steps = 1 + rng.next_u64() % 5;
    let mut text = String::from("fn f(x: i64) -> i64 {\n    let mut z = x;\n");
    let mut model = Vec::new();
    if kind == Chain::Word32 {
        text.push_str("    z = z & 4294967295;\n");
        model.push((7, 0, 0xffff_ffff));
        for _ in 0..steps {
            let k = 1 + (rng.next_u64() % 31) as u32;
            let c = rng.next_u64() & 0xffff_ffff;
            let op = (8 + rng.next_u64() % 4) as u8;
            let line = match op {
                8 => format!("z = z ^ (z >> {k});"),
                9 => format!("z = (z ^ (z << {k})) & 4294967295;"),
                10 => format!("z = (z * {}) & 4294967295;", c | 1),
                _ => format!("z = (z + {c}) & 4294967295;"),
            };
            text.push_str(&format!("    {line}\n"));
            model.push((op, k, if op == 10 { c | 1 } else { c }));
        }
        text.push_str("    z\n}\n");
        return (text, model);
    }
    for _ in 0..steps {
        let op = match kind {
            Chain::Bijective => rng.next_u64() % 7,
            Chain::Linear => [0, 1, 3, 5, 6, 7][(rng.next_u64() % 6) as usize],
            Chain::Mixed | Chain::Word32 => rng.next_u64() % 8,
        } as u8;
        let k = 1 + (rng.next_u64() % 63) as u32;
        let c = match op {
            2 => rng.next_u64() | 1,
            // Masks keep i64::MIN out of the literals.
            7 => rng.next_u64() & !(1 << 63) | (rng.next_u64() & 0xff),
            _ => rng.next_u64() >> 1,
        };
        let low = |k: u32| if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        let line = match op {
            0 => format!("z = z ^ ((z >> {k}) & {});", low(64 - k) as i64),
            1 => format!("z = z ^ (z << {k});"),
            2 => format!("z = z * {};", c as i64),
            3 => format!("z = (z << {k}) | ((z >> {}) & {});", 64 - k, low(k) as i64),
            4 => format!("z = z + {};", c as i64),
            5 => format!("z = z ^ {};", c as i64),
            6 => "z = !z;".to_string(),
            _ => format!("z = z & {};", c as i64),
        };
        text.push_str("    ");
        text.push_str(&line);
        text.push('\n');
        model.push((op, k, c));
    }
    text.push_str("    z\n}\n");
    (text, model)
}

fn run_chain(model: &[(u8, u32, u64)], x: u64) -> u64 {
    model.iter().fold(x, |z, &(op, k, c)| match op {
        0 => z ^ (z >> k),
        1 => z ^ (z << k),
        2 => z.wrapping_mul(c),
        3 => z.rotate_left(k),
        4 => z.wrapping_add(c),
        5 => z ^ c,
        6 => !z,
        7 => z & c,
        8 => z ^ (z >> k),
        9 => (z ^ (z << k)) & 0xffff_ffff,
        10 => z.wrapping_mul(c) & 0xffff_ffff,
        _ => z.wrapping_add(c) & 0xffff_ffff,
    })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32),
        ..proptest::test_runner::Config::default()
    })]

    /// Random chains of bijective word steps invert exactly with no θ; random GF(2)-linear
    /// chains with masks read only the lost bits, and every θ drawn gives a preimage; chains of
    /// anything are sound. The PGF round trip gives x back, in the interpreter and in native
    /// code alike.
    #[test]
    fn random_word_chains_invert_exactly(
        seed in proptest::prelude::any::<u64>(),
        kind in proptest::prop_oneof![
            proptest::prelude::Just(Chain::Bijective),
            proptest::prelude::Just(Chain::Linear),
            proptest::prelude::Just(Chain::Mixed),
            proptest::prelude::Just(Chain::Word32),
        ],
    ) {
        let (text, model) = random_chain(seed, kind);
        let program = Program::parse("chain.pinv", &text).expect("compiles");
        let mut rng = Rng::new(seed ^ 0x5555);
        for engine in [Engine::Interp, Engine::Jit] {
            let inverse = program.invert("f").expect("invertible").with_engine(engine);
            if kind == Chain::Bijective {
                proptest::prop_assert!(inverse.schema().slots.is_empty(), "{}\n{}", text, inverse.schema());
            }
            if kind == Chain::Word32 {
                // One read for the high half (the walk's own mask rule reads any i64 for it).
                let domains: Vec<Domain> = inverse.schema().slots.iter().map(domain).collect();
                let high = Domain::Bits { mask: 0xffff_ffff_0000_0000 };
                proptest::prop_assert!(
                    domains == [high] || domains == [Domain::Int],
                    "{}\n{}", text, inverse.schema()
                );
            }
            let mut sampler = Sampler::new(seed);
            for _ in 0..8 {
                let x = rng.next_u64();
                let y = run_chain(&model, x);
                proptest::prop_assert_eq!(
                    words(&program.run("f", &consts(&[x])).expect("runs")),
                    vec![y]
                );
                let theta = inverse.pgf(&consts(&[x])).expect("pgf");
                let back = inverse.call_with_tape(&consts(&[y]), &theta);
                proptest::prop_assert_eq!(back.ok(), Some(consts(&[x])), "{}", text);
                let (other, _) = inverse.sample(&consts(&[y]), &mut sampler);
                match other {
                    Ok(other) => proptest::prop_assert_eq!(run_chain(&model, words(&other)[0]), y, "{}", text),
                    Err(e) => proptest::prop_assert!(
                        kind == Chain::Mixed && e.is_domain_error(),
                        "{}: a θ of the domain gave no preimage: {}", text, e
                    ),
                }
            }
        }
    }
}
