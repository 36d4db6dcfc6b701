//! The parser: tokens → [`ast::Module`], by recursive descent, with an operator-precedence loop
//! for binary operators.
//!
//! This module owns the concrete grammar of `.pinv` (see `LANGUAGE.md`):
//!
//! ```text
//! module  = item*
//! item    = ("fn" | "inverse" | "pgf") IDENT "(" (param ("," param)* ","?)? ")" "->" type block
//! param   = "theta"? IDENT ":" type
//! type    = IDENT | "(" type ("," type)+ ","? ")" | "(" type ")"
//! block   = "{" stmt* expr? "}"
//! stmt    = "let" pattern (":" type)? "=" expr ";"
//!         | IDENT ("=" | "+=" | "-=" | ... | ">>=") expr ";"   (";" optional before "}")
//!         | "while" expr block
//!         | "for" IDENT "in" expr ".." expr block
//!         | blocklike ";"?          (blocklike = if-expression or block)
//!         | expr ";"
//!         | ";"                     (an empty statement, dropped)
//! pattern = "mut"? IDENT | "_" | "(" pattern ("," pattern)+ ","? ")" | "(" pattern ")"
//! expr    = cast (BINOP cast)*      (BINOP: `* / %`, `+ -`, `<< >>`, `&`, `^`, `|`, comparisons,
//!                                    `&&`, `||`, from tightest to loosest)
//! cast    = unary ("as" type)*
//! unary   = ("-" | "!") unary | primary
//! primary = INT | FLOAT | "true" | "false" | IDENT | IDENT "(" args ")" | "fail" "(" STRING ")"
//!         | "(" expr ")" | "(" expr ("," expr)+ ","? ")" | block | if | "return" expr?
//! ```
//!
//! Binary precedence is [`BinOp::precedence`]; all binary operators are left-associative and
//! comparisons do not chain (`a < b < c` is [`CompileError::ChainedComparison`]). A block-like
//! expression (`if`, `{}`) at the start of a statement ends the statement, as in Rust. A `-`
//! directly before a number literal is folded into the literal, which is how `i64::MIN` is written.
//!
//! Invariants:
//! - [`parse`] never panics and never overflows the stack: its recursion is bounded by
//!   [`MAX_DEPTH`] nesting levels (parentheses, blocks, calls, unary operators: exceeding it is
//!   [`CompileError::TooDeep`]). A chain of binary operators (`a + b + ...`) is not nesting: the
//!   parser reads it with a loop, however long. The tree it returns is at most [`MAX_HEIGHT`]
//!   nodes high (a left-associative chain of n operators is n high), so that later recursive
//!   passes and `Drop` need only a bounded stack; a higher one is [`CompileError::TooLong`];
//! - every error has a span inside (or at the end of) the text; when the lexer fails, its error
//!   is reported unless the parser found an error earlier in the text.

use super::ast::{
    self, BinOp, Block, Expr, ExprKind, Ident, Item, ItemKind, Param, Pattern, PatternKind, Stmt,
    StmtKind, TypeExpr, TypeExprKind, UnOp,
};
use super::lexer;
use super::token::{Token, TokenKind};
use crate::error::CompileError;
use crate::span::Span;

/// How deeply constructs may nest (parentheses, blocks, calls, unary operators).
pub const MAX_DEPTH: usize = 256;

/// How high an expression tree may be: a chain of binary operators counts each operator, so
/// this is also the longest chain (`x + 1.0 + 1.0 + ...`) one expression may have.
pub const MAX_HEIGHT: usize = 4096;

type PResult<T> = Result<T, CompileError>;

/// Parses a whole `.pinv` module.
pub fn parse(text: &str) -> Result<ast::Module, CompileError> {
    let lexed = lexer::tokenize(text);
    let mut parser = Parser::new(text, lexed.tokens);
    let result = parser.module();
    match lexed.error {
        // The parser reached the end of the tokens, which is where the lexer failed: that failure
        // is the first error in the text.
        Some(error) if parser.at_eof() => Err(error),
        _ => result,
    }
}

struct Parser<'a> {
    text: &'a str,
    /// Non-empty, ends with `Eof`.
    tokens: Vec<Token>,
    /// Index of the current token; never past the final `Eof`.
    pos: usize,
    /// End offset of the last consumed token.
    prev_end: usize,
    /// Current nesting depth of recursive constructs.
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, mut tokens: Vec<Token>) -> Parser<'a> {
        if !matches!(
            tokens.last(),
            Some(Token {
                kind: TokenKind::Eof,
                ..
            })
        ) {
            tokens.push(Token {
                kind: TokenKind::Eof,
                span: Span::point(text.len()),
            });
        }
        Parser {
            text,
            tokens,
            pos: 0,
            prev_end: 0,
            depth: 0,
        }
    }

    // ---- token access

    /// The token `n` places ahead (the final `Eof` beyond the end).
    fn nth(&self, n: usize) -> &Token {
        let last = self.tokens.len().saturating_sub(1);
        let i = self.pos.saturating_add(n).min(last);
        &self.tokens[i]
    }

    fn peek(&self) -> &Token {
        self.nth(0)
    }

    fn kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.kind() == kind
    }

    fn at_eof(&self) -> bool {
        self.at(&TokenKind::Eof)
    }

    /// Consumes the current token (never the final `Eof`) and returns its span.
    fn advance(&mut self) -> Span {
        let span = self.peek().span;
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
            self.prev_end = span.end as usize;
        }
        span
    }

    fn eat(&mut self, kind: &TokenKind) -> Option<Span> {
        if self.at(kind) {
            Some(self.advance())
        } else {
            None
        }
    }

    /// Consumes a token of a fixed kind, or fails with "expected `x`".
    fn expect(&mut self, kind: &TokenKind) -> PResult<Span> {
        if let Some(span) = self.eat(kind) {
            return Ok(span);
        }
        let what = match kind.spelling() {
            Some(s) => format!("`{s}`"),
            None => "token".to_string(),
        };
        Err(self.unexpected(what))
    }

    /// "expected `what`, found <the current token>".
    fn unexpected(&self, expected: impl Into<String>) -> CompileError {
        let token = self.peek();
        if let TokenKind::Str(_) = token.kind {
            return CompileError::StringOutsideFail { span: token.span };
        }
        CompileError::Expected {
            expected: expected.into(),
            found: token.describe(self.text),
            span: token.span,
        }
    }

    /// Like [`Self::unexpected`], but for a missing `;`: when the current token is on a later line
    /// than the previous one, the error points just after the previous token, where the `;` goes.
    fn missing_semicolon(&self, expected: &str) -> CompileError {
        let mut error = self.unexpected(expected);
        if let CompileError::Expected { span, .. } = &mut error {
            let gap = self.text.get(self.prev_end..span.start as usize);
            if gap.is_some_and(|g| g.contains('\n')) {
                *span = Span::point(self.prev_end);
            }
        }
        error
    }

    fn ident(&mut self) -> PResult<Ident> {
        if let TokenKind::Ident(name) = self.kind() {
            let name = name.clone();
            let span = self.advance();
            Ok(Ident { name, span })
        } else {
            Err(self.unexpected("identifier"))
        }
    }

    // ---- depth and height limits

    /// Enters one level of nesting; fails if that is too deep.
    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(CompileError::TooDeep {
                limit: MAX_DEPTH,
                span: self.peek().span,
            });
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let result = f(self);
        self.leave();
        result
    }

    /// Checks the height of a node about to be built.
    fn height(&self, height: usize, span: Span) -> PResult<usize> {
        if height > MAX_HEIGHT {
            Err(CompileError::TooLong {
                limit: MAX_HEIGHT,
                span,
            })
        } else {
            Ok(height)
        }
    }

    fn node(&self, kind: ExprKind, span: Span, height: usize) -> PResult<(Expr, usize)> {
        let height = self.height(height, span)?;
        Ok((Expr { kind, span }, height))
    }

    // ---- items

    fn module(&mut self) -> PResult<ast::Module> {
        let mut items = Vec::new();
        while !self.at_eof() {
            items.push(self.item()?);
        }
        Ok(ast::Module { items })
    }

    fn item(&mut self) -> PResult<Item> {
        let kind = match self.kind() {
            TokenKind::Fn => ItemKind::Fn,
            TokenKind::Inverse => ItemKind::Inverse,
            TokenKind::Pgf => ItemKind::Pgf,
            _ => return Err(self.unexpected("`fn`, `inverse` or `pgf`")),
        };
        let start = self.advance();
        let name = self.ident()?;
        self.expect(&TokenKind::LParen)?;
        let mut params = Vec::new();
        while !self.at(&TokenKind::RParen) {
            params.push(self.param()?);
            if self.eat(&TokenKind::Comma).is_none() && !self.at(&TokenKind::RParen) {
                return Err(self.unexpected("`,` or `)`"));
            }
        }
        self.advance();
        self.expect(&TokenKind::Arrow)?;
        let ret = self.type_expr()?;
        let (body, _) = self.block()?;
        let span = start.to(body.span);
        Ok(Item {
            kind,
            name,
            params,
            ret,
            body,
            span,
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let theta = self.eat(&TokenKind::Theta);
        let name = self.ident()?;
        self.expect(&TokenKind::Colon)?;
        let ty = self.type_expr()?;
        let span = theta.unwrap_or(name.span).to(ty.span);
        Ok(Param {
            name,
            ty,
            theta: theta.is_some(),
            span,
        })
    }

    // ---- types and patterns

    fn type_expr(&mut self) -> PResult<TypeExpr> {
        self.nested(Self::type_inner)
    }

    fn type_inner(&mut self) -> PResult<TypeExpr> {
        match self.kind() {
            TokenKind::Ident(_) => {
                let name = self.ident()?;
                Ok(TypeExpr {
                    kind: TypeExprKind::Name(name.name),
                    span: name.span,
                })
            }
            TokenKind::LParen => {
                let (elems, span, trailing) = self.parenthesised("type", Self::type_expr)?;
                Ok(match tuple_or_single(elems, trailing, span, "type")? {
                    Ok(mut single) => {
                        single.span = span;
                        single
                    }
                    Err(elems) => TypeExpr {
                        kind: TypeExprKind::Tuple(elems),
                        span,
                    },
                })
            }
            _ => Err(self.unexpected("type")),
        }
    }

    fn pattern(&mut self) -> PResult<Pattern> {
        self.nested(Self::pattern_inner)
    }

    fn pattern_inner(&mut self) -> PResult<Pattern> {
        match self.kind() {
            TokenKind::Mut => {
                let start = self.advance();
                let name = self.ident()?;
                let span = start.to(name.span);
                Ok(Pattern {
                    kind: PatternKind::Bind {
                        name,
                        mutable: true,
                    },
                    span,
                })
            }
            TokenKind::Ident(_) => {
                let name = self.ident()?;
                let span = name.span;
                Ok(Pattern {
                    kind: PatternKind::Bind {
                        name,
                        mutable: false,
                    },
                    span,
                })
            }
            TokenKind::Underscore => {
                let span = self.advance();
                Ok(Pattern {
                    kind: PatternKind::Wild,
                    span,
                })
            }
            TokenKind::LParen => {
                let (elems, span, trailing) = self.parenthesised("pattern", Self::pattern)?;
                Ok(match tuple_or_single(elems, trailing, span, "pattern")? {
                    Ok(mut single) => {
                        single.span = span;
                        single
                    }
                    Err(elems) => Pattern {
                        kind: PatternKind::Tuple(elems),
                        span,
                    },
                })
            }
            _ => Err(self.unexpected("pattern")),
        }
    }

    /// `( x, y, ... )` with at least one element and an optional trailing comma, the current token
    /// being `(`. Returns the elements, the span from `(` to `)`, and whether a comma came last.
    fn parenthesised<T>(
        &mut self,
        what: &str,
        mut element: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<(Vec<T>, Span, bool)> {
        let open = self.advance();
        if self.at(&TokenKind::RParen) {
            return Err(self.unexpected(what));
        }
        let mut elems = vec![element(self)?];
        let mut trailing = false;
        while !self.at(&TokenKind::RParen) {
            if self.eat(&TokenKind::Comma).is_none() {
                return Err(self.unexpected("`,` or `)`"));
            }
            trailing = true;
            if self.at(&TokenKind::RParen) {
                break;
            }
            elems.push(element(self)?);
            trailing = false;
        }
        let close = self.advance();
        Ok((elems, open.to(close), trailing))
    }

    // ---- blocks and statements

    /// A block; returns it with its height.
    fn block(&mut self) -> PResult<(Block, usize)> {
        self.nested(Self::block_inner)
    }

    fn block_inner(&mut self) -> PResult<(Block, usize)> {
        let open = self.expect(&TokenKind::LBrace)?;
        let mut stmts = Vec::new();
        let mut tail = None;
        let mut height = 0;
        loop {
            let (stmt, h) = match self.kind() {
                TokenKind::RBrace => break,
                TokenKind::Eof => return Err(self.unexpected("`}`")),
                TokenKind::Semi => {
                    self.advance();
                    continue;
                }
                TokenKind::Let => self.let_stmt()?,
                TokenKind::While => self.while_stmt()?,
                TokenKind::For => self.for_stmt()?,
                TokenKind::Ident(_) if self.nth(1).kind.assign_op().is_some() => {
                    self.assign_stmt()?
                }
                TokenKind::If | TokenKind::LBrace => {
                    // A block-like expression ends its statement, with or without `;`.
                    let (expr, h) = if self.at(&TokenKind::If) {
                        self.if_expr()?
                    } else {
                        self.block_expr()?
                    };
                    if self.at(&TokenKind::RBrace) {
                        height = height.max(h);
                        tail = Some(Box::new(expr));
                        break;
                    }
                    let span = match self.eat(&TokenKind::Semi) {
                        Some(semi) => expr.span.to(semi),
                        None => expr.span,
                    };
                    self.stmt(StmtKind::Expr(expr), span, h)?
                }
                _ => {
                    let (expr, h) = self.expr()?;
                    match self.kind() {
                        TokenKind::Semi => {
                            let span = expr.span.to(self.advance());
                            self.stmt(StmtKind::Expr(expr), span, h)?
                        }
                        TokenKind::RBrace => {
                            height = height.max(h);
                            tail = Some(Box::new(expr));
                            break;
                        }
                        TokenKind::Eof => return Err(self.unexpected("`}`")),
                        _ => return Err(self.missing_semicolon("`;` or `}`")),
                    }
                }
            };
            height = height.max(h);
            stmts.push(stmt);
        }
        let close = self.advance();
        let span = open.to(close);
        let height = self.height(height + 1, span)?;
        Ok((Block { stmts, tail, span }, height))
    }

    fn stmt(&self, kind: StmtKind, span: Span, child_height: usize) -> PResult<(Stmt, usize)> {
        let height = self.height(child_height + 1, span)?;
        Ok((Stmt { kind, span }, height))
    }

    fn semicolon(&mut self) -> PResult<Span> {
        match self.eat(&TokenKind::Semi) {
            Some(span) => Ok(span),
            None => Err(self.missing_semicolon("`;`")),
        }
    }

    #[inline(never)]
    fn let_stmt(&mut self) -> PResult<(Stmt, usize)> {
        let start = self.advance();
        let pat = self.pattern()?;
        let ty = match self.eat(&TokenKind::Colon) {
            Some(_) => Some(self.type_expr()?),
            None => None,
        };
        self.expect(&TokenKind::Eq)?;
        let (init, h) = self.expr()?;
        let end = self.semicolon()?;
        self.stmt(StmtKind::Let { pat, ty, init }, start.to(end), h)
    }

    #[inline(never)]
    fn assign_stmt(&mut self) -> PResult<(Stmt, usize)> {
        let target = self.ident()?;
        let op = match self.kind().assign_op() {
            Some(op) => op,
            None => return Err(self.unexpected("`=`")),
        };
        self.advance();
        let (value, h) = self.expr()?;
        // As in Rust, the last statement of a block may leave out its `;`: `{ r = x }`.
        let end = if self.at(&TokenKind::RBrace) {
            value.span
        } else {
            self.semicolon()?
        };
        let span = target.span.to(end);
        self.stmt(StmtKind::Assign { target, op, value }, span, h)
    }

    #[inline(never)]
    fn while_stmt(&mut self) -> PResult<(Stmt, usize)> {
        let start = self.advance();
        let (cond, ch) = self.expr()?;
        let (body, bh) = self.block()?;
        let span = start.to(body.span);
        self.stmt(StmtKind::While { cond, body }, span, ch.max(bh))
    }

    #[inline(never)]
    fn for_stmt(&mut self) -> PResult<(Stmt, usize)> {
        let start = self.advance();
        let var = self.ident()?;
        self.expect(&TokenKind::In)?;
        let (lo, lh) = self.expr()?;
        self.expect(&TokenKind::DotDot)?;
        let (hi, hh) = self.expr()?;
        let (body, bh) = self.block()?;
        let span = start.to(body.span);
        let kind = StmtKind::For {
            var,
            start: lo,
            end: hi,
            body,
        };
        self.stmt(kind, span, lh.max(hh).max(bh))
    }

    // ---- expressions (each returns the expression and its height)

    fn expr(&mut self) -> PResult<(Expr, usize)> {
        self.nested(Self::binary)
    }

    /// A binary expression, by operator precedence with explicit stacks (so that the stack
    /// used per nesting level does not grow with the number of precedence levels).
    fn binary(&mut self) -> PResult<(Expr, usize)> {
        let first = self.cast()?;
        if self.kind().binop().is_none() {
            return Ok(first);
        }
        // Operands with their heights and whether they are comparisons built here (a
        // parenthesised comparison is an ordinary operand); operators waiting for their right
        // operand, in increasing precedence.
        let mut operands = vec![(first.0, first.1, false)];
        let mut operators: Vec<(BinOp, Span)> = Vec::new();
        while let Some(op) = self.kind().binop() {
            let op_span = self.advance();
            while operators
                .last()
                .is_some_and(|(top, _)| top.precedence() >= op.precedence())
            {
                self.reduce(&mut operands, &mut operators)?;
            }
            if op.is_comparison() && operands.last().is_some_and(|o| o.2) {
                return Err(CompileError::ChainedComparison { span: op_span });
            }
            operators.push((op, op_span));
            let (rhs, height) = self.cast()?;
            operands.push((rhs, height, false));
        }
        while !operators.is_empty() {
            self.reduce(&mut operands, &mut operators)?;
        }
        match (operands.pop(), operands.is_empty()) {
            (Some((expr, height, _)), true) => Ok((expr, height)),
            // Unreachable: each reduction turns two operands and one operator into one operand.
            _ => Err(CompileError::Expected {
                expected: "expression".to_string(),
                found: self.peek().describe(self.text),
                span: self.peek().span,
            }),
        }
    }

    /// Applies the topmost operator to the two topmost operands.
    fn reduce(
        &self,
        operands: &mut Vec<(Expr, usize, bool)>,
        operators: &mut Vec<(BinOp, Span)>,
    ) -> PResult<()> {
        let (Some((op, op_span)), Some((rhs, rh, _)), Some((lhs, lh, _))) =
            (operators.pop(), operands.pop(), operands.pop())
        else {
            // Unreachable: there is always one more operand than operators.
            return Err(CompileError::Expected {
                expected: "expression".to_string(),
                found: self.peek().describe(self.text),
                span: self.peek().span,
            });
        };
        let span = lhs.span.to(rhs.span);
        let height = self.height(lh.max(rh) + 1, op_span)?;
        let expr = Expr {
            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            span,
        };
        operands.push((expr, height, op.is_comparison()));
        Ok(())
    }

    /// A unary expression followed by any number of `as T`.
    fn cast(&mut self) -> PResult<(Expr, usize)> {
        let (mut expr, mut height) = self.unary()?;
        while let Some(as_span) = self.eat(&TokenKind::As) {
            let ty = self.type_expr()?;
            let span = expr.span.to(ty.span);
            height = self.height(height + 1, as_span)?;
            expr = Expr {
                kind: ExprKind::Cast(Box::new(expr), ty),
                span,
            };
        }
        Ok((expr, height))
    }

    fn unary(&mut self) -> PResult<(Expr, usize)> {
        let op = match self.kind() {
            TokenKind::Minus => UnOp::Neg,
            TokenKind::Bang => UnOp::Not,
            _ => return self.primary(),
        };
        let op_span = self.advance();
        if op == UnOp::Neg {
            match *self.kind() {
                TokenKind::Int(value) => {
                    let lit = self.advance();
                    let span = op_span.to(lit);
                    let value = if let Ok(v) = i64::try_from(value) {
                        v.wrapping_neg()
                    } else if value == 1u64 << 63 {
                        i64::MIN
                    } else {
                        return Err(self.too_large(span));
                    };
                    return self.node(ExprKind::Int(value), span, 1);
                }
                TokenKind::Float(value) => {
                    let lit = self.advance();
                    return self.node(ExprKind::Float(-value), op_span.to(lit), 1);
                }
                _ => {}
            }
        }
        let (operand, height) = self.nested(Self::unary)?;
        let span = op_span.to(operand.span);
        self.node(ExprKind::Unary(op, Box::new(operand)), span, height + 1)
    }

    fn too_large(&self, span: Span) -> CompileError {
        let text = self.text.get(span.range()).unwrap_or("").to_string();
        CompileError::IntegerTooLarge { text, span }
    }

    fn primary(&mut self) -> PResult<(Expr, usize)> {
        match self.kind() {
            &TokenKind::Int(value) => {
                let span = self.advance();
                match i64::try_from(value) {
                    Ok(v) => self.node(ExprKind::Int(v), span, 1),
                    Err(_) => Err(self.too_large(span)),
                }
            }
            &TokenKind::Float(value) => {
                let span = self.advance();
                self.node(ExprKind::Float(value), span, 1)
            }
            TokenKind::True | TokenKind::False => {
                let value = self.at(&TokenKind::True);
                let span = self.advance();
                self.node(ExprKind::Bool(value), span, 1)
            }
            TokenKind::Ident(_) => self.name_or_call(),
            TokenKind::LParen => self.paren_or_tuple(),
            TokenKind::LBrace => self.block_expr(),
            TokenKind::If => self.if_expr(),
            TokenKind::Return => self.return_expr(),
            _ => Err(self.unexpected("expression")),
        }
    }

    fn name_or_call(&mut self) -> PResult<(Expr, usize)> {
        let callee = self.ident()?;
        if !self.at(&TokenKind::LParen) {
            let span = callee.span;
            return self.node(ExprKind::Name(callee), span, 1);
        }
        if callee.name == "fail" {
            if let TokenKind::Str(reason) = &self.nth(1).kind {
                let reason = reason.clone();
                self.advance(); // `(`
                self.advance(); // the string
                let close = self.expect(&TokenKind::RParen)?;
                return self.node(ExprKind::Fail(reason), callee.span.to(close), 1);
            }
        }
        self.advance(); // `(`
        let mut args = Vec::new();
        let mut height = 0;
        while !self.at(&TokenKind::RParen) {
            let (arg, h) = self.expr()?;
            args.push(arg);
            height = height.max(h);
            if self.eat(&TokenKind::Comma).is_none() && !self.at(&TokenKind::RParen) {
                return Err(self.unexpected("`,` or `)`"));
            }
        }
        let close = self.advance();
        let span = callee.span.to(close);
        self.node(ExprKind::Call { callee, args }, span, height + 1)
    }

    fn paren_or_tuple(&mut self) -> PResult<(Expr, usize)> {
        let (elems, span, trailing) = self.parenthesised("expression", Self::expr)?;
        let single = tuple_or_single(elems, trailing, span, "expression")?;
        match single {
            Ok((inner, height)) => Ok((
                Expr {
                    kind: inner.kind,
                    span,
                },
                height,
            )),
            Err(elems) => {
                let height = elems.iter().map(|(_, h)| *h).max().unwrap_or(0);
                let elems = elems.into_iter().map(|(e, _)| e).collect();
                self.node(ExprKind::Tuple(elems), span, height + 1)
            }
        }
    }

    fn block_expr(&mut self) -> PResult<(Expr, usize)> {
        let (block, height) = self.block()?;
        let span = block.span;
        self.node(ExprKind::Block(block), span, height + 1)
    }

    fn if_expr(&mut self) -> PResult<(Expr, usize)> {
        self.nested(Self::if_inner)
    }

    fn if_inner(&mut self) -> PResult<(Expr, usize)> {
        let start = self.advance();
        let (cond, ch) = self.expr()?;
        let (then, th) = self.block()?;
        let mut span = start.to(then.span);
        let mut height = ch.max(th);
        let else_ = if self.eat(&TokenKind::Else).is_some() {
            let (else_, eh) = match self.kind() {
                TokenKind::If => self.if_expr()?,
                TokenKind::LBrace => self.block_expr()?,
                _ => return Err(self.unexpected("`{` or `if`")),
            };
            span = span.to(else_.span);
            height = height.max(eh);
            Some(Box::new(else_))
        } else {
            None
        };
        let kind = ExprKind::If {
            cond: Box::new(cond),
            then,
            else_,
        };
        self.node(kind, span, height + 1)
    }

    fn return_expr(&mut self) -> PResult<(Expr, usize)> {
        let start = self.advance();
        if !starts_expr(self.kind()) {
            return self.node(ExprKind::Return(None), start, 1);
        }
        let (value, height) = self.expr()?;
        let span = start.to(value.span);
        self.node(ExprKind::Return(Some(Box::new(value))), span, height + 1)
    }
}

/// Whether an expression can begin with this token (used after `return`).
fn starts_expr(kind: &TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Ident(_)
            | TokenKind::Int(_)
            | TokenKind::Float(_)
            | TokenKind::Str(_)
            | TokenKind::True
            | TokenKind::False
            | TokenKind::LParen
            | TokenKind::LBrace
            | TokenKind::If
            | TokenKind::Return
            | TokenKind::Minus
            | TokenKind::Bang
    )
}

/// Interprets the result of [`Parser::parenthesised`]: `(x)` is `Ok(x)`, `(x, y, ...)` is
/// `Err(elements)`, and `(x,)` is an error (there are no one-element tuples).
#[allow(clippy::type_complexity)]
fn tuple_or_single<T>(
    mut elems: Vec<T>,
    trailing: bool,
    span: Span,
    what: &str,
) -> PResult<Result<T, Vec<T>>> {
    if elems.len() > 1 {
        return Ok(Err(elems));
    }
    match elems.pop() {
        Some(single) if !trailing => Ok(Ok(single)),
        _ => Err(CompileError::NotAllowed {
            what: format!("a one-element tuple {what}"),
            why: "tuples have two or more elements; remove the trailing comma".to_string(),
            span,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::SourceFile;

    // ---- helpers

    fn parse_ok(text: &str) -> ast::Module {
        parse(text).unwrap_or_else(|e| {
            let file = SourceFile::new("test.pinv", text);
            panic!("{}", crate::diagnostic::render(&file, &e))
        })
    }

    fn parse_err(text: &str) -> CompileError {
        match parse(text) {
            Ok(m) => panic!("parsed: {m:?}"),
            Err(e) => e,
        }
    }

    /// Parses `text` as the tail of a function body.
    fn expr_of(text: &str) -> Result<Expr, CompileError> {
        let module = parse(&format!("fn t() -> f64 {{ {text} }}"))?;
        let body = module.items.into_iter().next().map(|item| item.body);
        match body.and_then(|b| b.tail) {
            Some(tail) => Ok(*tail),
            None => panic!("{text:?} has no tail"),
        }
    }

    /// `text` parsed and printed back fully parenthesised (without the outermost parentheses).
    fn show(text: &str) -> String {
        match expr_of(text) {
            Ok(e) => show_expr(&e, true),
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    fn show_expr(e: &Expr, top: bool) -> String {
        let wrap = |s: String| if top { s } else { format!("({s})") };
        match &e.kind {
            ExprKind::Float(v) => format!("{v:?}"),
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Name(n) => n.name.clone(),
            ExprKind::Unary(op, x) => wrap(format!("{}{}", op.symbol(), show_expr(x, false))),
            ExprKind::Binary(op, l, r) => wrap(format!(
                "{} {} {}",
                show_expr(l, false),
                op.symbol(),
                show_expr(r, false)
            )),
            ExprKind::Cast(x, ty) => wrap(format!("{} as {}", show_expr(x, false), show_ty(ty))),
            ExprKind::Call { callee, args } => {
                let args: Vec<_> = args.iter().map(|a| show_expr(a, true)).collect();
                format!("{}({})", callee.name, args.join(", "))
            }
            ExprKind::Tuple(xs) => {
                let xs: Vec<_> = xs.iter().map(|a| show_expr(a, true)).collect();
                format!("({})", xs.join(", "))
            }
            ExprKind::If { cond, then, else_ } => {
                let mut s = format!("if {} {}", show_expr(cond, true), show_block(then));
                if let Some(e) = else_ {
                    s += &format!(" else {}", show_expr(e, true));
                }
                wrap(s)
            }
            ExprKind::Block(b) => show_block(b),
            ExprKind::Return(None) => wrap("return".to_string()),
            ExprKind::Return(Some(x)) => wrap(format!("return {}", show_expr(x, true))),
            ExprKind::Fail(r) => format!("fail({r:?})"),
        }
    }

    fn show_block(b: &Block) -> String {
        let mut parts: Vec<String> = b.stmts.iter().map(show_stmt).collect();
        if let Some(t) = &b.tail {
            parts.push(show_expr(t, true));
        }
        format!("{{ {} }}", parts.join(" "))
    }

    fn show_stmt(s: &Stmt) -> String {
        match &s.kind {
            StmtKind::Let { pat, ty, init } => {
                let ty = ty.as_ref().map(|t| format!(": {}", show_ty(t)));
                format!(
                    "let {}{} = {};",
                    show_pat(pat),
                    ty.unwrap_or_default(),
                    show_expr(init, true)
                )
            }
            StmtKind::Assign { target, op, value } => format!(
                "{} {}= {};",
                target.name,
                op.map(BinOp::symbol).unwrap_or(""),
                show_expr(value, true)
            ),
            StmtKind::While { cond, body } => {
                format!("while {} {}", show_expr(cond, true), show_block(body))
            }
            StmtKind::For {
                var,
                start,
                end,
                body,
            } => format!(
                "for {} in {}..{} {}",
                var.name,
                show_expr(start, true),
                show_expr(end, true),
                show_block(body)
            ),
            StmtKind::Expr(e) => format!("{};", show_expr(e, true)),
        }
    }

    fn show_ty(t: &TypeExpr) -> String {
        match &t.kind {
            TypeExprKind::Name(n) => n.clone(),
            TypeExprKind::Tuple(ts) => {
                let ts: Vec<_> = ts.iter().map(show_ty).collect();
                format!("({})", ts.join(", "))
            }
        }
    }

    fn show_pat(p: &Pattern) -> String {
        match &p.kind {
            PatternKind::Bind { name, mutable } => {
                format!("{}{}", if *mutable { "mut " } else { "" }, name.name)
            }
            PatternKind::Wild => "_".to_string(),
            PatternKind::Tuple(ps) => {
                let ps: Vec<_> = ps.iter().map(show_pat).collect();
                format!("({})", ps.join(", "))
            }
        }
    }

    // ---- property: random operator trees, printed with minimal parentheses, parse back to
    // themselves.

    #[derive(Clone, Debug)]
    enum Tree {
        /// A name or a non-negative literal, as printed.
        Leaf(&'static str),
        Un(UnOp, Box<Tree>),
        Bin(BinOp, Box<Tree>, Box<Tree>),
        Cast(Box<Tree>, &'static str),
    }

    const ALL_BINOPS: [BinOp; 18] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::BitAnd,
        BinOp::BitXor,
        BinOp::BitOr,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::And,
        BinOp::Or,
    ];

    fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
        use proptest::prelude::*;
        let leaf = prop::sample::select(vec!["a", "b", "x", "f64", "3", "42", "1.5", "0.25"])
            .prop_map(Tree::Leaf);
        leaf.prop_recursive(5, 48, 2, |inner| {
            let unop = prop::sample::select(vec![UnOp::Neg, UnOp::Not]);
            let binop = prop::sample::select(ALL_BINOPS.to_vec());
            let ty = prop::sample::select(vec!["f64", "i64", "bool"]);
            prop_oneof![
                (unop, inner.clone()).prop_map(|(op, x)| {
                    // `-3` would be a literal, not a negation: keep literals out of unary operands.
                    let x = match x {
                        Tree::Leaf(s) if s.starts_with(|c: char| c.is_ascii_digit()) => {
                            Tree::Leaf("y")
                        }
                        x => x,
                    };
                    Tree::Un(op, Box::new(x))
                }),
                (binop, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Tree::Bin(
                    op,
                    Box::new(l),
                    Box::new(r)
                )),
                (inner, ty).prop_map(|(x, t)| Tree::Cast(Box::new(x), t)),
            ]
        })
    }

    /// Fully parenthesised, in the format of [`show_expr`].
    fn full(t: &Tree, top: bool) -> String {
        let wrap = |s: String| if top { s } else { format!("({s})") };
        match t {
            Tree::Leaf(s) => s.to_string(),
            Tree::Un(op, x) => wrap(format!("{}{}", op.symbol(), full(x, false))),
            Tree::Bin(op, l, r) => wrap(format!(
                "{} {} {}",
                full(l, false),
                op.symbol(),
                full(r, false)
            )),
            Tree::Cast(x, ty) => wrap(format!("{} as {ty}", full(x, false))),
        }
    }

    fn tree_prec(t: &Tree) -> u8 {
        match t {
            Tree::Leaf(_) => 100,
            Tree::Un(..) => 12,
            Tree::Cast(..) => 11,
            Tree::Bin(op, ..) => op.precedence(),
        }
    }

    fn is_cmp(t: &Tree) -> bool {
        matches!(t, Tree::Bin(op, ..) if op.is_comparison())
    }

    /// With as few parentheses as the precedence rules allow; `sep` goes around binary operators.
    fn minimal(t: &Tree, sep: &str) -> String {
        let paren = |x: &Tree, needed: bool| {
            let s = minimal(x, sep);
            if needed {
                format!("({s})")
            } else {
                s
            }
        };
        match t {
            Tree::Leaf(s) => s.to_string(),
            Tree::Un(op, x) => format!("{}{}", op.symbol(), paren(x, tree_prec(x) < 12)),
            Tree::Cast(x, ty) => format!("{} as {ty}", paren(x, tree_prec(x) < 11)),
            Tree::Bin(op, l, r) => {
                let p = op.precedence();
                let cmp = op.is_comparison();
                format!(
                    "{}{sep}{}{sep}{}",
                    paren(l, tree_prec(l) < p || (cmp && is_cmp(l))),
                    op.symbol(),
                    paren(r, tree_prec(r) <= p)
                )
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn operator_trees_round_trip(t in tree(), tight in proptest::prelude::any::<bool>()) {
            let expected = full(&t, true);
            // Fully parenthesised input.
            let parsed = expr_of(&expected).map(|e| show_expr(&e, true));
            proptest::prop_assert_eq!(parsed, Ok(expected.clone()));
            // Minimal parentheses, with or without spaces around the operators.
            let text = minimal(&t, if tight { "" } else { " " });
            let parsed = expr_of(&text).map(|e| show_expr(&e, true));
            proptest::prop_assert_eq!(parsed, Ok(expected), "{}", text);
        }
    }

    fn line_col(text: &str, offset: u32) -> (usize, usize) {
        let lc = SourceFile::new("t", text).line_col(offset);
        (lc.line, lc.column)
    }

    // ---- samples and corpus

    const LANGUAGE_FUNCTIONS: &str = r#"
// A comment runs to the end of the line.
fn f(x: f64, y: f64, z: f64) -> f64 {
    x * y + z
}

fn kin2(a1: f64, a2: f64) -> (f64, f64) {      // several outputs: a tuple
    let x = cos(a1) + cos(a1 + a2);
    let y = sin(a1) + sin(a1 + a2);
    (x, y)
}
"#;

    /// The statements of LANGUAGE.md, in a function (`...` replaced by statements).
    const LANGUAGE_STATEMENTS: &str = r#"
fn stmts(x: f64, n: i64, c: bool, d: bool) -> f64 {
    let a = x * 2.0;            // immutable binding, type inferred
    let b: f64 = a + 1.0;        // with an annotation
    let mut s = 0;              // mutable
    s = s + 1;                  // assignment, only to a `mut` binding
    s += 1;                     // also -=, *=, /=, %=
    let (p, q) = kin2(a, b);    // destructure a tuple result
    if c { s -= 1; } else if d { s *= 2; } else { s /= 3; }   // as a statement, or as an expression with an else
    let mut i = 0;
    while i < n { i += 1; s %= 7; }
    for i in 0..n { s = s + i; }       // i64 range, end exclusive; n is evaluated once
    if s > 100 { return p; }
    let a = if c { p } else { q };
    return a;                   // early return, from anywhere
}
"#;

    const LANGUAGE_OVERLAYS: &str = r#"
fn softplus(x: f64) -> f64 { log(1.0 + exp(x)) }
inverse softplus(y: f64) -> f64 { log(exp(y) - 1.0) }

fn square(x: f64) -> f64 { x * x }
inverse square(y: f64, theta s: bool) -> f64 {
    if s { sqrt(y) } else { -sqrt(y) }
}
pgf square(x: f64) -> bool { x >= 0.0 }     // the θ that gives x back: square⁻¹(square(x), pgf(x)) = x
"#;

    const LANGUAGE_EXPRESSIONS: &str = r#"
fn exprs(a: f64, i: i64, c: bool) -> f64 {
    let lits = (1.5, 2.0e-3, 1e9, 3, -7, 0xff, true, false);
    let conv = 1 as f64 + 2.0;
    let t = x as i64;
    let m = max(1, 2) + abs(i) + min(i, 3) + (i << 2) + (i >> 1) + (i & 3) + (i ^ 5) + (i | 6);
    let b = !c && (c || !c) && i == 1 && i != 2 && i < 3 && i <= 4 && i > 5 && i >= 6;
    let f = pow(a, 2.0) + atan2(a, 1.0) + sinh(a) + cosh(a) + tanh(a) + floor(a) - a / 2.0 % 3.0;
    if c { a } else { -a }
}
"#;

    const CORPUS: [(&str, &str); 10] = [
        (
            "branches",
            include_str!("../../../tests/corpus/branches.pinv"),
        ),
        ("fanout", include_str!("../../../tests/corpus/fanout.pinv")),
        ("ints", include_str!("../../../tests/corpus/ints.pinv")),
        ("loops", include_str!("../../../tests/corpus/loops.pinv")),
        (
            "straight",
            include_str!("../../../tests/corpus/straight.pinv"),
        ),
        ("unary", include_str!("../../../tests/corpus/unary.pinv")),
        // Wrong on purpose, but only for the checker: they parse.
        (
            "bad/assign_immutable",
            include_str!("../../../tests/corpus/bad/assign_immutable.pinv"),
        ),
        (
            "bad/inverse_mismatch",
            include_str!("../../../tests/corpus/bad/inverse_mismatch.pinv"),
        ),
        (
            "bad/mixed_types",
            include_str!("../../../tests/corpus/bad/mixed_types.pinv"),
        ),
        (
            "bad/unknown_name",
            include_str!("../../../tests/corpus/bad/unknown_name.pinv"),
        ),
    ];

    const UNCLOSED: &str = include_str!("../../../tests/corpus/bad/unclosed.pinv");

    #[test]
    fn language_samples_parse() {
        let m = parse_ok(LANGUAGE_FUNCTIONS);
        assert_eq!(m.items.len(), 2);
        let kin2 = &m.items[1];
        assert_eq!(kin2.name.name, "kin2");
        assert!(matches!(&kin2.ret.kind, TypeExprKind::Tuple(ts) if ts.len() == 2));
        assert_eq!(kin2.body.stmts.len(), 2);
        assert!(matches!(
            kin2.body.tail.as_deref().map(|e| &e.kind),
            Some(ExprKind::Tuple(_))
        ));

        let m = parse_ok(LANGUAGE_STATEMENTS);
        assert_eq!(m.items[0].body.stmts.len(), 13);
        assert!(m.items[0].body.tail.is_none());

        let m = parse_ok(LANGUAGE_OVERLAYS);
        let kinds: Vec<_> = m.items.iter().map(|i| i.kind).collect();
        use ItemKind::*;
        assert_eq!(kinds, vec![Fn, Inverse, Fn, Inverse, Pgf]);
        let inv = &m.items[3];
        assert_eq!(inv.params.len(), 2);
        assert!(!inv.params[0].theta);
        assert!(inv.params[1].theta);
        assert_eq!(inv.params[1].name.name, "s");

        parse_ok(LANGUAGE_EXPRESSIONS);
    }

    #[test]
    fn corpus_parses() {
        for (name, text) in CORPUS {
            let m = parse(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert!(!m.items.is_empty(), "{name}");
            for item in &m.items {
                let src = text.get(item.span.range()).unwrap_or("");
                let keyword = match item.kind {
                    ItemKind::Fn => "fn ",
                    ItemKind::Inverse => "inverse ",
                    ItemKind::Pgf => "pgf ",
                };
                assert!(
                    src.starts_with(keyword) && src.ends_with('}'),
                    "{name}: {src}"
                );
            }
        }
    }

    #[test]
    fn unclosed_corpus_file() {
        let e = parse_err(UNCLOSED);
        assert!(e.to_string().contains("expected `}`"), "{e}");
        assert_eq!(e.to_string(), "expected `}`, found end of file");
        assert_eq!(e.span(), Span::point(UNCLOSED.len()));
    }

    #[test]
    fn item_structure_and_spans() {
        let text = "fn f(x: f64, theta t: (i64, bool),) -> (f64, f64) { (x, 1.0) }";
        let m = parse_ok(text);
        let item = &m.items[0];
        assert_eq!(item.span, Span::new(0, text.len()));
        assert_eq!(item.params.len(), 2);
        assert_eq!(&text[item.params[1].span.range()], "theta t: (i64, bool)");
        assert_eq!(&text[item.ret.span.range()], "(f64, f64)");
        assert_eq!(&text[item.body.span.range()], "{ (x, 1.0) }");
        let tail = item.body.tail.as_deref().map(|e| e.span);
        assert_eq!(tail.map(|s| &text[s.range()]), Some("(x, 1.0)"));
        // Parameters may be empty; a module may be empty.
        parse_ok("fn g() -> i64 { 1 }");
        assert_eq!(parse_ok("").items.len(), 0);
        assert_eq!(parse_ok("  // nothing\n /* at all */ ").items.len(), 0);
    }

    // ---- precedence

    #[test]
    fn precedence() {
        for (text, expected) in [
            ("a + b * c << 2 & d", "((a + (b * c)) << 2) & d"),
            ("-x as f64", "(-x) as f64"),
            ("!a && b || c", "((!a) && b) || c"),
            ("a || b && c", "a || (b && c)"),
            ("a | b ^ c & d", "a | (b ^ (c & d))"),
            ("a & b ^ c | d", "((a & b) ^ c) | d"),
            ("a - b - c", "(a - b) - c"),
            ("a / b * c % d", "((a / b) * c) % d"),
            ("a == b && c != d || e", "((a == b) && (c != d)) || e"),
            ("a < b + c", "a < (b + c)"),
            ("a | b < c ^ d", "(a | b) < (c ^ d)"),
            ("a >> 1 << 2", "(a >> 1) << 2"),
            ("a + b << c + d", "(a + b) << (c + d)"),
            ("x as i64 as f64", "(x as i64) as f64"),
            ("1 + 2 as f64 * 3.0", "1 + ((2 as f64) * 3.0)"),
            ("a * -b", "a * (-b)"),
            ("- -x", "-(-x)"),
            ("!!x", "!(!x)"),
            ("!x == y", "(!x) == y"),
            ("a -1", "a - 1"),
            ("a-1", "a - 1"),
            ("a - -1", "a - -1"),
            ("-1.5 * x", "-1.5 * x"),
            ("-2 - 3", "-2 - 3"),
            ("(a + b) * c", "(a + b) * c"),
            ("((a))", "a"),
            ("f(a, b + 1,) * g()", "f(a, b + 1) * g()"),
            ("(a, b * c, (d, e))", "(a, b * c, (d, e))"),
            ("1 + if c { 1 } else { 2 }", "1 + (if c { 1 } else { 2 })"),
            (
                "if a { 1 } else if b { 2 } else { 3 }",
                "if a { 1 } else if b { 2 } else { 3 }",
            ),
            ("{ let x = 1; x } - 1", "{ let x = 1; x };"),
            ("return a + b", "return a + b"),
            ("fail(\"no\\n\")", "fail(\"no\\n\")"),
            ("a < b == (c < d)", "__chained__"),
        ] {
            if expected == "__chained__" {
                assert!(matches!(
                    expr_of(text),
                    Err(CompileError::ChainedComparison { .. })
                ));
                continue;
            }
            if text.starts_with('{') {
                // A block at the start of a statement ends the statement (as in Rust), so this is
                // a statement followed by the tail `-1`.
                let m = parse_ok(&format!("fn t() -> f64 {{ {text} }}"));
                let body = &m.items[0].body;
                assert_eq!(show_stmt(&body.stmts[0]), expected);
                assert!(matches!(
                    body.tail.as_deref().map(|e| &e.kind),
                    Some(ExprKind::Int(-1))
                ));
                continue;
            }
            assert_eq!(show(text), expected, "{text}");
        }
    }

    #[test]
    fn parenthesised_comparisons_may_nest() {
        assert_eq!(show("(a < b) == (c < d)"), "(a < b) == (c < d)");
        assert_eq!(show("a < b && b < c"), "(a < b) && (b < c)");
    }

    #[test]
    fn statements() {
        let text = "fn f(x: i64) -> i64 {
            let mut s: i64 = 0;
            let (a, (b, _), mut c) = g(x);
            let (d) = x;
            s <<= 1; s >>= 1; s &= 1; s |= 1; s ^= 1; s -= 1;
            ;;
            while s < 10 { s += 1 ; }
            for i in 0..x - 1 { s = s + i; }
            if s > 3 { s = 0; }
            { s += 1; }
            if s > 3 { 1 } else { 2 };
            g(s);
            return;
            s = 1
        }";
        let m = parse_ok(text);
        let shown: Vec<_> = m.items[0].body.stmts.iter().map(show_stmt).collect();
        assert_eq!(
            shown,
            vec![
                "let mut s: i64 = 0;",
                "let (a, (b, _), mut c) = g(x);",
                "let d = x;",
                "s <<= 1;",
                "s >>= 1;",
                "s &= 1;",
                "s |= 1;",
                "s ^= 1;",
                "s -= 1;",
                "while s < 10 { s += 1; }",
                "for i in 0..x - 1 { s = s + i; }",
                "if s > 3 { s = 0; };",
                "{ s += 1; };",
                "if s > 3 { 1 } else { 2 };",
                "g(s);",
                "return;",
                "s = 1;",
            ]
        );
        let stmts = &m.items[0].body.stmts;
        let span = |i: usize| &text[stmts[i].span.range()];
        assert_eq!(span(0), "let mut s: i64 = 0;");
        assert_eq!(span(3), "s <<= 1;");
        assert_eq!(span(9), "while s < 10 { s += 1 ; }");
        assert_eq!(span(12), "{ s += 1; }");
        assert_eq!(span(13), "if s > 3 { 1 } else { 2 };");
    }

    #[test]
    fn return_forms() {
        let m = parse_ok("fn f(x: f64) -> f64 { if x > 0.0 { return } return -x }");
        let body = &m.items[0].body;
        assert_eq!(show_stmt(&body.stmts[0]), "if x > 0.0 { return };");
        assert_eq!(
            body.tail.as_deref().map(|e| show_expr(e, true)),
            Some("return -x".into())
        );
        assert_eq!(show("return"), "return");
    }

    #[test]
    fn spans_of_expressions() {
        let text = "fn t() -> f64 { (a + b) * -c as f64 }";
        let m = parse_ok(text);
        let tail = m.items[0].body.tail.as_deref().cloned();
        let Some(Expr {
            kind: ExprKind::Binary(_, l, r),
            span,
        }) = tail
        else {
            panic!("not a binary expression");
        };
        assert_eq!(&text[span.range()], "(a + b) * -c as f64");
        assert_eq!(&text[l.span.range()], "(a + b)");
        assert_eq!(&text[r.span.range()], "-c as f64");
        let ExprKind::Cast(neg, ty) = &r.kind else {
            panic!("not a cast")
        };
        assert_eq!(&text[neg.span.range()], "-c");
        assert_eq!(&text[ty.span.range()], "f64");
    }

    // ---- literals

    #[test]
    fn literals() {
        let lit = |text: &str| expr_of(text).map(|e| e.kind);
        assert_eq!(lit("0xff"), Ok(ExprKind::Int(255)));
        assert_eq!(lit("0b1010_1010"), Ok(ExprKind::Int(0xaa)));
        assert_eq!(lit("0o777"), Ok(ExprKind::Int(0o777)));
        assert_eq!(lit("1_000_000"), Ok(ExprKind::Int(1_000_000)));
        assert_eq!(lit("2.0e-3"), Ok(ExprKind::Float(2.0e-3)));
        assert_eq!(lit("1e9"), Ok(ExprKind::Float(1e9)));
        assert_eq!(lit("1.5"), Ok(ExprKind::Float(1.5)));
        assert_eq!(lit("-1.5"), Ok(ExprKind::Float(-1.5)));
        assert_eq!(lit("-7"), Ok(ExprKind::Int(-7)));
        assert_eq!(lit("- 7"), Ok(ExprKind::Int(-7)));
        assert_eq!(lit("true"), Ok(ExprKind::Bool(true)));
        assert_eq!(lit("false"), Ok(ExprKind::Bool(false)));
        assert_eq!(lit("9223372036854775807"), Ok(ExprKind::Int(i64::MAX)));
        assert_eq!(lit("-9223372036854775808"), Ok(ExprKind::Int(i64::MIN)));
        assert_eq!(lit("-0x8000000000000000"), Ok(ExprKind::Int(i64::MIN)));
        let e = expr_of("-9223372036854775808");
        assert_eq!(e.map(|e| e.span), Ok(Span::new(16, 36)));
        // `-x` is negation, not a literal.
        assert!(matches!(lit("-x"), Ok(ExprKind::Unary(UnOp::Neg, _))));
        // Parenthesised, the minus is an operator and the literal must fit on its own.
        assert!(matches!(
            lit("-(9223372036854775808)"),
            Err(CompileError::IntegerTooLarge { .. })
        ));
    }

    #[test]
    fn too_large_integers() {
        let cases = [
            ("9223372036854775808", "9223372036854775808"),
            ("-9223372036854775809", "-9223372036854775809"),
            ("0x8000000000000000", "0x8000000000000000"),
            ("18446744073709551616", "18446744073709551616"),
            ("99999999999999999999999", "99999999999999999999999"),
        ];
        for (text, shown) in cases {
            match expr_of(text) {
                Err(CompileError::IntegerTooLarge { text: t, span }) => {
                    assert_eq!(t, shown);
                    assert_eq!(span, Span::new(16, 16 + shown.len()));
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn ranges() {
        let m = parse_ok("fn f(n: i64) -> i64 { for i in 0..n { } for j in -1..10 { } 0 }");
        let stmts = &m.items[0].body.stmts;
        let StmtKind::For { start, end, .. } = &stmts[0].kind else {
            panic!("not a for")
        };
        assert_eq!(start.kind, ExprKind::Int(0));
        assert!(matches!(&end.kind, ExprKind::Name(n) if n.name == "n"));
        let StmtKind::For { start, end, .. } = &stmts[1].kind else {
            panic!("not a for")
        };
        assert_eq!(start.kind, ExprKind::Int(-1));
        assert_eq!(end.kind, ExprKind::Int(10));
    }

    // ---- errors

    #[test]
    fn error_unclosed_brace_at_eof() {
        let text = "fn f(x: f64) -> f64 {\n    let y = x;\n";
        let e = parse_err(text);
        assert_eq!(e.to_string(), "expected `}`, found end of file");
        assert_eq!(e.span(), Span::point(text.len()));
        assert_eq!(line_col(text, e.span().start), (3, 1));
    }

    #[test]
    fn error_unexpected_char() {
        let text = "fn f(x: f64) -> f64 {\n    x $ 1\n}\n";
        let e = parse_err(text);
        assert_eq!(
            e,
            CompileError::UnexpectedChar {
                ch: '$',
                span: Span::new(28, 29)
            }
        );
        assert_eq!(line_col(text, e.span().start), (2, 7));
        assert_eq!(e.to_string(), "unexpected character `$`");
    }

    #[test]
    fn error_chained_comparison() {
        let text = "fn f(x: f64) -> bool {\n    0.0 < x < 1.0\n}\n";
        let e = parse_err(text);
        assert_eq!(
            e,
            CompileError::ChainedComparison {
                span: Span::new(35, 36)
            }
        );
        assert_eq!(line_col(text, e.span().start), (2, 13));
    }

    #[test]
    fn error_string_outside_fail() {
        let text = "fn f(x: f64) -> f64 {\n    let s = \"no\";\n    x\n}\n";
        let e = parse_err(text);
        assert_eq!(
            e,
            CompileError::StringOutsideFail {
                span: Span::new(34, 38)
            }
        );
        assert_eq!(line_col(text, e.span().start), (2, 13));
        // Also as a call argument, or anywhere else a string turns up.
        assert!(matches!(
            parse_err("fn f() -> f64 { g(\"x\") }"),
            CompileError::StringOutsideFail {
                span: Span { start: 18, end: 21 }
            }
        ));
        assert!(matches!(
            parse_err("fn f() -> f64 { fail(\"x\", \"y\") }"),
            CompileError::Expected { .. }
        ));
        assert!(matches!(
            parse_err("fn \"f\"() -> f64 { 1 }"),
            CompileError::StringOutsideFail { .. }
        ));
    }

    #[test]
    fn error_missing_semicolon() {
        let text = "fn f(x: f64) -> f64 {\n    let a = x * 2.0\n    let b = a;\n    b\n}\n";
        let e = parse_err(text);
        assert_eq!(e.to_string(), "expected `;`, found `let`");
        // Points just after `2.0`, where the `;` is missing.
        assert_eq!(e.span(), Span::point(41));
        assert_eq!(line_col(text, e.span().start), (2, 20));

        // Between two expression statements.
        let text = "fn f(x: f64) -> f64 {\n    g(x)\n    x\n}\n";
        let e = parse_err(text);
        assert_eq!(e.to_string(), "expected `;` or `}`, found `x`");
        assert_eq!(line_col(text, e.span().start), (2, 9));

        // On one line: at the offending token.
        let text = "fn f(x: f64) -> f64 { let a = x let b = a; b }";
        let e = parse_err(text);
        assert_eq!(e.span(), Span::new(32, 35));
    }

    #[test]
    fn other_errors() {
        let cases = [
            ("fn f() -> f64 { () }", "expected expression, found `)`"),
            ("fn f() -> f64 { 1 + }", "expected expression, found `}`"),
            ("fn f(x: f64) -> f64 {\n    x +\n}\n", "expected expression, found `}`"),
            ("fn f() -> f64 { (1,) }", "`a one-element tuple expression` is not allowed here: tuples have two or more elements; remove the trailing comma"),
            ("fn f() { 1 }", "expected `->`, found `{`"),
            ("fn f() -> { 1 }", "expected type, found `{`"),
            ("fn f() -> () { 1 }", "expected type, found `)`"),
            ("fn let() -> f64 { 1 }", "expected identifier, found `let`"),
            ("fn f(x f64) -> f64 { 1 }", "expected `:`, found `f64`"),
            ("fn f(x: f64 y: f64) -> f64 { 1 }", "expected `,` or `)`, found `y`"),
            ("fn f() -> f64 { g(1 2) }", "expected `,` or `)`, found `2`"),
            ("fn f() -> f64 { (1 2) }", "expected `,` or `)`, found `2`"),
            ("struct S {}", "expected `fn`, `inverse` or `pgf`, found `struct`"),
            ("}", "expected `fn`, `inverse` or `pgf`, found `}`"),
            ("fn f() -> f64 { let = 1; 1 }", "expected pattern, found `=`"),
            ("fn f() -> f64 { let x 1; 1 }", "expected `=`, found `1`"),
            ("fn f() -> f64 { if c { 1 } else 2 }", "expected `{` or `if`, found `2`"),
            ("fn f() -> f64 { for 1 in 0..2 {} 1 }", "expected identifier, found `1`"),
            ("fn f() -> f64 { for i 0..2 {} 1 }", "expected `in`, found `0`"),
            ("fn f() -> f64 { for i in 0 {} 1 }", "expected `..`, found `{`"),
            ("fn f() -> f64 { while x 1 }", "expected `{`, found `1`"),
            ("fn f() -> f64 { _ }", "expected expression, found `_`"),
            ("fn f() -> f64 { x = 1 2 }", "expected `;`, found `2`"),
            ("fn f() -> f64 { let x = 1 }", "expected `;`, found `}`"),
            ("fn f() -> f64 { 1.5e }", "invalid number literal `1.5e`"),
            ("fn f() -> f64 { 1 } /*", "unterminated block comment"),
            ("fn f(", "expected identifier, found end of file"),
            ("fn f() -> f64 { let x = 1; ", "expected `}`, found end of file"),
            ("fn f() -> f64 { 1 }}", "expected `fn`, `inverse` or `pgf`, found `}`"),
        ];
        for (text, message) in cases {
            let e = parse_err(text);
            assert_eq!(e.to_string(), message, "{text}");
            assert!(e.span().end as usize <= text.len(), "{text}");
        }
    }

    #[test]
    fn earlier_parse_error_wins_over_later_lex_error() {
        let e = parse_err("fn f( { $");
        assert_eq!(e.to_string(), "expected identifier, found `{`");
        let e = parse_err("fn f() -> f64 { 1 + $ }");
        assert_eq!(e.to_string(), "unexpected character `$`");
        let e = parse_err("fn f() -> f64 { 1 } \"unterminated");
        assert_eq!(e.to_string(), "unterminated string literal");
    }

    // ---- depth limits

    fn assert_too_deep(text: &str) {
        match parse(text) {
            Err(CompileError::TooDeep { limit, .. }) => assert_eq!(limit, MAX_DEPTH),
            other => panic!("expected TooDeep, got {other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let n = 10_000;
        assert_too_deep(&format!(
            "fn f() -> f64 {{ {}x{} }}",
            "(".repeat(n),
            ")".repeat(n)
        ));
        assert_too_deep(&format!("fn f() -> f64 {{ {}x }}", "-".repeat(n)));
        assert_too_deep(&format!("fn f() -> f64 {{ {}x }}", "!".repeat(n)));
        assert_too_deep(&format!(
            "fn f() -> f64 {{ {}x{} }}",
            "{".repeat(n),
            "}".repeat(n)
        ));
        assert_too_long(&format!("fn f() -> f64 {{ x{} }}", " + x".repeat(n)));
        assert_too_long(&format!("fn f() -> f64 {{ x{} }}", " as f64".repeat(n)));
        assert_too_deep(&format!(
            "fn f() -> f64 {{ {}x{} }}",
            "g(".repeat(n),
            ")".repeat(n)
        ));
        assert_too_deep(&format!(
            "fn f() -> {}f64{} {{ x }}",
            "(".repeat(n),
            ")".repeat(n)
        ));
        assert_too_deep(&format!(
            "fn f() -> f64 {{ let {}x{} = 1; x }}",
            "(".repeat(n),
            ")".repeat(n)
        ));
        assert_too_deep(&format!(
            "fn f() -> f64 {{ if a {{ 1 }}{} else {{ 2 }} }}",
            " else if a { 1 }".repeat(n)
        ));
        assert_too_deep(&format!("fn f() -> f64 {{ {}x }}", "return ".repeat(n)));
        // Chains of parenthesised chains: heights add up across the parentheses.
        let chain = " + x".repeat(1500);
        assert_too_long(&format!("fn f() -> f64 {{ ((x{chain}){chain}){chain} }}"));
    }

    fn assert_too_long(text: &str) {
        match parse(text) {
            Err(CompileError::TooLong { limit, .. }) => assert_eq!(limit, MAX_HEIGHT),
            other => panic!("expected TooLong, got {other:?}"),
        }
    }

    #[test]
    fn long_chains_are_not_nesting() {
        // A flat sum of 300 terms was refused as "too deeply nested".
        parse_ok(&format!("fn f() -> f64 {{ x{} }}", " + 1.0".repeat(300)));
        // The block around the tail is one level more.
        parse_ok(&format!(
            "fn f() -> f64 {{ x{} }}",
            " + 1.0".repeat(MAX_HEIGHT - 2)
        ));
        let chain = " + x".repeat(1000);
        parse_ok(&format!("fn f() -> f64 {{ ((x{chain}){chain}){chain} }}"));
    }

    #[test]
    fn moderate_nesting_is_fine() {
        let n = 100;
        parse_ok(&format!(
            "fn f() -> f64 {{ {}x{} }}",
            "(".repeat(n),
            ")".repeat(n)
        ));
        parse_ok(&format!("fn f() -> f64 {{ {}x }}", "-".repeat(n)));
        parse_ok(&format!("fn f() -> f64 {{ x{} }}", " + x".repeat(200)));
        parse_ok(&format!(
            "fn f() -> f64 {{ {}x{} }}",
            "{".repeat(50),
            "}".repeat(50)
        ));
        parse_ok(&format!(
            "fn f() -> f64 {{ if a {{ 1 }}{} else {{ 2 }} }}",
            " else if a { 1 }".repeat(100)
        ));
        // Long flat sequences are not nesting.
        parse_ok(&format!(
            "fn f() -> f64 {{ {} x }}",
            "let x = 1;".repeat(10_000)
        ));
        parse_ok(&format!("fn f() -> f64 {{ g({}1) }}", "1, ".repeat(10_000)));
    }

    #[test]
    fn deepest_accepted_nesting_runs_on_a_small_stack() {
        // Right under the limits, parsing (and dropping the tree) must fit in a modest stack.
        let inputs = [
            format!(
                "fn f() -> f64 {{ {}x{} }}",
                "(".repeat(250),
                ")".repeat(250)
            ),
            format!("fn f() -> f64 {{ {}x }}", "-".repeat(250)),
            format!("fn f() -> f64 {{ x{} }}", " + x".repeat(MAX_HEIGHT - 2)),
            format!("fn f() -> f64 {{ {}x{} }}", "{".repeat(80), "}".repeat(80)),
            format!(
                "fn f() -> f64 {{ {}x{} }}",
                "(x + ".repeat(120),
                ")".repeat(120)
            ),
            format!(
                "fn f() -> f64 {{ {}x{} }}",
                "g(".repeat(120),
                ")".repeat(120)
            ),
        ];
        let handle = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || inputs.iter().all(|text| parse(text).is_ok()));
        let ok = handle.map(|h| h.join());
        assert!(matches!(ok, Ok(Ok(true))), "{ok:?}");
    }
}
