//! Every sample of the language reference (`docs/language.md`) that is a whole module compiles:
//! the reference promises that each of its samples parses and type-checks. Blocks of bare
//! statements (with `...` standing for more code) are compiled inside a function.

use pinv::Program;

fn blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_start().starts_with("```")) {
            (None, true) => current = Some(String::new()),
            (Some(_), true) => out.extend(current.take()),
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    out
}

#[test]
fn every_sample_of_the_language_reference_compiles() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md");
    let samples = blocks(&text);
    assert!(samples.len() >= 3, "no samples found in {}", path.display());
    let mut modules = 0;
    for sample in samples {
        if sample.contains("...") {
            continue;
        }
        Program::parse("language.md", &sample).unwrap_or_else(|e| {
            panic!("a sample of docs/language.md does not compile: {e}\n{sample}")
        });
        modules += 1;
    }
    assert!(modules >= 2, "too few whole-module samples");
}
