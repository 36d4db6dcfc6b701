//! Tokens: what the lexer ([`super::lexer`]) produces and the parser ([`super::parser`]) consumes.
//!
//! This module owns the token vocabulary of `.pinv`: keywords, punctuation, literals, and the
//! mapping from operator tokens to the AST's [`BinOp`]. Invariants:
//! - keywords never appear as [`TokenKind::Ident`]; a lone `_` is [`TokenKind::Underscore`];
//! - [`TokenKind::Int`] holds the literal's magnitude (the lexer rejects values above `u64::MAX`;
//!   the parser decides whether it fits an `i64`, possibly after folding a unary minus);
//! - [`TokenKind::Float`] holds a finite value;
//! - every token's span is a non-empty range of the source text, except [`TokenKind::Eof`], whose
//!   span is the empty position where the token stream ends.

use super::ast::BinOp;
use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A name that is not a keyword: `x`, `f64`, `sin`, `_tmp`.
    Ident(String),
    /// An integer literal's value (decimal, `0x`, `0o` or `0b`), without sign.
    Int(u64),
    /// A floating-point literal (`1.5`, `2.0e-3`, `1e9`), without sign.
    Float(f64),
    /// A string literal with its escapes resolved (only valid in `fail("...")`).
    Str(String),

    // ---- keywords
    Fn,
    Inverse,
    Pgf,
    Theta,
    Let,
    Mut,
    If,
    Else,
    While,
    For,
    In,
    Return,
    True,
    False,
    As,

    // ---- punctuation
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    /// `->`
    Arrow,
    /// `..`
    DotDot,
    /// `_`
    Underscore,
    /// `=`
    Eq,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    /// `&`
    Amp,
    /// `&&`
    AmpAmp,
    /// `|`
    Pipe,
    /// `||`
    PipePipe,
    /// `^`
    Caret,
    /// `!`
    Bang,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    ShlEq,
    ShrEq,

    /// The end of the input.
    Eof,
}

impl TokenKind {
    /// The keyword spelled `word`, if it is one.
    pub fn keyword(word: &str) -> Option<TokenKind> {
        Some(match word {
            "fn" => TokenKind::Fn,
            "inverse" => TokenKind::Inverse,
            "pgf" => TokenKind::Pgf,
            "theta" => TokenKind::Theta,
            "let" => TokenKind::Let,
            "mut" => TokenKind::Mut,
            "if" => TokenKind::If,
            "else" => TokenKind::Else,
            "while" => TokenKind::While,
            "for" => TokenKind::For,
            "in" => TokenKind::In,
            "return" => TokenKind::Return,
            "true" => TokenKind::True,
            "false" => TokenKind::False,
            "as" => TokenKind::As,
            "_" => TokenKind::Underscore,
            _ => return None,
        })
    }

    /// The fixed spelling of a keyword or punctuation token (`None` for identifiers, literals and
    /// the end of input).
    pub fn spelling(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            Ident(_) | Int(_) | Float(_) | Str(_) | Eof => return None,
            Fn => "fn",
            Inverse => "inverse",
            Pgf => "pgf",
            Theta => "theta",
            Let => "let",
            Mut => "mut",
            If => "if",
            Else => "else",
            While => "while",
            For => "for",
            In => "in",
            Return => "return",
            True => "true",
            False => "false",
            As => "as",
            LParen => "(",
            RParen => ")",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Arrow => "->",
            DotDot => "..",
            Underscore => "_",
            Eq => "=",
            EqEq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            AmpAmp => "&&",
            Pipe => "|",
            PipePipe => "||",
            Caret => "^",
            Bang => "!",
            Shl => "<<",
            Shr => ">>",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            ShlEq => "<<=",
            ShrEq => ">>=",
        })
    }

    /// The binary operator this token stands for in an expression.
    pub fn binop(&self) -> Option<BinOp> {
        use TokenKind::*;
        Some(match self {
            Plus => BinOp::Add,
            Minus => BinOp::Sub,
            Star => BinOp::Mul,
            Slash => BinOp::Div,
            Percent => BinOp::Rem,
            Shl => BinOp::Shl,
            Shr => BinOp::Shr,
            Amp => BinOp::BitAnd,
            Caret => BinOp::BitXor,
            Pipe => BinOp::BitOr,
            EqEq => BinOp::Eq,
            Ne => BinOp::Ne,
            Lt => BinOp::Lt,
            Le => BinOp::Le,
            Gt => BinOp::Gt,
            Ge => BinOp::Ge,
            AmpAmp => BinOp::And,
            PipePipe => BinOp::Or,
            _ => return None,
        })
    }

    /// For an assignment operator: `Some(None)` for `=`, `Some(Some(op))` for `op=`.
    pub fn assign_op(&self) -> Option<Option<BinOp>> {
        use TokenKind::*;
        Some(Some(match self {
            Eq => return Some(None),
            PlusEq => BinOp::Add,
            MinusEq => BinOp::Sub,
            StarEq => BinOp::Mul,
            SlashEq => BinOp::Div,
            PercentEq => BinOp::Rem,
            AmpEq => BinOp::BitAnd,
            PipeEq => BinOp::BitOr,
            CaretEq => BinOp::BitXor,
            ShlEq => BinOp::Shl,
            ShrEq => BinOp::Shr,
            _ => return None,
        }))
    }
}

impl Token {
    /// How the token is named in an error message: `` `foo` ``, `` `;` ``, `` `1.5` ``,
    /// `string literal` or `end of file`. `text` is the source the token was lexed from.
    pub fn describe(&self, text: &str) -> String {
        match &self.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Str(_) => "string literal".to_string(),
            kind => match kind.spelling() {
                Some(s) => format!("`{s}`"),
                None => {
                    let src = text.get(self.span.range()).unwrap_or("?");
                    // Keep messages one line and short, whatever the token.
                    let mut shown: String = src.chars().take(40).collect();
                    if shown.len() < src.len() {
                        shown.push('…');
                    }
                    format!("`{shown}`")
                }
            },
        }
    }
}
