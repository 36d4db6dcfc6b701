//! Source positions.
//!
//! A [`Span`] is a half-open byte range into one source text. Every AST node, every typed expression
//! and every IR instruction keeps the span it came from, so that an error or a θ slot can point at
//! `file.pinv:3:14`. [`SourceFile`] turns byte offsets into 1-based line and column numbers.

use serde::Serialize;

/// A half-open byte range `start..end` in a source text.
///
/// Invariant: `start <= end`. An empty span (`start == end`) marks a position, such as the end of
/// the file for "expected `}`".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span `start..end`; the ends are swapped if given the wrong way round.
    pub fn new(start: usize, end: usize) -> Span {
        let (start, end) = if start <= end {
            (start, end)
        } else {
            (end, start)
        };
        Span {
            start: clamp_u32(start),
            end: clamp_u32(end),
        }
    }

    /// An empty span at `offset`.
    pub fn point(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span that covers both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

fn clamp_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// A named source text, with the line starts needed to turn offsets into line and column.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line and column of a byte offset (clamped to the text, and to a character boundary).
    pub fn line_col(&self, offset: u32) -> LineCol {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let column = self.text[self.line_starts[line]..offset].chars().count() + 1;
        LineCol {
            line: line + 1,
            column,
        }
    }

    /// `name:line:col` of the start of a span.
    pub fn location(&self, span: Span) -> String {
        let lc = self.line_col(span.start);
        format!("{}:{}:{}", self.name, lc.line, lc.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let f = SourceFile::new("a.pinv", "ab\ncdé\n\nx");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 3 });
        // Inside the two bytes of `é`: clamped back to its start.
        assert_eq!(f.line_col(6), LineCol { line: 2, column: 3 });
        assert_eq!(f.line_col(9), LineCol { line: 4, column: 1 });
        assert_eq!(f.line_col(1000), LineCol { line: 4, column: 2 });
        assert_eq!(f.location(Span::new(3, 4)), "a.pinv:2:1");
    }
}
