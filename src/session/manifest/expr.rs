//! The manifest's little arithmetic: how shared memory, threads and the grid
//! follow from toggles and tile parameters, and the rules a tile must keep.
//! Integers only (booleans are 0 and 1), checked arithmetic, no panics on any
//! input: a manifest is user text.
//!
//! Grammar, loosest first: `c ? a : b`, `||`, `&&`, `== !=`, `< <= > >=`,
//! `+ -`, `* / %`, unary `! -`, then numbers, NAMES, `f(a, b)` and `( )`.
//! Functions: `min`, `max` (any number of arguments), `align(x, a)` (x
//! rounded up to a multiple of a), `ceil_div(a, b)`.

use std::fmt;

/// Nesting deeper than this is refused (it would only be an attack on the stack).
const MAX_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Num(i64),
    Var(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Min,
    Max,
    Align,
    CeilDiv,
}

impl Func {
    fn named(name: &str) -> Option<Func> {
        Some(match name {
            "min" => Func::Min,
            "max" => Func::Max,
            "align" => Func::Align,
            "ceil_div" => Func::CeilDiv,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Align => "align",
            Func::CeilDiv => "ceil_div",
        }
    }

    /// The argument counts it takes: (least, most).
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Min | Func::Max => (1, usize::MAX),
            Func::Align | Func::CeilDiv => (2, 2),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 20] = [
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", "(", ")",
    ",", "=",
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_') {
                i += 1;
            }
            let digits: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let n = digits
                .parse::<i64>()
                .map_err(|_| format!("the number {digits} is too large"))?;
            out.push(Tok::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(chars[start..i].iter().collect()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("'{c}' is not part of an expression"))?;
            // `=` alone is only the separator of a `NAME = expr` line.
            if *op == "=" {
                return Err("'=' compares as '=='".into());
            }
            out.push(Tok::Op(op));
            i += op.chars().count();
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.at) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected '{op}' {}", self.where_()))
        }
    }

    fn where_(&self) -> String {
        match self.toks.get(self.at) {
            Some(Tok::Num(n)) => format!("before {n}"),
            Some(Tok::Name(n)) => format!("before {n}"),
            Some(Tok::Op(o)) => format!("before '{o}'"),
            None => "at the end".into(),
        }
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn cond(&mut self) -> Result<Expr, String> {
        self.deeper()?;
        let c = self.binary(0)?;
        let e = if self.eat("?") {
            let a = self.cond()?;
            self.expect(":")?;
            let b = self.cond()?;
            Expr::Cond(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth -= 1;
        Ok(e)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: [&[(&str, BinOp)]; 6] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        'more: loop {
            for (text, op) in ops.iter() {
                if self.eat(text) {
                    let right = self.binary(level + 1)?;
                    left = Expr::Binary(*op, Box::new(left), Box::new(right));
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.deeper()?;
        let e = if self.eat("!") {
            Expr::Unary(UnOp::Not, Box::new(self.unary()?))
        } else if self.eat("-") {
            Expr::Unary(UnOp::Neg, Box::new(self.unary()?))
        } else {
            self.primary()?
        };
        self.depth -= 1;
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.toks.get(self.at).cloned() {
            Some(Tok::Num(n)) => {
                self.at += 1;
                Ok(Expr::Num(n))
            }
            Some(Tok::Name(name)) => {
                self.at += 1;
                if !self.eat("(") {
                    return Ok(Expr::Var(name));
                }
                let func = Func::named(&name).ok_or_else(|| {
                    format!("{name}() is not a function (there are min, max, align, ceil_div)")
                })?;
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.cond()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                let (least, most) = func.arity();
                if args.len() < least || args.len() > most {
                    return Err(format!(
                        "{}() takes {}, not {} argument{}",
                        func.name(),
                        if least == most {
                            least.to_string()
                        } else {
                            format!("at least {least}")
                        },
                        args.len(),
                        if args.len() == 1 { "" } else { "s" }
                    ));
                }
                Ok(Expr::Call(func, args))
            }
            Some(Tok::Op("(")) => {
                self.at += 1;
                let e = self.cond()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => Err(format!(
                "expected a number, a name or '(' {}",
                self.where_()
            )),
        }
    }
}

impl Expr {
    /// Parses one expression; the error says what was expected where.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let toks = lex(text)?;
        if toks.is_empty() {
            return Err("empty expression".into());
        }
        let mut p = Parser {
            toks,
            at: 0,
            depth: 0,
        };
        let e = p.cond()?;
        if p.at != p.toks.len() {
            return Err(format!("unexpected text {}", p.where_()));
        }
        Ok(e)
    }

    /// Every name it reads, in order of appearance (repeats kept out).
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Var(n) = e
                && !out.contains(&n.as_str())
            {
                out.push(n.as_str());
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Num(_) | Expr::Var(_) => {}
            Expr::Unary(_, a) => a.walk(f),
            Expr::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Cond(c, a, b) => {
                c.walk(f);
                a.walk(f);
                b.walk(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.walk(f)),
        }
    }

    /// The value, with `lookup` giving each name's; errors name the cause
    /// (an unknown name, a division by zero, an overflow).
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, String> {
        let over = || format!("'{self}' overflows");
        Ok(match self {
            Expr::Num(n) => *n,
            Expr::Var(name) => lookup(name).ok_or_else(|| format!("{name} is not known here"))?,
            Expr::Unary(UnOp::Not, a) => i64::from(a.eval(lookup)? == 0),
            Expr::Unary(UnOp::Neg, a) => a.eval(lookup)?.checked_neg().ok_or_else(over)?,
            Expr::Cond(c, a, b) => {
                if c.eval(lookup)? != 0 {
                    a.eval(lookup)?
                } else {
                    b.eval(lookup)?
                }
            }
            Expr::Binary(BinOp::And, a, b) => {
                i64::from(a.eval(lookup)? != 0 && b.eval(lookup)? != 0)
            }
            Expr::Binary(BinOp::Or, a, b) => {
                i64::from(a.eval(lookup)? != 0 || b.eval(lookup)? != 0)
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (a.eval(lookup)?, b.eval(lookup)?);
                let zero = || format!("'{self}' divides by zero ({b} is 0)");
                match op {
                    BinOp::Eq => i64::from(x == y),
                    BinOp::Ne => i64::from(x != y),
                    BinOp::Lt => i64::from(x < y),
                    BinOp::Le => i64::from(x <= y),
                    BinOp::Gt => i64::from(x > y),
                    BinOp::Ge => i64::from(x >= y),
                    BinOp::Add => x.checked_add(y).ok_or_else(over)?,
                    BinOp::Sub => x.checked_sub(y).ok_or_else(over)?,
                    BinOp::Mul => x.checked_mul(y).ok_or_else(over)?,
                    BinOp::Div if y == 0 => return Err(zero()),
                    BinOp::Rem if y == 0 => return Err(zero()),
                    BinOp::Div => x.checked_div(y).ok_or_else(over)?,
                    BinOp::Rem => x.checked_rem(y).ok_or_else(over)?,
                    BinOp::And | BinOp::Or => unreachable!("handled above"),
                }
            }
            Expr::Call(func, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(lookup))
                    .collect::<Result<Vec<i64>, String>>()?;
                match func {
                    Func::Min => *vals.iter().min().expect("arity checked at parse"),
                    Func::Max => *vals.iter().max().expect("arity checked at parse"),
                    Func::Align | Func::CeilDiv => {
                        let (x, a) = (vals[0], vals[1]);
                        if a <= 0 {
                            return Err(format!(
                                "'{self}': {} needs a positive divisor",
                                func.name()
                            ));
                        }
                        let up = x.checked_add(a - 1).ok_or_else(over)?.div_euclid(a);
                        if *func == Func::Align {
                            up.checked_mul(a).ok_or_else(over)?
                        } else {
                            up
                        }
                    }
                }
            }
        })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Var(v) => f.write_str(v),
            Expr::Unary(UnOp::Not, a) => write!(f, "!{a}"),
            Expr::Unary(UnOp::Neg, a) => write!(f, "-{a}"),
            Expr::Binary(op, a, b) => {
                let s = match op {
                    BinOp::Or => "||",
                    BinOp::And => "&&",
                    BinOp::Eq => "==",
                    BinOp::Ne => "!=",
                    BinOp::Lt => "<",
                    BinOp::Le => "<=",
                    BinOp::Gt => ">",
                    BinOp::Ge => ">=",
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::Rem => "%",
                };
                write!(f, "({a} {s} {b})")
            }
            Expr::Cond(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eval(text: &str, vars: &[(&str, i64)]) -> Result<i64, String> {
        let vars: Vec<(String, i64)> = vars.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Expr::parse(text)?.eval(&|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| *v))
    }

    #[test]
    fn precedence_and_functions() {
        assert_eq!(eval("1 + 2 * 3", &[]), Ok(7));
        assert_eq!(eval("(1 + 2) * 3", &[]), Ok(9));
        assert_eq!(eval("10 - 4 - 3", &[]), Ok(3));
        assert_eq!(eval("17 / 4 % 3", &[]), Ok(1));
        assert_eq!(eval("1 < 2 && 3 >= 3 || 0", &[]), Ok(1));
        assert_eq!(eval("!0 + -2", &[]), Ok(-1));
        assert_eq!(eval("A ? 1 : B ? 2 : 3", &[("A", 0), ("B", 0)]), Ok(3));
        assert_eq!(eval("align(1000, 128)", &[]), Ok(1024));
        assert_eq!(eval("align(1024, 128)", &[]), Ok(1024));
        assert_eq!(eval("ceil_div(S, 64)", &[("S", 65)]), Ok(2));
        assert_eq!(eval("max(1, 7, 3) + min(4, 2)", &[]), Ok(9));
        assert_eq!(eval("1_024", &[]), Ok(1024));
    }

    #[test]
    fn the_untaken_branch_is_not_evaluated() {
        assert_eq!(eval("W == 0 ? 0 : 64 / W", &[("W", 0)]), Ok(0));
        assert_eq!(eval("W != 0 && 64 / W > 1", &[("W", 0)]), Ok(0));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let err = |t: &str| eval(t, &[("W", 0)]).unwrap_err();
        assert!(
            err("64 / W").contains("divides by zero"),
            "{}",
            err("64 / W")
        );
        assert!(err("X + 1").contains("X is not known"));
        assert!(err("1 +").contains("expected a number"));
        assert!(err("(1 + 2").contains("expected ')'"));
        assert!(err("1 2").contains("unexpected text"));
        assert!(err("pow(2, 3)").contains("not a function"));
        assert!(err("align(3)").contains("takes 2, not 1 argument"));
        assert!(err("A = 1").contains("'=='"));
        assert!(err("3 $ 4").contains("'$'"));
        assert!(err("9223372036854775807 + 1").contains("overflows"));
        assert!(err("99999999999999999999").contains("too large"));
        assert!(err("").contains("empty"));
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(err(&deep).contains("nested deeper"));
        assert!(err(&"-".repeat(200)).contains("nested deeper"));
    }

    #[test]
    fn names_are_listed_once() {
        let e = Expr::parse("A + B * A ? C : max(D, A)").unwrap();
        assert_eq!(e.names(), ["A", "B", "C", "D"]);
    }

    proptest! {
        #[test]
        fn no_text_panics_the_parser_or_the_evaluator(text in ".{0,60}") {
            if let Ok(e) = Expr::parse(&text) {
                let _ = e.eval(&|_| Some(3));
                let _ = e.eval(&|_| Some(0));
                // What prints parses back to the same expression.
                prop_assert_eq!(Expr::parse(&e.to_string()), Ok(e));
            }
        }

        #[test]
        fn operator_soup_never_panics(text in "[0-9A-Z_ ()+*/%!?:,<>=&|-]{0,80}") {
            if let Ok(e) = Expr::parse(&text) {
                let _ = e.eval(&|_| Some(i64::MAX));
                let _ = e.eval(&|_| Some(i64::MIN));
            }
        }
    }
}
