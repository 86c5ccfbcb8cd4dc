//! A `labelSelector`'s text read as apimachinery v0.37's `labels.Parse` reads it: its
//! lexer (identifiers end at whitespace and at `=`, `!`, `(`, `)`, `,`, `>`, `<`; `!=`
//! and `==` taken whole; `in` and `notin` keywords but where a value is expected; the
//! text ends at its first NUL byte, as Go's reader does) and its recursive-descent
//! parser, with its error messages word for word (`unable to parse requirement: found
//! 'b', expected: in, notin, =, ==, !=, gt, lt`). What it accepts and refuses is
//! kube-apiserver's: `a>1` and `a<1` are requirements, a trailing comma is refused.
//! Nothing is allocated but the requirements' keys and values: a selector is read on
//! every LIST and WATCH, whose allocations the reports count.

use super::LabelRequirement;
use crate::names;

/// The requirements of selector `text`, in the order written; kube-apiserver's message
/// for the first fault.
pub(super) fn parse(text: &str) -> Result<Vec<LabelRequirement>, String> {
    let mut parser = Parser::new(text);
    let mut requirements = Vec::new();
    loop {
        match parser.lookahead(Context::Values) {
            Token::Identifier(_) | Token::DoesNotExist => {
                let requirement = parser
                    .requirement()
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                requirements.push(requirement);
                match parser.consume(Context::Values) {
                    Token::End => return Ok(requirements),
                    Token::Comma => match parser.lookahead(Context::Values) {
                        Token::Identifier(_) | Token::DoesNotExist => {}
                        next => {
                            let found = next.literal();
                            return Err(format!("found '{found}', expected: identifier after ','"));
                        }
                    },
                    next => {
                        let found = next.literal();
                        return Err(format!("found '{found}', expected: ',' or 'end of string'"));
                    }
                }
            }
            Token::End => return Ok(requirements),
            next => {
                let found = next.literal();
                return Err(format!(
                    "found '{found}', expected: !, identifier, or 'end of string'"
                ));
            }
        }
    }
}

/// A token of the lexer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
    Identifier(&'a str),
}

impl<'a> Token<'a> {
    /// The text it was read from, as an error quotes it.
    fn literal(self) -> &'a str {
        match self {
            Token::End => "",
            Token::ClosedPar => ")",
            Token::Comma => ",",
            Token::DoesNotExist => "!",
            Token::DoubleEquals => "==",
            Token::Equals => "=",
            Token::GreaterThan => ">",
            Token::In => "in",
            Token::LessThan => "<",
            Token::NotEquals => "!=",
            Token::NotIn => "notin",
            Token::OpenPar => "(",
            Token::Identifier(text) => text,
        }
    }
}

/// What the parser expects next: where a value may be, `in` and `notin` are identifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// The lexer: the text and where it has read to.
#[derive(Debug, Clone)]
struct Lexer<'a> {
    text: &'a str,
    at: usize,
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

impl<'a> Lexer<'a> {
    /// The byte at `at`, 0 past the end (Go's reader: a NUL byte ends the text too).
    fn byte(&self, at: usize) -> u8 {
        self.text.as_bytes().get(at).copied().unwrap_or(0)
    }

    fn next(&mut self) -> Token<'a> {
        while is_space(self.byte(self.at)) {
            self.at += 1;
        }
        let first = self.byte(self.at);
        if first == 0 {
            return Token::End;
        }
        if is_special(first) {
            let pair = (first, self.byte(self.at + 1));
            let (token, len) = match pair {
                (b'!', b'=') => (Token::NotEquals, 2),
                (b'=', b'=') => (Token::DoubleEquals, 2),
                (b'!', _) => (Token::DoesNotExist, 1),
                (b'=', _) => (Token::Equals, 1),
                (b'(', _) => (Token::OpenPar, 1),
                (b')', _) => (Token::ClosedPar, 1),
                (b',', _) => (Token::Comma, 1),
                (b'>', _) => (Token::GreaterThan, 1),
                _ => (Token::LessThan, 1),
            };
            self.at += len;
            return token;
        }
        let start = self.at;
        while !matches!(self.byte(self.at), 0) && !is_special(self.byte(self.at)) {
            if is_space(self.byte(self.at)) {
                break;
            }
            self.at += 1;
        }
        // The bytes ended at are ASCII, so `start..at` falls on characters' boundaries.
        match &self.text[start..self.at] {
            "in" => Token::In,
            "notin" => Token::NotIn,
            identifier => Token::Identifier(identifier),
        }
    }
}

/// The parser: the lexer and the next token, looked at before it is taken.
struct Parser<'a> {
    lexer: Lexer<'a>,
    next: Token<'a>,
}

/// An operator a requirement may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Equals,
    NotEquals,
    GreaterThan,
    LessThan,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let mut lexer = Lexer { text, at: 0 };
        let next = lexer.next();
        Parser { lexer, next }
    }

    fn lookahead(&self, context: Context) -> Token<'a> {
        in_context(self.next, context)
    }

    fn consume(&mut self, context: Context) -> Token<'a> {
        let token = self.next;
        if token != Token::End {
            self.next = self.lexer.next();
        }
        in_context(token, context)
    }

    /// `parseRequirement`: a key and what it is required to be.
    fn requirement(&mut self) -> Result<LabelRequirement, String> {
        let (key, unary) = self.key_and_unary_operator()?;
        if let Some(absent) = unary {
            let key = key.to_owned();
            return Ok(match absent {
                true => LabelRequirement::DoesNotExist(key),
                false => LabelRequirement::Exists(key),
            });
        }
        let operator = self.operator()?;
        let mut values = Vec::new();
        match operator {
            Operator::In | Operator::NotIn => self.value_set(&mut values)?,
            _ => self.exact_value(&mut values)?,
        }
        requirement(key, operator, values)
    }

    /// `parseKeyAndInferOperator`: the key, `!` before it, and whether it stands alone
    /// (`Some(true)`: `!key`, `Some(false)`: `key`).
    fn key_and_unary_operator(&mut self) -> Result<(&'a str, Option<bool>), String> {
        let mut token = self.consume(Context::Values);
        let absent = token == Token::DoesNotExist;
        if absent {
            token = self.consume(Context::Values);
        }
        let Token::Identifier(key) = token else {
            return Err(format!("found '{}', expected: identifier", token.literal()));
        };
        if let Some(why) = names::qualified_name_error(key) {
            return Err(format!("<nil>: Invalid value: {key:?}: {why}"));
        }
        let alone = matches!(self.lookahead(Context::Values), Token::End | Token::Comma);
        Ok((key, (absent || alone).then_some(absent)))
    }

    /// `parseOperator`.
    fn operator(&mut self) -> Result<Operator, String> {
        Ok(match self.consume(Context::KeyAndOperator) {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            token => {
                let found = token.literal();
                return Err(format!(
                    "found '{found}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    /// `parseValues`: `(a,b)`; `()` is the empty value.
    fn value_set(&mut self, values: &mut Vec<&'a str>) -> Result<(), String> {
        let open = self.consume(Context::Values);
        if open != Token::OpenPar {
            return Err(format!("found '{}' expected: '('", open.literal()));
        }
        let first = self.lookahead(Context::Values);
        match first {
            Token::Identifier(_) | Token::Comma => {
                self.identifiers(values)?;
                if self.consume(Context::Values) != Token::ClosedPar {
                    // Go's parser names the token after the parenthesis here.
                    return Err(format!("found '{}', expected: ')'", first.literal()));
                }
                Ok(())
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                insert(values, "");
                Ok(())
            }
            token => Err(format!(
                "found '{}', expected: ',', ')' or identifier",
                token.literal()
            )),
        }
    }

    /// `parseIdentifiersList`: the values up to the closing parenthesis, an empty one
    /// wherever two commas, or a comma and a parenthesis, meet.
    fn identifiers(&mut self, values: &mut Vec<&'a str>) -> Result<(), String> {
        loop {
            match self.consume(Context::Values) {
                Token::Identifier(value) => {
                    insert(values, value);
                    match self.lookahead(Context::Values) {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(()),
                        next => {
                            let found = next.literal();
                            return Err(format!("found '{found}', expected: ',' or ')'"));
                        }
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        insert(values, "");
                    }
                    match self.lookahead(Context::Values) {
                        Token::ClosedPar => {
                            insert(values, "");
                            return Ok(());
                        }
                        Token::Comma => insert(values, ""),
                        _ => {}
                    }
                }
                token => {
                    let found = token.literal();
                    return Err(format!("found '{found}', expected: ',', or identifier"));
                }
            }
        }
    }

    /// `parseExactValue`: one value, empty where none is written.
    fn exact_value(&mut self, values: &mut Vec<&'a str>) -> Result<(), String> {
        if matches!(self.lookahead(Context::Values), Token::End | Token::Comma) {
            insert(values, "");
            return Ok(());
        }
        match self.consume(Context::Values) {
            Token::Identifier(value) => {
                insert(values, value);
                Ok(())
            }
            token => Err(format!("found '{}', expected: identifier", token.literal())),
        }
    }
}

/// `token` as the parser sees it where `context` is.
fn in_context(token: Token<'_>, context: Context) -> Token<'_> {
    match (token, context) {
        (Token::In | Token::NotIn, Context::Values) => Token::Identifier(token.literal()),
        _ => token,
    }
}

/// Adds `value` to a set of values (Go's `sets.String`), kept in the order written.
fn insert<'a>(values: &mut Vec<&'a str>, value: &'a str) {
    if !values.contains(&value) {
        values.push(value);
    }
}

/// `NewRequirement`'s checks of the values: each a label value, a `>` or `<` one an
/// integer; every fault, the values in sorted order as Go's set lists them, one message
/// or `[a, b]` (Go's aggregate).
fn requirement(
    key: &str,
    operator: Operator,
    values: Vec<&str>,
) -> Result<LabelRequirement, String> {
    let ordered = matches!(operator, Operator::GreaterThan | Operator::LessThan);
    let integer = |v: &str| v.parse::<i64>().ok();
    let fine = |v: &&str| names::is_label_value(v) && (!ordered || integer(v).is_some());
    if !values.iter().all(fine) {
        return Err(faults(key, ordered, values));
    }
    let owned = || values.iter().map(|v| (*v).to_owned());
    let key = key.to_owned();
    Ok(match operator {
        Operator::In => LabelRequirement::In(key, owned().collect()),
        Operator::NotIn => LabelRequirement::NotIn(key, owned().collect()),
        Operator::Equals => LabelRequirement::Equals(key, values[0].to_owned()),
        Operator::NotEquals => LabelRequirement::NotEquals(key, values[0].to_owned()),
        Operator::GreaterThan => {
            LabelRequirement::GreaterThan(key, integer(values[0]).unwrap_or(0))
        }
        Operator::LessThan => LabelRequirement::LessThan(key, integer(values[0]).unwrap_or(0)),
    })
}

/// Every fault of `values` of `key`, in Go's words and order.
fn faults(key: &str, ordered: bool, mut values: Vec<&str>) -> String {
    values.sort_unstable();
    let mut messages: Vec<String> = Vec::new();
    let mut note = |message: String| {
        if !messages.contains(&message) {
            messages.push(message);
        }
    };
    if ordered {
        for (i, value) in values.iter().enumerate() {
            if value.parse::<i64>().is_err() {
                let why = "for 'Gt', 'Lt' operators, the value must be an integer";
                note(format!("values[{i}]: Invalid value: {value:?}: {why}"));
            }
        }
    }
    for (i, value) in values.iter().enumerate() {
        let whys = names::label_value_errors(value);
        if !whys.is_empty() {
            let why = whys.join("; ");
            note(format!(
                "values[{i}][{key}]: Invalid value: {value:?}: {why}"
            ));
        }
    }
    match messages.len() {
        1 => messages.remove(0),
        _ => format!("[{}]", messages.join(", ")),
    }
}
