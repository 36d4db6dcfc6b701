//! The lexer: source text → [`Token`]s.
//!
//! This module owns the lexical grammar of `.pinv`: whitespace, `//` line comments, nested
//! `/* */` block comments, identifiers and keywords, number literals, string literals and
//! punctuation (longest match: `<<=` before `<<` before `<=` before `<`).
//!
//! Number literals follow Rust: decimal integers (`42`, `1_000`), `0x`/`0o`/`0b` integers, and
//! floats with a fraction and/or an exponent (`1.5`, `2.0e-3`, `1e9`). A `.` is part of a number
//! only when a digit follows it, so `0..n` is `0`, `..`, `n`; `1.` alone is an invalid literal.
//! A literal may not run into letters (`1f64`, `0xfg` are invalid). Literals carry no sign: the
//! parser folds a unary minus into the literal after it.
//!
//! A byte-order mark at the very start of the text is skipped.
//!
//! Invariants:
//! - [`tokenize`] never panics, whatever the input; it only slices the text at char boundaries;
//! - the token list always ends with exactly one [`TokenKind::Eof`]; when lexing fails, that
//!   `Eof` sits at the start of the offending text and the error is returned alongside, so the
//!   parser can report whichever error comes first in the source;
//! - token spans are in increasing order and do not overlap.

use super::token::{Token, TokenKind};
use crate::error::CompileError;
use crate::span::Span;

/// The result of lexing: the tokens up to the first error (then `Eof`), and that error.
#[derive(Clone, Debug, PartialEq)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub error: Option<CompileError>,
}

/// Lexes a whole text. See the module documentation for what happens on an error.
pub fn tokenize(text: &str) -> Lexed {
    let mut lexer = Lexer {
        text,
        bytes: text.as_bytes(),
        // A byte-order mark at the start is not part of the program.
        pos: if text.starts_with('\u{FEFF}') { 3 } else { 0 },
    };
    let mut tokens = Vec::new();
    let error = loop {
        match lexer.next_token() {
            Ok(Some(token)) => tokens.push(token),
            Ok(None) => break None,
            Err((error, at)) => {
                lexer.pos = at;
                break Some(error);
            }
        }
    };
    tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span::point(lexer.pos),
    });
    Lexed { tokens, error }
}

/// Lexes a whole text, failing on the first error. The tokens end with [`TokenKind::Eof`].
pub fn lex(text: &str) -> Result<Vec<Token>, CompileError> {
    let lexed = tokenize(text);
    match lexed.error {
        Some(error) => Err(error),
        None => Ok(lexed.tokens),
    }
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// Byte offset of the next unread character; always a char boundary.
    pos: usize,
}

/// A lexing error, with the offset where the failing token began.
type LexResult<T> = Result<T, (CompileError, usize)>;

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Lexer<'a> {
    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.pos + offset).copied()
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> LexResult<()> {
        loop {
            match (self.peek_at(0), self.peek_at(1)) {
                (Some(b), _) if b.is_ascii_whitespace() => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while let Some(b) = self.peek_at(0) {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => self.block_comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// Skips a (possibly nested) block comment starting at `/*`.
    fn block_comment(&mut self) -> LexResult<()> {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while depth > 0 {
            match (self.peek_at(0), self.peek_at(1)) {
                (None, _) => {
                    let span = Span::new(start, start + 2);
                    return Err((CompileError::UnterminatedComment { span }, start));
                }
                (Some(b'/'), Some(b'*')) => {
                    depth += 1;
                    self.pos += 2;
                }
                (Some(b'*'), Some(b'/')) => {
                    depth -= 1;
                    self.pos += 2;
                }
                // Non-ASCII bytes are skipped one by one; the loop only stops on ASCII bytes, so
                // `pos` is back on a char boundary when the comment ends.
                _ => self.pos += 1,
            }
        }
        Ok(())
    }

    fn next_token(&mut self) -> LexResult<Option<Token>> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(b) = self.peek_at(0) else {
            return Ok(None);
        };
        let kind = if is_ident_start(b) {
            self.ident()
        } else if b.is_ascii_digit() {
            self.number()?
        } else if b == b'"' {
            self.string()?
        } else {
            self.punct()?
        };
        Ok(Some(Token {
            kind,
            span: Span::new(start, self.pos),
        }))
    }

    fn ident(&mut self) -> TokenKind {
        let start = self.pos;
        while self.peek_at(0).is_some_and(is_ident_continue) {
            self.pos += 1;
        }
        let word = self.slice(start, self.pos);
        TokenKind::keyword(word).unwrap_or_else(|| TokenKind::Ident(word.to_string()))
    }

    fn punct(&mut self) -> LexResult<TokenKind> {
        use TokenKind::*;
        let b0 = self.peek_at(0);
        let b1 = self.peek_at(1);
        let b2 = self.peek_at(2);
        let (kind, len) = match (b0, b1, b2) {
            (Some(b'<'), Some(b'<'), Some(b'=')) => (ShlEq, 3),
            (Some(b'>'), Some(b'>'), Some(b'=')) => (ShrEq, 3),
            (Some(b'<'), Some(b'<'), _) => (Shl, 2),
            (Some(b'>'), Some(b'>'), _) => (Shr, 2),
            (Some(b'<'), Some(b'='), _) => (Le, 2),
            (Some(b'>'), Some(b'='), _) => (Ge, 2),
            (Some(b'='), Some(b'='), _) => (EqEq, 2),
            (Some(b'!'), Some(b'='), _) => (Ne, 2),
            (Some(b'&'), Some(b'&'), _) => (AmpAmp, 2),
            (Some(b'|'), Some(b'|'), _) => (PipePipe, 2),
            (Some(b'-'), Some(b'>'), _) => (Arrow, 2),
            (Some(b'.'), Some(b'.'), _) => (DotDot, 2),
            (Some(b'+'), Some(b'='), _) => (PlusEq, 2),
            (Some(b'-'), Some(b'='), _) => (MinusEq, 2),
            (Some(b'*'), Some(b'='), _) => (StarEq, 2),
            (Some(b'/'), Some(b'='), _) => (SlashEq, 2),
            (Some(b'%'), Some(b'='), _) => (PercentEq, 2),
            (Some(b'&'), Some(b'='), _) => (AmpEq, 2),
            (Some(b'|'), Some(b'='), _) => (PipeEq, 2),
            (Some(b'^'), Some(b'='), _) => (CaretEq, 2),
            (Some(b'<'), _, _) => (Lt, 1),
            (Some(b'>'), _, _) => (Gt, 1),
            (Some(b'='), _, _) => (Eq, 1),
            (Some(b'!'), _, _) => (Bang, 1),
            (Some(b'&'), _, _) => (Amp, 1),
            (Some(b'|'), _, _) => (Pipe, 1),
            (Some(b'^'), _, _) => (Caret, 1),
            (Some(b'+'), _, _) => (Plus, 1),
            (Some(b'-'), _, _) => (Minus, 1),
            (Some(b'*'), _, _) => (Star, 1),
            (Some(b'/'), _, _) => (Slash, 1),
            (Some(b'%'), _, _) => (Percent, 1),
            (Some(b'('), _, _) => (LParen, 1),
            (Some(b')'), _, _) => (RParen, 1),
            (Some(b'{'), _, _) => (LBrace, 1),
            (Some(b'}'), _, _) => (RBrace, 1),
            (Some(b','), _, _) => (Comma, 1),
            (Some(b';'), _, _) => (Semi, 1),
            (Some(b':'), _, _) => (Colon, 1),
            _ => {
                let ch = self
                    .text
                    .get(self.pos..)
                    .and_then(|rest| rest.chars().next())
                    .unwrap_or('\u{FFFD}');
                let span = Span::new(self.pos, self.pos + ch.len_utf8());
                return Err((CompileError::UnexpectedChar { ch, span }, self.pos));
            }
        };
        self.pos += len;
        Ok(kind)
    }

    /// A number literal; the current byte is a digit.
    fn number(&mut self) -> LexResult<TokenKind> {
        let start = self.pos;
        let radix = match (self.peek_at(0), self.peek_at(1)) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.pos += 2;
            while self.peek_at(0).is_some_and(is_ident_continue) {
                self.pos += 1;
            }
            let digits = self.slice(start + 2, self.pos);
            return self.integer(start, digits, radix);
        }

        self.digits();
        let mut is_float = false;
        if self.peek_at(0) == Some(b'.') {
            match self.peek_at(1) {
                Some(b'.') => {} // a range: `0..n`
                Some(b) if b.is_ascii_digit() => {
                    is_float = true;
                    self.pos += 1;
                    self.digits();
                }
                _ => {
                    // `1.` followed by nothing numeric: not a literal of this language.
                    self.pos += 1;
                    return Err(self.invalid_number(start));
                }
            }
        }
        if matches!(self.peek_at(0), Some(b'e' | b'E')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.peek_at(0), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            self.digits();
            if !self
                .slice(exp_start, self.pos)
                .bytes()
                .any(|b| b.is_ascii_digit())
            {
                return Err(self.invalid_number(start));
            }
        }
        if self.peek_at(0).is_some_and(is_ident_continue) {
            return Err(self.invalid_number(start));
        }
        let text = self.slice(start, self.pos);
        if is_float {
            let clean: String = text.chars().filter(|&c| c != '_').collect();
            match clean.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(TokenKind::Float(value)),
                _ => Err(self.invalid_number(start)),
            }
        } else {
            self.integer(start, text, 10)
        }
    }

    /// Skips decimal digits and underscores.
    fn digits(&mut self) {
        while self
            .peek_at(0)
            .is_some_and(|b| b.is_ascii_digit() || b == b'_')
        {
            self.pos += 1;
        }
    }

    /// The value of the integer literal spanning `start..self.pos`, whose digits (after any radix
    /// prefix) are `digits`.
    fn integer(&self, start: usize, digits: &str, radix: u32) -> LexResult<TokenKind> {
        let mut value: u64 = 0;
        let mut any_digit = false;
        let mut overflow = false;
        for c in digits.chars() {
            if c == '_' {
                continue;
            }
            let Some(d) = c.to_digit(radix) else {
                return Err(self.invalid_number(start));
            };
            any_digit = true;
            match value
                .checked_mul(u64::from(radix))
                .and_then(|v| v.checked_add(u64::from(d)))
            {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
        if !any_digit {
            return Err(self.invalid_number(start));
        }
        if overflow {
            let span = Span::new(start, self.pos);
            let text = self.slice(start, self.pos).to_string();
            return Err((CompileError::IntegerTooLarge { text, span }, start));
        }
        Ok(TokenKind::Int(value))
    }

    /// An invalid-number error for `start..`, extended over any letters and digits that follow so
    /// that the message shows the whole would-be literal.
    fn invalid_number(&self, start: usize) -> (CompileError, usize) {
        let mut end = self.pos;
        while self.bytes.get(end).copied().is_some_and(is_ident_continue) {
            end += 1;
        }
        let span = Span::new(start, end);
        let text = self.slice(start, end).to_string();
        (CompileError::InvalidNumber { text, span }, start)
    }

    /// A string literal; the current byte is `"`.
    fn string(&mut self) -> LexResult<TokenKind> {
        let start = self.pos;
        let rest = self.text.get(start + 1..).unwrap_or("");
        let mut value = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos = start + 1 + i + 1;
                    return Ok(TokenKind::Str(value));
                }
                '\\' => match chars.next() {
                    Some((_, '"')) => value.push('"'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, 't')) => value.push('\t'),
                    Some((j, other)) => {
                        let at = start + 1 + i;
                        let span = Span::new(at, start + 1 + j + other.len_utf8());
                        let error = CompileError::Expected {
                            expected: "an escape `\\\"`, `\\\\`, `\\n` or `\\t`".to_string(),
                            found: format!("`\\{}`", other.escape_debug()),
                            span,
                        };
                        return Err((error, start));
                    }
                    None => break,
                },
                c => value.push(c),
            }
        }
        let span = Span::new(start, start + 1);
        Err((CompileError::UnterminatedString { span }, start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let tokens = lex(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        tokens.into_iter().map(|t| t.kind).collect()
    }

    fn err(text: &str) -> CompileError {
        match lex(text) {
            Ok(tokens) => panic!("{text:?} lexed: {tokens:?}"),
            Err(e) => e,
        }
    }

    fn id(s: &str) -> TokenKind {
        Ident(s.to_string())
    }

    #[test]
    fn keywords_and_identifiers() {
        assert_eq!(
            kinds("fn inverse pgf theta let mut if else while for in return true false as"),
            vec![
                Fn, Inverse, Pgf, Theta, Let, Mut, If, Else, While, For, In, Return, True, False,
                As, Eof
            ]
        );
        assert_eq!(
            kinds("_ _x x_1 fnord f64 Abc"),
            vec![
                Underscore,
                id("_x"),
                id("x_1"),
                id("fnord"),
                id("f64"),
                id("Abc"),
                Eof
            ]
        );
    }

    #[test]
    fn punctuation_longest_match() {
        assert_eq!(
            kinds("<<= >>= << >> <= >= < > == = != ! && & || | ^ -> - .. + * / % ( ) { } , ; :"),
            vec![
                ShlEq, ShrEq, Shl, Shr, Le, Ge, Lt, Gt, EqEq, Eq, Ne, Bang, AmpAmp, Amp, PipePipe,
                Pipe, Caret, Arrow, Minus, DotDot, Plus, Star, Slash, Percent, LParen, RParen,
                LBrace, RBrace, Comma, Semi, Colon, Eof
            ]
        );
        assert_eq!(
            kinds("+= -= *= /= %= &= |= ^="),
            vec![PlusEq, MinusEq, StarEq, SlashEq, PercentEq, AmpEq, PipeEq, CaretEq, Eof]
        );
        assert_eq!(kinds("a<<=b"), vec![id("a"), ShlEq, id("b"), Eof]);
        assert_eq!(kinds("a<-b"), vec![id("a"), Lt, Minus, id("b"), Eof]);
    }

    #[test]
    fn integer_literals() {
        assert_eq!(
            kinds("0 42 1_000 0xff 0xFF_FF 0b1010 0o17 007"),
            vec![
                Int(0),
                Int(42),
                Int(1000),
                Int(255),
                Int(0xffff),
                Int(10),
                Int(15),
                Int(7),
                Eof
            ]
        );
        assert_eq!(
            kinds("9223372036854775808 18446744073709551615"),
            vec![Int(1 << 63), Int(u64::MAX), Eof]
        );
        assert!(matches!(
            err("18446744073709551616"),
            CompileError::IntegerTooLarge {
                span: Span { start: 0, end: 20 },
                ..
            }
        ));
    }

    #[test]
    fn float_literals() {
        assert_eq!(
            kinds("1.5 2.0e-3 1e9 1E+2 0.25 1_0.5_0 3.0e1_0"),
            vec![
                Float(1.5),
                Float(2.0e-3),
                Float(1e9),
                Float(100.0),
                Float(0.25),
                Float(10.5),
                Float(3.0e10),
                Eof
            ]
        );
    }

    #[test]
    fn ranges_are_not_floats() {
        assert_eq!(kinds("0..n"), vec![Int(0), DotDot, id("n"), Eof]);
        assert_eq!(kinds("0..10"), vec![Int(0), DotDot, Int(10), Eof]);
        assert_eq!(kinds("1.5..2.5"), vec![Float(1.5), DotDot, Float(2.5), Eof]);
    }

    #[test]
    fn invalid_numbers() {
        for (text, shown) in [
            ("1.", "1."),
            ("1. ", "1."),
            ("1.x", "1.x"),
            ("1e", "1e"),
            ("1e+", "1e+"),
            ("1ex", "1ex"),
            ("1f64", "1f64"),
            ("0xfg", "0xfg"),
            ("0x", "0x"),
            ("0x_", "0x_"),
            ("0b102", "0b102"),
            ("1e400", "1e400"),
        ] {
            match err(text) {
                CompileError::InvalidNumber { text: t, span } => {
                    assert_eq!(t, shown, "{text:?}");
                    assert_eq!(span.start, 0, "{text:?}");
                    assert_eq!(span.end as usize, shown.len(), "{text:?}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn strings() {
        assert_eq!(
            kinds(r#""a \"b\" \\ \n\t é""#),
            vec![Str("a \"b\" \\ \n\t é".to_string()), Eof]
        );
        assert!(matches!(
            err("x \"abc"),
            CompileError::UnterminatedString {
                span: Span { start: 2, end: 3 }
            }
        ));
        assert!(matches!(
            err(r#""a\q""#),
            CompileError::Expected {
                span: Span { start: 2, end: 4 },
                ..
            }
        ));
        assert!(matches!(
            err("\"a\\"),
            CompileError::UnterminatedString { .. }
        ));
    }

    #[test]
    fn comments() {
        assert_eq!(
            kinds("a // b c\n d /* e /* f */ g */ h /**/ i //"),
            vec![id("a"), id("d"), id("h"), id("i"), Eof]
        );
        assert!(matches!(
            err("a /* /* */"),
            CompileError::UnterminatedComment {
                span: Span { start: 2, end: 4 }
            }
        ));
        assert_eq!(kinds("/* é */ x"), vec![id("x"), Eof]);
    }

    #[test]
    fn unexpected_characters() {
        assert!(matches!(
            err("a $"),
            CompileError::UnexpectedChar {
                ch: '$',
                span: Span { start: 2, end: 3 }
            }
        ));
        assert!(matches!(
            err("é"),
            CompileError::UnexpectedChar {
                ch: 'é',
                span: Span { start: 0, end: 2 }
            }
        ));
        assert!(matches!(
            err("."),
            CompileError::UnexpectedChar { ch: '.', .. }
        ));
    }

    #[test]
    fn errors_keep_the_tokens_before_them() {
        let lexed = tokenize("a b $ c");
        let kinds: Vec<_> = lexed.tokens.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(kinds, vec![id("a"), id("b"), Eof]);
        assert_eq!(lexed.tokens[2].span, Span::point(4));
        assert!(lexed.error.is_some());
    }

    #[test]
    fn byte_order_mark() {
        let tokens = lex("\u{FEFF}fn").unwrap_or_default();
        assert_eq!(tokens[0].kind, Fn);
        assert_eq!(tokens[0].span, Span::new(3, 5));
        assert!(lex("a \u{FEFF}").is_err());
    }

    #[test]
    fn spans() {
        let tokens = lex("  foo <<= 12.5").unwrap_or_default();
        let spans: Vec<_> = tokens.iter().map(|t| (t.span.start, t.span.end)).collect();
        assert_eq!(spans, vec![(2, 5), (6, 9), (10, 14), (14, 14)]);
    }
}
