//! Rendering errors for people: `file:line:col`, a one-line message, and the offending source line
//! with a caret under the span (through `codespan-reporting`).

use crate::error::CompileError;
use crate::span::{SourceFile, Span};
use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};

/// Something that can be shown with a source location.
pub trait Located: std::fmt::Display {
    /// The primary location.
    fn span(&self) -> Span;
    /// Text under the caret.
    fn label(&self) -> String {
        String::new()
    }
    /// Other locations worth showing.
    fn secondary(&self) -> Vec<(Span, String)> {
        Vec::new()
    }
    /// Extra lines after the source excerpt.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Located for CompileError {
    fn span(&self) -> Span {
        CompileError::span(self)
    }

    fn secondary(&self) -> Vec<(Span, String)> {
        CompileError::secondary(self)
    }
}

/// Renders an error against its source file, without colour.
///
/// ```
/// use pinv_core::{diagnostic::render, span::SourceFile, syntax::parse};
/// let file = SourceFile::new("f.pinv", "fn f(x: f64) -> f64 {\n    x +\n}\n");
/// let err = parse(file.text()).unwrap_err();
/// let text = render(&file, &err);
/// assert!(text.contains("f.pinv:3:1"), "{text}");
/// ```
pub fn render(file: &SourceFile, error: &dyn Located) -> String {
    let mut out = term::termcolor::NoColor::new(Vec::new());
    emit(file, error, &mut out);
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

/// Renders an error to a colour-capable writer (`termcolor`), as the CLI does on a terminal.
pub fn emit(file: &SourceFile, error: &dyn Located, out: &mut dyn term::termcolor::WriteColor) {
    let files = SimpleFile::new(file.name(), file.text());
    let len = file.text().len();
    let clamp = |s: Span| {
        let r = s.range();
        r.start.min(len)..r.end.min(len)
    };
    let mut labels = vec![Label::primary((), clamp(error.span())).with_message(error.label())];
    for (span, message) in error.secondary() {
        labels.push(Label::secondary((), clamp(span)).with_message(message));
    }
    let diagnostic = Diagnostic::error()
        .with_message(error.to_string())
        .with_labels(labels)
        .with_notes(error.notes());
    let config = Config::default();
    // Writing to memory or a terminal; a failed write has nowhere better to be reported.
    let _ = term::emit_to_write_style(out, &config, &files, &diagnostic);
}
