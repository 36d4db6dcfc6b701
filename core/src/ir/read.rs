//! The IR text parser: reads what [`super::write`] prints.
//!
//! - `;` starts a comment that runs to the end of the line; blank lines are ignored.
//! - The module is read in two passes, so a `call` may name a function defined further down.
//! - Within a function every definition (block, block parameter, instruction result) is collected
//!   before any use is resolved, so a use may come before its definition in the text (a loop
//!   header's parameter used in a later block, or a value of a later block used in an earlier one).
//!   A name that is never defined, or defined twice, is an error.
//! - Numbering: `v7` becomes `Value` 7 and `block3` becomes `Block` 3, with unused ids in the gaps
//!   (ids that appear nowhere in the function). So text from the printer reads back to text that
//!   prints the same, and text from a compact function (see [`Function::compact`]) reads back to
//!   an equal function. Instructions, which have no names, are numbered in text order. When the
//!   gaps would be very large (more than [`MAX_GAP`] unused ids) values or blocks are instead
//!   numbered in order of definition.
//! - Result types come from the instruction: the opcode's result type, the callee's signature, the
//!   domain of a `theta`, the type of a constant, `i64` for `choice`.
//! - Parameter names that are exactly `p0, p1, ...` (what the printer writes for a function
//!   without names) read back as no names.
//!
//! Malformed text of any kind gives an [`IrParseError`] with a line and column, never a panic.
//! The parser checks the syntax and the names; types and the other invariants are the verifier's
//! job ([`super::verify`]).

use super::constant::parse_f64;
use super::write::is_name_char;
use super::{
    Block, BlockCall, BlockData, Const, Domain, FuncId, FuncKind, Function, Inst, InstData,
    InstKind, Module, Opcode, SegmentOp, Signature, Type, Value, ValueData, ValueDef,
};
use crate::span::Span;
use cranelift_entity::packed_option::ReservedValue;
use cranelift_entity::{EntityRef, PrimaryMap};
use std::collections::{HashMap, HashSet};

/// The most unused ids the parser leaves between the numbers of the text before it falls back to
/// numbering values (or blocks) in order of definition.
pub const MAX_GAP: usize = 1 << 16;

/// Malformed IR text: where (1-based line and column, and the byte span) and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("IR text, line {line}, column {column}: {message}")]
pub struct IrParseError {
    pub line: usize,
    pub column: usize,
    /// The offending bytes of the text (empty at a position).
    pub span: Span,
    pub message: String,
}

impl crate::diagnostic::Located for IrParseError {
    fn span(&self) -> Span {
        self.span
    }
}

type Result<T, E = IrParseError> = std::result::Result<T, E>;

/// Parses a module: any number of functions.
pub fn parse_module(text: &str) -> Result<Module> {
    let mut parser = Parser { text, pos: 0 };
    let mut funcs = Vec::new();
    loop {
        parser.skip_blank_lines();
        if parser.at_end() {
            break;
        }
        funcs.push(parser.function()?);
    }
    build_module(text, funcs)
}

/// Parses a module that holds exactly one function (which may call only itself); its id is
/// `FuncId::new(0)`.
pub fn parse_function(text: &str) -> Result<Module> {
    let module = parse_module(text)?;
    if module.functions.len() != 1 {
        let message = format!(
            "expected exactly one function, found {}",
            module.functions.len()
        );
        return Err(error_at(text, text.len(), text.len(), message));
    }
    Ok(module)
}

// ---- syntax: the text's structure, with names still as numbers

/// A `vN` or `blockN` in the text, with its byte offset.
#[derive(Clone, Copy)]
struct Name {
    num: u32,
    pos: usize,
}

struct FuncSyntax {
    name: String,
    name_pos: usize,
    param_names: Vec<String>,
    kind: FuncKind,
    sig: Signature,
    span: Span,
    blocks: Vec<BlockSyntax>,
}

struct BlockSyntax {
    name: Name,
    params: Vec<(Name, Type)>,
    insts: Vec<InstSyntax>,
}

struct InstSyntax {
    /// Where the instruction starts (its first result, or its operation).
    pos: usize,
    /// Where the operation's name starts.
    op_pos: usize,
    results: Vec<Name>,
    op: OpSyntax,
    span: Span,
}

struct CallSyntax {
    block: Name,
    args: Vec<Name>,
}

enum OpSyntax {
    Const(Const),
    Prim(Opcode, Vec<Name>),
    Call(String, usize, Vec<Name>),
    Theta(Domain, Option<[Name; 2]>, String),
    Choice(u32, String),
    Check(Name, String),
    Record(Name, String),
    Segment(SegmentOp),
    Jump(CallSyntax),
    Brif(Name, CallSyntax, CallSyntax),
    Return(Vec<Name>),
    Fail(String),
}

impl OpSyntax {
    fn name(&self) -> &str {
        match self {
            OpSyntax::Const(Const::F64(_)) => "fconst",
            OpSyntax::Const(Const::I64(_)) => "iconst",
            OpSyntax::Const(Const::Bool(_)) => "bconst",
            OpSyntax::Prim(op, _) => op.name(),
            OpSyntax::Call(..) => "call",
            OpSyntax::Theta(..) => "theta",
            OpSyntax::Choice(..) => "choice",
            OpSyntax::Check(..) => "check",
            OpSyntax::Record(..) => "record",
            OpSyntax::Segment(_) => "segment",
            OpSyntax::Jump(_) => "jump",
            OpSyntax::Brif(..) => "brif",
            OpSyntax::Return(_) => "return",
            OpSyntax::Fail(_) => "fail",
        }
    }
}

// ---- the lexical level

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

fn error_at(text: &str, start: usize, end: usize, message: String) -> IrParseError {
    let mut start = start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let end = end.clamp(start, text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    IrParseError {
        line,
        column,
        span: Span::new(start, end),
        message,
    }
}

/// How a token looks in an error message.
fn describe(rest: &str) -> String {
    match rest.chars().next() {
        None => "end of text".to_string(),
        Some('\n') => "end of line".to_string(),
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
            let word: String = rest
                .chars()
                .take_while(|&c| c.is_ascii_alphanumeric() || c == '_')
                .take(40)
                .collect();
            format!("`{word}`")
        }
        Some(c) => format!("`{}`", c.escape_debug()),
    }
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    fn err<T>(&self, pos: usize, message: impl Into<String>) -> Result<T> {
        Err(error_at(self.text, pos, pos, message.into()))
    }

    fn err_span<T>(&self, start: usize, end: usize, message: impl Into<String>) -> Result<T> {
        Err(error_at(self.text, start, end, message.into()))
    }

    /// "expected X, found Y" at the current position.
    fn expected<T>(&self, what: &str) -> Result<T> {
        self.err(
            self.pos,
            format!("expected {what}, found {}", describe(self.rest())),
        )
    }

    /// Skips spaces, tabs, carriage returns and a comment, but not a newline.
    fn skip_spaces(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.bump(),
                ';' => {
                    let len = self.rest().find('\n').unwrap_or(self.rest().len());
                    self.pos += len;
                }
                _ => break,
            }
        }
    }

    fn skip_blank_lines(&mut self) {
        loop {
            self.skip_spaces();
            if self.peek() == Some('\n') {
                self.bump();
            } else {
                break;
            }
        }
    }

    /// Whether the rest of the line is empty (or a comment).
    fn at_eol(&mut self) -> bool {
        self.skip_spaces();
        matches!(self.peek(), None | Some('\n'))
    }

    fn expect_eol(&mut self) -> Result<()> {
        if !self.at_eol() {
            return self.expected("end of line");
        }
        self.bump();
        Ok(())
    }

    /// Consumes `token` (after spaces) if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_spaces();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            self.expected(&format!("`{token}`"))
        }
    }

    /// The next run of `[A-Za-z0-9_]` (possibly empty) and its start, after spaces.
    fn word(&mut self) -> (&'a str, usize) {
        self.skip_spaces();
        let start = self.pos;
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest().len());
        self.pos += len;
        (&self.text[start..self.pos], start)
    }

    /// The next word without consuming it.
    fn peek_word(&mut self) -> &'a str {
        let save = self.pos;
        let (w, _) = self.word();
        self.pos = save;
        w
    }

    fn keyword(&mut self, kw: &str) -> Result<()> {
        let save = self.pos;
        let (w, _) = self.word();
        if w == kw {
            Ok(())
        } else {
            self.pos = save;
            self.expected(&format!("`{kw}`"))
        }
    }

    /// A `vN` or `blockN`.
    fn numbered(&mut self, prefix: &str, noun: &str, what: &str) -> Result<Name> {
        let save = self.pos;
        let (w, pos) = self.word();
        match numbered_word(w, prefix) {
            Some(Ok(num)) => Ok(Name { num, pos }),
            Some(Err(())) => {
                self.err_span(pos, self.pos, format!("{noun} number too large: `{w}`"))
            }
            None => {
                self.pos = save;
                self.expected(what)
            }
        }
    }

    fn value(&mut self) -> Result<Name> {
        self.numbered("v", "value", "a value (`v0`, `v1`, ...)")
    }

    fn block(&mut self) -> Result<Name> {
        self.numbered("block", "block", "a block (`block0`, `block1`, ...)")
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let save = self.pos;
        let (w, pos) = self.word();
        if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) {
            self.pos = save;
            return self.expected(what);
        }
        match w.parse() {
            Ok(n) => Ok(n),
            Err(_) => self.err_span(pos, self.pos, format!("{what} too large: `{w}`")),
        }
    }

    fn segment_op(&mut self) -> Result<SegmentOp> {
        let save = self.pos;
        let (w, _) = self.word();
        match w {
            "stash" => return Ok(SegmentOp::Stash(self.u32("a stash number")?)),
            "place" => return Ok(SegmentOp::Place(self.u32("a stash number")?)),
            _ => {}
        }
        match SegmentOp::parse(w) {
            Some(op) => Ok(op),
            None => {
                self.pos = save;
                self.expected("`open`, `cut`, `close`, `hold`, `stash` or `place`")
            }
        }
    }

    fn ty(&mut self) -> Result<Type> {
        let save = self.pos;
        let (w, pos) = self.word();
        match Type::from_name(w) {
            Some(t) => Ok(t),
            None if w.is_empty() => {
                self.pos = save;
                self.expected("a type (`f64`, `i64`, `bool`)")
            }
            None => self.err_span(pos, self.pos, format!("unknown type `{w}`")),
        }
    }

    /// A string literal, with the escapes the printer writes.
    fn string(&mut self) -> Result<String> {
        self.skip_spaces();
        let start = self.pos;
        if self.peek() != Some('"') {
            return self.expected("a string");
        }
        self.bump();
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err(start, "unterminated string");
            };
            let at = self.pos;
            self.bump();
            match c {
                '"' => return Ok(out),
                '\n' => return self.err(start, "unterminated string"),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return self.err(start, "unterminated string");
                    };
                    self.bump();
                    match e {
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'u' => {
                            let ok = self.eat_unicode_escape(&mut out);
                            if !ok {
                                return self.err_span(at, self.pos, "invalid `\\u{...}` escape");
                            }
                        }
                        _ => {
                            return self.err_span(
                                at,
                                self.pos,
                                format!("unknown escape `\\{}`", e.escape_debug()),
                            )
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    /// The `{XX}` of a `\u{XX}` escape.
    fn eat_unicode_escape(&mut self, out: &mut String) -> bool {
        let Some(rest) = self.rest().strip_prefix('{') else {
            return false;
        };
        let Some(close) = rest.find('}') else {
            return false;
        };
        let hex = &rest[..close];
        if hex.is_empty() || hex.len() > 6 {
            return false;
        }
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) => {
                out.push(c);
                self.pos += close + 2;
                true
            }
            None => false,
        }
    }

    /// A name that is either `[A-Za-z0-9_.:]+` or a string literal.
    fn bare_name(&mut self, what: &str) -> Result<String> {
        self.skip_spaces();
        if self.peek() == Some('"') {
            return self.string();
        }
        let len = self
            .rest()
            .find(|c: char| !is_name_char(c))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return self.expected(what);
        }
        let name = self.rest()[..len].to_string();
        self.pos += len;
        Ok(name)
    }

    /// `%name` or `%"name"`.
    fn func_name(&mut self) -> Result<(String, usize)> {
        self.skip_spaces();
        let pos = self.pos;
        if self.peek() != Some('%') {
            return self.expected("a function name (`%name`)");
        }
        self.bump();
        if matches!(self.peek(), Some(c) if c == '"' || is_name_char(c)) {
            Ok((self.bare_name("a function name")?, pos))
        } else {
            self.expected("a function name after `%`")
        }
    }

    /// Everything up to (not including) `"` or the end of the line.
    fn raw_until_quote(&mut self) -> (&'a str, usize) {
        self.skip_spaces();
        let start = self.pos;
        let len = self
            .rest()
            .find(['"', '\n', ';'])
            .unwrap_or(self.rest().len());
        self.pos += len;
        (&self.text[start..self.pos], start)
    }

    /// A constant's text: everything up to a space, `,`, `@`, `;` or the end of the line.
    fn atom(&mut self) -> (&'a str, usize) {
        self.skip_spaces();
        let start = self.pos;
        let len = self
            .rest()
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '@' | ';'))
            .unwrap_or(self.rest().len());
        self.pos += len;
        (&self.text[start..self.pos], start)
    }

    /// An optional ` @START..END`.
    fn span_opt(&mut self) -> Result<Option<Span>> {
        if !self.eat("@") {
            return Ok(None);
        }
        let start = self.u32("a span start")?;
        self.expect("..")?;
        let end = self.u32("a span end")?;
        // Not `Span::new`: keep the two numbers exactly as written.
        Ok(Some(Span { start, end }))
    }

    /// Whether the instruction's operands are over (end of line, comment or span).
    fn at_operands_end(&mut self) -> bool {
        self.skip_spaces();
        matches!(self.peek(), None | Some('\n') | Some('@'))
    }

    /// `v1, v2, ...` up to the end of the operands (possibly none).
    fn value_list_to_end(&mut self) -> Result<Vec<Name>> {
        let mut out = Vec::new();
        if self.at_operands_end() {
            return Ok(out);
        }
        loop {
            out.push(self.value()?);
            if !self.eat(",") {
                return Ok(out);
            }
        }
    }

    /// `(v1, v2, ...)` (possibly empty), the `(` already consumed.
    fn value_list_to_paren(&mut self) -> Result<Vec<Name>> {
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            out.push(self.value()?);
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    /// `block1(v1, v2)` or `block1`.
    fn block_call(&mut self) -> Result<CallSyntax> {
        let block = self.block()?;
        let args = if self.eat("(") {
            self.value_list_to_paren()?
        } else {
            Vec::new()
        };
        Ok(CallSyntax { block, args })
    }

    // ---- the grammar

    fn function(&mut self) -> Result<FuncSyntax> {
        let start = self.pos;
        self.keyword("function")?;
        let (name, name_pos) = self.func_name()?;
        self.expect("(")?;
        let mut params = Vec::new();
        let mut param_names = Vec::new();
        let mut theta_params = 0usize;
        let mut first_theta = None;
        if !self.eat(")") {
            loop {
                self.skip_spaces();
                let param_pos = self.pos;
                // `theta` marks a θ parameter, unless it is the name itself (`theta: f64`).
                let is_theta = self.word().0 == "theta" && !self.eat(":");
                if !is_theta {
                    self.pos = param_pos;
                }
                let pname = self.param_name()?;
                self.expect(":")?;
                let ty = self.ty()?;
                if is_theta {
                    theta_params += 1;
                    first_theta.get_or_insert(param_pos);
                } else if theta_params > 0 {
                    return self.err(
                        param_pos,
                        "the θ parameters (marked `theta`) must come after all the others",
                    );
                }
                params.push(ty);
                param_names.push(pname);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.expect("->")?;
        let returns = if self.eat("(") {
            let mut returns = Vec::new();
            if !self.eat(")") {
                loop {
                    returns.push(self.ty()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            returns
        } else {
            vec![self.ty()?]
        };
        let kind = match self.peek_word() {
            "inverse" => {
                self.word();
                self.expect("(")?;
                let of = self.bare_name("the name of the inverted function")?;
                self.expect(")")?;
                FuncKind::Inverse {
                    of,
                    outputs: params.len() - theta_params,
                }
            }
            "pgf" => {
                self.word();
                self.expect("(")?;
                let of = self.bare_name("the name of the function")?;
                self.expect(")")?;
                FuncKind::Pgf { of }
            }
            "generated_inverse" => {
                self.word();
                self.expect("(")?;
                let of = self.bare_name("the name of the inverted function")?;
                self.expect(")")?;
                FuncKind::GeneratedInverse { of }
            }
            "generated_pgf" => {
                self.word();
                self.expect("(")?;
                let of = self.bare_name("the name of the function")?;
                self.expect(")")?;
                FuncKind::GeneratedPgf { of }
            }
            _ => FuncKind::Fn,
        };
        if let (Some(pos), false) = (first_theta, matches!(kind, FuncKind::Inverse { .. })) {
            return self.err(
                pos,
                "only an inverse (`-> ... inverse(F)`) has `theta` parameters",
            );
        }
        let span = self.span_opt()?;
        self.expect("{")?;
        self.expect_eol()?;

        let mut blocks: Vec<BlockSyntax> = Vec::new();
        loop {
            self.skip_blank_lines();
            if self.at_end() {
                return self.err(start, format!("function %{name} has no closing `}}`"));
            }
            if self.eat("}") {
                self.expect_eol()?;
                break;
            }
            let w = self.peek_word();
            if numbered_word(w, "block").is_some() {
                blocks.push(self.block_header()?);
            } else {
                let inst = self.inst()?;
                match blocks.last_mut() {
                    Some(b) => b.insts.push(inst),
                    None => return self.err(inst.pos, "instruction before the first block"),
                }
            }
        }

        // The printer writes `p0, p1, ...` for a function without names.
        let all_default = param_names
            .iter()
            .enumerate()
            .all(|(i, n)| *n == format!("p{i}"));
        if all_default {
            param_names.clear();
        }
        Ok(FuncSyntax {
            name,
            name_pos,
            param_names,
            kind,
            sig: Signature { params, returns },
            span: span.unwrap_or_default(),
            blocks,
        })
    }

    fn param_name(&mut self) -> Result<String> {
        self.skip_spaces();
        if self.peek() == Some('"') {
            return self.string();
        }
        let save = self.pos;
        let (w, _) = self.word();
        if w.is_empty() || w.starts_with(|c: char| c.is_ascii_digit()) {
            self.pos = save;
            return self.expected("a parameter name");
        }
        Ok(w.to_string())
    }

    /// `block1(v3: f64, v4: i64):` or `block1:`, and the end of its line.
    fn block_header(&mut self) -> Result<BlockSyntax> {
        let name = self.block()?;
        let mut params = Vec::new();
        if self.eat("(") && !self.eat(")") {
            loop {
                let v = self.value()?;
                self.expect(":")?;
                let ty = self.ty()?;
                params.push((v, ty));
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.expect(":")?;
        self.expect_eol()?;
        Ok(BlockSyntax {
            name,
            params,
            insts: Vec::new(),
        })
    }

    /// One instruction line.
    fn inst(&mut self) -> Result<InstSyntax> {
        self.skip_spaces();
        let pos = self.pos;
        let mut results = Vec::new();
        if numbered_word(self.peek_word(), "v").is_some() {
            loop {
                results.push(self.value()?);
                if self.eat("=") {
                    break;
                }
                if !self.eat(",") {
                    return self.expected("`,` or `=` after the results");
                }
            }
        }
        let (opname, op_pos) = self.word();
        let op = match opname {
            "fconst" => {
                let (a, at) = self.atom();
                match parse_f64(a) {
                    Some(x) => OpSyntax::Const(Const::F64(x)),
                    None => return self.bad_atom(a, at, "an f64 constant"),
                }
            }
            "iconst" => {
                let (a, at) = self.atom();
                match a.parse::<i64>() {
                    Ok(x) => OpSyntax::Const(Const::I64(x)),
                    _ => return self.bad_atom(a, at, "an i64 constant"),
                }
            }
            "bconst" => {
                let (a, at) = self.atom();
                match a {
                    "true" => OpSyntax::Const(Const::Bool(true)),
                    "false" => OpSyntax::Const(Const::Bool(false)),
                    _ => return self.bad_atom(a, at, "`true` or `false`"),
                }
            }
            "call" => {
                let (callee, callee_pos) = self.func_name()?;
                self.expect("(")?;
                let args = self.value_list_to_paren()?;
                OpSyntax::Call(callee, callee_pos, args)
            }
            "theta" => {
                let (raw, at) = self.raw_until_quote();
                // `theta real within v1, v2 "role"`: the bounds follow the domain.
                let (d, within) = match raw.find(" within ") {
                    Some(k) => {
                        self.pos = at + k + " within ".len();
                        let lo = self.value()?;
                        self.expect(",")?;
                        let hi = self.value()?;
                        (&raw[..k], Some([lo, hi]))
                    }
                    None => (raw, None),
                };
                let d = d.trim_end();
                let Some(domain) = Domain::parse(d) else {
                    return self.err_span(
                        at,
                        at + d.len(),
                        format!(
                            "expected a domain (`real`, `nonzero`, `[lo, hi]`, `int`, \
                             `int[lo..=hi]`, `bool`) and a role string, found `{d}`"
                        ),
                    );
                };
                OpSyntax::Theta(domain, within, self.string()?)
            }
            "choice" => {
                let n = self.u32("the number of choices")?;
                OpSyntax::Choice(n, self.string()?)
            }
            "check" => {
                let cond = self.value()?;
                self.expect(",")?;
                OpSyntax::Check(cond, self.string()?)
            }
            "record" => {
                let value = self.value()?;
                self.expect(",")?;
                OpSyntax::Record(value, self.string()?)
            }
            "segment" => OpSyntax::Segment(self.segment_op()?),
            "jump" => OpSyntax::Jump(self.block_call()?),
            "brif" => {
                let cond = self.value()?;
                self.expect(",")?;
                let then_dest = self.block_call()?;
                self.expect(",")?;
                let else_dest = self.block_call()?;
                OpSyntax::Brif(cond, then_dest, else_dest)
            }
            "return" => OpSyntax::Return(self.value_list_to_end()?),
            "fail" => OpSyntax::Fail(self.string()?),
            "" => {
                self.pos = op_pos;
                return self.expected("an instruction");
            }
            "function" => {
                return self.err_span(
                    op_pos,
                    op_pos + opname.len(),
                    "`function` inside a function: is the `}` of the previous one missing?",
                )
            }
            other => match Opcode::from_name(other) {
                Some(op) => OpSyntax::Prim(op, self.value_list_to_end()?),
                None => {
                    return self.err_span(
                        op_pos,
                        op_pos + other.len(),
                        format!("unknown instruction `{other}`"),
                    )
                }
            },
        };
        let span = self.span_opt()?.unwrap_or_default();
        self.expect_eol()?;
        Ok(InstSyntax {
            pos,
            op_pos,
            results,
            op,
            span,
        })
    }

    fn bad_atom<T>(&self, atom: &str, at: usize, what: &str) -> Result<T> {
        if atom.is_empty() {
            self.err(
                at,
                format!("expected {what}, found {}", describe(&self.text[at..])),
            )
        } else {
            self.err_span(
                at,
                at + atom.len(),
                format!("expected {what}, found `{atom}`"),
            )
        }
    }
}

/// `Some(Ok(n))` if `word` is `prefix` followed by a decimal number, `Some(Err(()))` if that number
/// does not fit in a u32, `None` if `word` has another form.
fn numbered_word(word: &str, prefix: &str) -> Option<Result<u32, ()>> {
    let digits = word.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // `v01` would print back as `v1`.
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    Some(digits.parse().map_err(|_| ()))
}

// ---- from syntax to IR

fn build_module(text: &str, funcs: Vec<FuncSyntax>) -> Result<Module> {
    let mut by_name: HashMap<&str, (FuncId, &Signature)> = HashMap::new();
    for (i, f) in funcs.iter().enumerate() {
        if by_name.contains_key(f.name.as_str()) {
            let message = format!("function %{} is defined twice", f.name);
            return Err(error_at(text, f.name_pos, f.name_pos + 1, message));
        }
        by_name.insert(&f.name, (FuncId::new(i), &f.sig));
    }
    let mut built = Vec::with_capacity(funcs.len());
    for f in &funcs {
        built.push(build_function(text, f, &by_name)?);
    }
    let mut module = Module::new();
    for f in built {
        // Names were checked to be unique above.
        let _ = module.add(f);
    }
    Ok(module)
}

/// Maps textual numbers to ids: the number itself when the gaps are small, otherwise the order of
/// definition.
struct Numbering {
    map: HashMap<u32, u32>,
    len: usize,
}

impl Numbering {
    /// `defs` in order of definition, already checked to be distinct.
    fn new(defs: &[u32]) -> Numbering {
        let max = defs.iter().max().map_or(0, |&m| m as usize + 1);
        if max <= defs.len() + MAX_GAP {
            Numbering {
                map: defs.iter().map(|&n| (n, n)).collect(),
                len: max,
            }
        } else {
            Numbering {
                map: defs
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| (n, i as u32))
                    .collect(),
                len: defs.len(),
            }
        }
    }
}

fn build_function(
    text: &str,
    f: &FuncSyntax,
    funcs: &HashMap<&str, (FuncId, &Signature)>,
) -> Result<Function> {
    let err =
        |name: Name, len: usize, message: String| error_at(text, name.pos, name.pos + len, message);

    // Definitions, in text order: blocks; block parameters and instruction results.
    let mut block_defs: HashSet<u32> = HashSet::new();
    let mut block_order = Vec::new();
    let mut value_defs: HashSet<u32> = HashSet::new();
    let mut value_order = Vec::new();
    // The type of each value of `value_order`, and where it is defined.
    let mut value_info: Vec<(Type, DefSyntax)> = Vec::new();
    let mut inst_count = 0usize;
    let mut define_value = |name: Name, ty: Type, def: DefSyntax| -> Result<()> {
        if !value_defs.insert(name.num) {
            let len = format!("v{}", name.num).len();
            return Err(err(name, len, format!("v{} is defined twice", name.num)));
        }
        value_order.push(name.num);
        value_info.push((ty, def));
        Ok(())
    };
    for (bi, b) in f.blocks.iter().enumerate() {
        if !block_defs.insert(b.name.num) {
            let len = format!("block{}", b.name.num).len();
            return Err(err(
                b.name,
                len,
                format!("block{} is defined twice", b.name.num),
            ));
        }
        block_order.push(b.name.num);
        for (pi, &(v, ty)) in b.params.iter().enumerate() {
            define_value(v, ty, DefSyntax::Param(bi, pi as u32))?;
        }
        for inst in &b.insts {
            let types = result_types(text, inst, funcs)?;
            if types.len() != inst.results.len() {
                let op = inst.op.name();
                let message = match (types.len(), inst.results.len()) {
                    (0, _) => format!("`{op}` defines no value"),
                    (1, 0) => format!("`{op}` defines a value: write `vN = {op} ...`"),
                    (n, m) => format!(
                        "`{op}` here defines {n} value{}, but {m} {} named",
                        if n == 1 { "" } else { "s" },
                        if m == 1 { "is" } else { "are" },
                    ),
                };
                return Err(error_at(text, inst.pos, inst.op_pos, message));
            }
            for (ri, (&v, ty)) in inst.results.iter().zip(types).enumerate() {
                define_value(v, ty, DefSyntax::Result(inst_count, ri as u32))?;
            }
            inst_count += 1;
        }
    }

    let blocks_num = Numbering::new(&block_order);
    let values_num = Numbering::new(&value_order);
    let block_id = |n: &Name| -> Result<Block> {
        match blocks_num.map.get(&n.num) {
            Some(&id) => Ok(Block::from_u32(id)),
            None => {
                let len = format!("block{}", n.num).len();
                Err(err(*n, len, format!("block{} is not defined", n.num)))
            }
        }
    };
    let value_id = |n: &Name| -> Result<Value> {
        match values_num.map.get(&n.num) {
            Some(&id) => Ok(Value::from_u32(id)),
            None => {
                let len = format!("v{}", n.num).len();
                Err(err(*n, len, format!("v{} is not defined", n.num)))
            }
        }
    };
    let values_of = |names: &[Name]| -> Result<Vec<Value>> { names.iter().map(value_id).collect() };
    let block_call = |c: &CallSyntax| -> Result<BlockCall> {
        Ok(BlockCall::new(block_id(&c.block)?, values_of(&c.args)?))
    };

    // Blocks, with empty blocks in the gaps of the numbering.
    let mut blocks: PrimaryMap<Block, BlockData> = PrimaryMap::with_capacity(blocks_num.len);
    for _ in 0..blocks_num.len {
        blocks.push(BlockData::default());
    }
    let layout: Vec<Block> = f
        .blocks
        .iter()
        .map(|b| block_id(&b.name))
        .collect::<Result<_>>()?;

    // Values: unused ids fill the gaps.
    let filler = ValueData {
        ty: Type::F64,
        def: ValueDef::Param(Block::reserved_value(), u32::MAX),
    };
    let mut values: PrimaryMap<Value, ValueData> = PrimaryMap::with_capacity(values_num.len);
    for _ in 0..values_num.len {
        values.push(filler.clone());
    }
    for (&num, (ty, def)) in value_order.iter().zip(&value_info) {
        let v = Value::from_u32(values_num.map[&num]);
        let def = match *def {
            DefSyntax::Param(bi, i) => ValueDef::Param(layout[bi], i),
            DefSyntax::Result(ii, i) => ValueDef::Result(Inst::new(ii), i),
        };
        values[v] = ValueData { ty: *ty, def };
    }

    // Instructions, in text order.
    let mut insts: PrimaryMap<Inst, InstData> = PrimaryMap::with_capacity(inst_count);
    for (b, &block) in f.blocks.iter().zip(&layout) {
        let params = values_of(&b.params.iter().map(|p| p.0).collect::<Vec<_>>())?;
        let data = &mut blocks[block];
        data.params = params;
        for inst in &b.insts {
            let kind = match &inst.op {
                OpSyntax::Const(c) => InstKind::Const(*c),
                OpSyntax::Prim(op, args) => InstKind::Prim {
                    op: *op,
                    args: values_of(args)?.into(),
                },
                OpSyntax::Call(name, _, args) => InstKind::Call {
                    // Checked by `result_types`.
                    callee: funcs.get(name.as_str()).map_or(FuncId::new(0), |c| c.0),
                    args: values_of(args)?.into(),
                },
                OpSyntax::Theta(domain, within, role) => {
                    InstKind::Theta(Box::new(crate::ir::ThetaRead {
                        domain: *domain,
                        role: role.clone(),
                        within: match within {
                            Some([lo, hi]) => Some([value_id(lo)?, value_id(hi)?]),
                            None => None,
                        },
                    }))
                }
                OpSyntax::Choice(n, role) => InstKind::Choice {
                    n: *n,
                    role: role.clone(),
                },
                OpSyntax::Check(cond, reason) => InstKind::Check {
                    cond: value_id(cond)?,
                    reason: reason.clone(),
                },
                OpSyntax::Record(value, role) => InstKind::Record {
                    value: value_id(value)?,
                    role: role.clone(),
                },
                OpSyntax::Segment(op) => InstKind::Segment(*op),
                OpSyntax::Jump(dest) => InstKind::Jump {
                    dest: block_call(dest)?,
                },
                OpSyntax::Brif(cond, then_dest, else_dest) => InstKind::Brif {
                    cond: value_id(cond)?,
                    then_dest: Box::new(block_call(then_dest)?),
                    else_dest: Box::new(block_call(else_dest)?),
                },
                OpSyntax::Return(args) => InstKind::Return {
                    args: values_of(args)?.into(),
                },
                OpSyntax::Fail(reason) => InstKind::Fail {
                    reason: reason.clone(),
                },
            };
            let id = insts.push(InstData {
                kind,
                results: values_of(&inst.results)?.into(),
                span: inst.span,
            });
            blocks[block].insts.push(id);
        }
    }

    Ok(Function {
        name: f.name.clone(),
        kind: f.kind.clone(),
        sig: f.sig.clone(),
        param_names: f.param_names.clone(),
        span: f.span,
        blocks,
        insts,
        values,
        layout,
    })
}

#[derive(Clone, Copy)]
enum DefSyntax {
    /// The `i`-th parameter of the `b`-th block of the text.
    Param(usize, u32),
    /// The `i`-th result of the `n`-th instruction of the text.
    Result(usize, u32),
}

/// The types of the values an instruction defines.
fn result_types(
    text: &str,
    inst: &InstSyntax,
    funcs: &HashMap<&str, (FuncId, &Signature)>,
) -> Result<Vec<Type>> {
    Ok(match &inst.op {
        OpSyntax::Const(c) => vec![c.ty()],
        OpSyntax::Prim(op, _) => vec![op.result_type()],
        OpSyntax::Call(name, pos, _) => match funcs.get(name.as_str()) {
            Some((_, sig)) => sig.returns.clone(),
            None => {
                let message = format!("unknown function %{name}");
                return Err(error_at(text, *pos, pos + 1 + name.len(), message));
            }
        },
        OpSyntax::Theta(domain, ..) => vec![domain.ty()],
        OpSyntax::Choice(..) => vec![Type::I64],
        OpSyntax::Check(..)
        | OpSyntax::Record(..)
        | OpSyntax::Segment(_)
        | OpSyntax::Jump(_)
        | OpSyntax::Brif(..)
        | OpSyntax::Return(_)
        | OpSyntax::Fail(_) => Vec::new(),
    })
}
