"""A reader for the small part of C++ that llama.cpp's model loading code is written in.

It turns function bodies into S-expressions that ggufcheck's model interpreter
(validator/src/llama_loader/interpreter.cpp) runs. It is not a C++ parser: it knows the statement and
expression forms those functions use and fails loudly, naming the source line, on anything else,
so that a new llama.cpp release cannot be misread in silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class SourceError(Exception):
    pass


@dataclass
class Token:
    kind: str  # id, num, str, chr, op
    text: str
    line: int


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<chr>'(?:\\.|[^'\\])*')
  | (?P<num>(?:0[xX][0-9a-fA-F]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)[uUlLfF]*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>::|->|\+\+|--|<<=|>>=|<=|>=|==|!=|&&|\|\||<<|>>|\+=|-=|\*=|/=|%=|&=|\|=|\^=|[-+*/%<>=!&|^~?:;,.(){}\[\]#])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str, first_line: int = 1) -> list[Token]:
    tokens: list[Token] = []
    pos, line = 0, first_line
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise SourceError(f"line {line}: cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        chunk = m.group()
        if kind not in ("ws", "comment"):
            tokens.append(Token(kind, chunk, line))
        line += chunk.count("\n")
        pos = m.end()
    return tokens


def find_function(tokens: list[Token], qualified: str) -> tuple[list[str], list[Token], int]:
    """The parameter names and body tokens of the function definition named `qualified`
    (e.g. "llama_model_base::load_hparams")."""
    parts = qualified.split("::")
    n = len(parts)
    for i in range(len(tokens)):
        if all(tokens[i + 2 * k].text == parts[k] for k in range(n) if i + 2 * k < len(tokens)) and all(
            tokens[i + 2 * k + 1].text == "::" for k in range(n - 1)
        ):
            j = i + 2 * (n - 1) + 1
            if j >= len(tokens) or tokens[j].text != "(":
                continue
            close = match(tokens, j)
            k = close + 1
            while k < len(tokens) and tokens[k].text not in ("{", ";"):
                k += 1
            if k >= len(tokens) or tokens[k].text != "{":
                continue  # a declaration
            params = parameter_names(tokens[j + 1 : close])
            end = match(tokens, k)
            return params, tokens[k + 1 : end], tokens[k].line
    raise SourceError(f"function {qualified} not found")


def parameter_names(tokens: list[Token]) -> list[str]:
    names, depth, last = [], 0, None
    for t in tokens + [Token("op", ",", 0)]:
        if t.text in "(<[":
            depth += 1
        elif t.text in ")>]":
            depth -= 1
        if depth == 0 and t.text in (",", "="):
            if last is not None:
                names.append(last)
            last = None
            if t.text == "=":
                depth = 100  # skip the default value up to the next comma
            continue
        if depth >= 100 and t.text == ",":
            depth = 0
        if t.kind == "id" and depth == 0:
            last = t.text
    return names


def match(tokens: list[Token], i: int) -> int:
    pairs = {"(": ")", "{": "}", "[": "]"}
    opening = tokens[i].text
    closing = pairs[opening]
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == opening:
            depth += 1
        elif tokens[j].text == closing:
            depth -= 1
            if depth == 0:
                return j
    raise SourceError(f"line {tokens[i].line}: unbalanced {opening}")


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Types a declaration may start with. Anything else at the start of a statement is an expression.
_TYPE_WORDS = {
    "int", "bool", "float", "double", "auto", "size_t", "char", "unsigned", "long",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
}
_QUALIFIERS = {"const", "static", "constexpr", "enum", "struct"}
# Words of a switch body that make it matter to the loader: it is then followed, not skipped.
_EFFECTS = ("get_key", "get_arr", "get_key_or_arr", "create_tensor", "throw", "GGML_ASSERT",
            "GGML_ABORT")


class Parser:
    """Statements -> S-expressions:
    (block s...) (if line c then [else]) (for line var start limit body) (decl name type expr line)
    (expr e line)
    (return) (throw "message") (assert e) (skip "why" line)
    (foreach line var type range body): for (type var : range)
    (switch line e (case (values...) s...)... ): a case lists its labels, (default) among them for
      `default:`; execution falls through to the next case until (break)
    (break line) (continue line)
    (try line body handler): try { body } catch (...) { handler }
    (lambda name "params" body line): auto name = [&](params) { body };
    Expressions: (n 1) (f 1.5) (s "x") (id name) (call name args...) (mem e name) (idx e i)
    (un op e) (bin op a b) (tern c a b) (list e...) (assign op lhs rhs)"""

    def __init__(self, tokens: list[Token], where: str):
        self.t = tokens
        self.i = 0
        self.where = where

    # --- helpers ------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise SourceError(f"{self.where}: unexpected end")
        self.i += 1
        return tok

    def expect(self, text: str) -> Token:
        tok = self.next()
        if tok.text != text:
            raise SourceError(f"{self.where}:{tok.line}: expected {text!r}, found {tok.text!r}")
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text

    def fail(self, what: str) -> SourceError:
        tok = self.peek()
        line = tok.line if tok else "?"
        return SourceError(f"{self.where}:{line}: {what}")

    # --- statements ---------------------------------------------------------------------------
    def statements(self) -> str:
        out = []
        while self.peek() is not None:
            out.append(self.statement())
        return "(block " + " ".join(out) + ")"

    def statement(self) -> str:
        tok = self.peek()
        line = tok.line
        if tok.text == "{":
            self.next()
            out = []
            while not self.at("}"):
                out.append(self.statement())
            self.next()
            return "(block " + " ".join(out) + ")"
        if tok.text == ";":
            self.next()
            return "(block)"
        if tok.text == "if":
            self.next()
            self.expect("(")
            init = ""
            if self.is_declaration():
                # if (T x = e; cond) or if (T x = e): the declaration, then the test
                init = self.declaration(in_condition=True)
                name = re.match(r"\(decl (\S+)", init).group(1)
                if self.at(";"):
                    self.next()
                    cond = self.expression()
                else:
                    cond = f"(id {name})"
            else:
                cond = self.expression()
            self.expect(")")
            then = self.statement()
            if self.at("else"):
                self.next()
                out = f"(if {line} {cond} {then} {self.statement()})"
            else:
                out = f"(if {line} {cond} {then})"
            return f"(block {init} {out})" if init else out
        if tok.text in ("break", "continue"):
            self.next()
            self.expect(";")
            return f"({tok.text} {line})"
        if tok.text == "try":
            self.next()
            if not self.at("{"):
                raise self.fail("try without a block")
            body = self.statement()
            self.expect("catch")
            self.expect("(")
            self.i = match(self.t, self.i - 1) + 1
            handler = self.statement()
            return f"(try {line} {body} {handler})"
        if tok.text == "for":
            return self.for_statement()
        if tok.text == "switch":
            # llama.cpp's switches pick the model size name (`type`) from the layer count: they
            # decide nothing the loader checks. One that reads a key or a tensor is not skipped.
            self.next()
            start = self.i
            self.i = match(self.t, self.i) + 1
            body_end = match(self.t, self.i)
            body = self.t[start:body_end]
            self.i = body_end + 1
            if any(t.text in _EFFECTS for t in body):
                return self.switch_statement(line, start, body_end)
            return f'(skip "switch" {line})'
        if tok.text == "return":
            self.next()
            if self.at(";"):
                self.next()
                return "(return)"
            value = self.expression()
            self.expect(";")
            return f"(return {value})"
        if tok.text == "throw":
            self.next()
            end = self.i
            while self.t[end].text != ";":
                end += 1
            strings = [t.text for t in self.t[self.i : end] if t.kind == "str"]
            self.i = end + 1
            message = strings[0][1:-1] if strings else "error"
            return f"(throw {quote(message)} {line})"
        if tok.text in ("GGML_ASSERT", "GGML_ABORT"):
            name = self.next().text
            self.expect("(")
            if name == "GGML_ABORT":
                self.i = match(self.t, self.i - 1) + 1
                self.expect(";")
                return f"(throw \"abort\" {line})"
            cond = self.expression()
            self.expect(")")
            self.expect(";")
            return f"(assert {cond} {line})"
        if tok.text in ("assert", "LLAMA_LOG_INFO", "LLAMA_LOG_WARN", "LLAMA_LOG_DEBUG", "LLAMA_LOG_ERROR", "GGML_UNUSED"):
            self.next()
            self.i = match(self.t, self.i) + 1
            self.expect(";")
            return "(block)"
        if self.is_declaration():
            return self.declaration()
        expr = self.expression()
        self.expect(";")
        return f"(expr {expr} {line})"

    def switch_statement(self, line: int, start: int, body_end: int) -> str:
        """switch (e) { case A: case B: s... default: s... }, between tokens start (the
        opening parenthesis) and body_end (the closing brace)."""
        saved = self.i
        self.i = start + 1
        value = self.expression()
        self.expect(")")
        self.expect("{")
        cases: list[tuple[list[str], list[str]]] = []
        while self.i < body_end:
            if self.at("case") or self.at("default"):
                labels = []
                while self.at("case") or self.at("default"):
                    if self.next().text == "case":
                        labels.append(self.ternary())
                    else:
                        labels.append("(default)")
                    self.expect(":")
                cases.append((labels, []))
                continue
            if not cases:
                raise self.fail("a statement before the first case")
            cases[-1][1].append(self.statement())
        self.i = saved
        body = " ".join("(case " + " ".join([f"({' '.join(labels)})", *stmts]) + ")" for labels, stmts in cases)
        return f"(switch {line} {value} {body})"

    def for_statement(self) -> str:
        line = self.next().line
        self.expect("(")
        close = match(self.t, self.i - 1)
        colon = [k for k in range(self.i, close) if self.t[k].text == ":"]
        if colon and not any(self.t[k].text == ";" for k in range(self.i, close)):
            # for (type var : range)
            words = [t.text for t in self.t[self.i : colon[0]]]
            var = words[-1]
            range_expr = Parser(self.t[colon[0] + 1 : close], self.where).expression()
            self.i = close + 1
            body = self.statement()
            return f"(foreach {line} {var} {quote(_type_of(words[:-1]))} {range_expr} {body})"
        header = " ".join(t.text for t in self.t[self.i : close])
        m = re.fullmatch(r"(?:const )?(?:int|uint32_t|int64_t|size_t|int32_t) (\w+) = (.+?) ; \1 < (.+?) ; (?:\+\+ \1|\1 \+\+)", header)
        if not m:
            raise SourceError(f"{self.where}:{line}: a for loop not over a range: {header}")
        var = m.group(1)
        start = Parser(tokenize(m.group(2), line), self.where).expression()
        limit = Parser(tokenize(m.group(3), line), self.where).expression()
        self.i = close + 1
        body = self.statement()
        return f"(for {line} {var} {start} {limit} {body})"

    def is_declaration(self) -> bool:
        """[qualifiers] type [<args>] [* &] name (= ; ( { [): two names in a row make a declaration;
        an expression statement never starts that way."""
        j = self.i
        while self.t[j].text in _QUALIFIERS:
            j += 1
        if self.t[j].kind != "id":
            return False
        j += 1
        while self.t[j].text == "::" and self.t[j + 1].kind == "id":
            j += 2
        if self.t[j].text == "<":
            depth = 0
            while True:
                if self.t[j].text == "<":
                    depth += 1
                elif self.t[j].text == ">":
                    depth -= 1
                    if depth == 0:
                        break
                elif self.t[j].text in (";", "{"):
                    return False
                j += 1
            j += 1
        while self.t[j].kind == "id" and self.t[j].text in _TYPE_WORDS:
            j += 1
        while self.t[j].text in ("&", "*", "const"):
            j += 1
        return self.t[j].kind == "id" and self.t[j + 1].text in ("=", ";", "(", "{", "[")

    def declaration(self, in_condition: bool = False) -> str:
        line = self.peek().line
        type_words = []
        while True:
            tok = self.next()
            type_words.append(tok.text)
            nxt = self.peek()
            if tok.kind == "id" and nxt.text in ("=", ";", "(", "{", "[") and tok.text not in _TYPE_WORDS | _QUALIFIERS:
                name = tok.text
                type_words.pop()
                break
            if tok.text == "<":  # template arguments
                depth = 1
                while depth:
                    t = self.next()
                    depth += {"<": 1, ">": -1}.get(t.text, 0)
        if self.at("["):
            raise self.fail("a C array declaration")
        if self.at(";"):
            self.next()
            return f"(decl {name} {quote(_type_of(type_words))} (n 0) {line})"
        if self.at("=") and self.peek(1) is not None and self.peek(1).text == "[":
            return self.lambda_declaration(name, line)
        if self.at("="):
            self.next()
            expr = self.expression()
        else:  # name(args) or name{args}
            opening = self.next().text
            closing = ")" if opening == "(" else "}"
            expr = self.expression() if not self.at(closing) else "(n 0)"
            self.expect(closing)
        if not in_condition:
            self.expect(";")
        return f"(decl {name} {quote(_type_of(type_words))} {expr} {line})"

    def lambda_declaration(self, name: str, line: int) -> str:
        """auto name = [&](params) { body }; (a capture by reference: the body sees the
        enclosing function's locals, as the interpreter's scopes do)."""
        self.expect("=")
        capture = match(self.t, self.i)
        if [t.text for t in self.t[self.i + 1 : capture]] != ["&"]:
            raise self.fail("a lambda that does not capture by reference")
        self.i = capture + 1
        self.expect("(")
        close = match(self.t, self.i - 1)
        params = parameter_names(self.t[self.i : close])
        self.i = close + 1
        if self.at("->"):
            while not self.at("{"):
                self.next()
        if not self.at("{"):
            raise self.fail("a lambda without a body")
        body = self.statement()
        self.expect(";")
        return f"(lambda {name} {quote(','.join(params))} {body} {line})"

    # --- expressions --------------------------------------------------------------------------
    _BINARY = [
        ["||"], ["&&"], ["|"], ["^"], ["&"], ["==", "!="], ["<", "<=", ">", ">="], ["<<", ">>"],
        ["+", "-"], ["*", "/", "%"],
    ]

    def expression(self) -> str:
        lhs = self.ternary()
        tok = self.peek()
        if tok is not None and tok.text in ("=", "+=", "-=", "*=", "/=", "|=", "&="):
            self.next()
            rhs = self.expression()
            return f"(assign {quote(tok.text)} {lhs} {rhs})"
        return lhs

    def ternary(self) -> str:
        cond = self.binary(0)
        if self.at("?"):
            self.next()
            a = self.expression()
            self.expect(":")
            b = self.ternary()
            return f"(tern {cond} {a} {b})"
        return cond

    def binary(self, level: int) -> str:
        if level == len(self._BINARY):
            return self.unary()
        lhs = self.binary(level + 1)
        while self.peek() is not None and self.peek().text in self._BINARY[level]:
            op = self.next().text
            rhs = self.binary(level + 1)
            lhs = f"(bin {quote(op)} {lhs} {rhs})"
        return lhs

    def unary(self) -> str:
        tok = self.peek()
        if tok.text in ("!", "-", "+", "~"):
            self.next()
            return f"(un {quote(tok.text)} {self.unary()})"
        if tok.text in ("++", "--"):
            raise self.fail("prefix increment")
        if tok.text == "(" and self.is_cast():
            self.i = match(self.t, self.i) + 1
            return self.unary()
        if tok.text in ("static_cast", "int64_t", "uint32_t", "int32_t", "float", "double", "int", "size_t") and self.peek(1) is not None and self.peek(1).text in ("<", "("):
            self.next()
            if self.at("<"):
                while not self.at(">"):
                    self.next()
                self.next()
            self.expect("(")
            inner = self.expression()
            self.expect(")")
            return inner
        return self.postfix()

    def is_cast(self) -> bool:
        close = match(self.t, self.i)
        inner = [t.text for t in self.t[self.i + 1 : close]]
        return bool(inner) and all(w in _TYPE_WORDS or w in ("const", "*") for w in inner)

    def postfix(self) -> str:
        expr = self.primary()
        while True:
            tok = self.peek()
            if tok is None:
                return expr
            if tok.text in (".", "->"):
                self.next()
                name = self.next().text
                expr = f"(mem {expr} {name})"
            elif tok.text == "::":
                self.next()
                name = self.next().text
                expr = self.scoped(expr, name)
            elif tok.text == "(":
                self.next()
                args = []
                while not self.at(")"):
                    args.append(self.expression())
                    if self.at(","):
                        self.next()
                self.next()
                expr = f"(call {expr} {' '.join(args)})".replace("  ", " ").replace(" )", ")")
            elif tok.text == "[":
                self.next()
                index = self.expression()
                self.expect("]")
                expr = f"(idx {expr} {index})"
            elif tok.text in ("++", "--"):
                raise self.fail("postfix increment")
            else:
                return expr

    def scoped(self, expr: str, name: str) -> str:
        m = re.fullmatch(r"\(id (\w+)\)", expr)
        if not m:
            raise self.fail("a scope on an expression")
        return f"(id {m.group(1)}::{name})"

    def primary(self) -> str:
        tok = self.next()
        if tok.kind == "num":
            text = tok.text.rstrip("uUlLfF") if not tok.text.lower().startswith("0x") else tok.text.rstrip("uUlL")
            if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", text):
                return f"(n {int(text, 0)})"
            return f"(f {float(text)!r})"
        if tok.kind == "str":
            parts = [tok.text[1:-1]]
            while self.peek() is not None and self.peek().kind == "str":
                parts.append(self.next().text[1:-1])
            return "(s " + quote("".join(parts).encode().decode("unicode_escape")) + ")"
        if tok.kind == "id":
            if tok.text in ("true", "false"):
                return f"(n {1 if tok.text == 'true' else 0})"
            if tok.text in ("NULL", "nullptr"):
                return "(n 0)"
            return f"(id {tok.text})"
        if tok.text == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if tok.text == "{":
            items = []
            while not self.at("}"):
                items.append(self.expression())
                if self.at(","):
                    self.next()
            self.next()
            return "(list " + " ".join(items) + ")"
        raise SourceError(f"{self.where}:{tok.line}: unexpected {tok.text!r}")


def _type_of(words: list[str]) -> str:
    """The declared type without qualifiers, references and template spacing: "uint32_t",
    "std::string", "std::array<uint32_t,512>", "auto"."""
    kept = [w for w in words if w not in _QUALIFIERS and w not in ("&", "*")]
    return "".join(kept)


def parse_body(tokens: list[Token], where: str) -> str:
    return Parser(tokens, where).statements()
