"""The vocabulary as the pinned llama.cpp loads it, read from llama_vocab::impl::load
(src/llama-vocab.cpp) into validator/src/llama_loader/generated/llama_vocab.inc.

generate.py imports this module and writes its generate(source) beside llama_arch.inc.

What is read, and from where:
  the tokenizer models load() accepts, the vocabulary type of each, whether it reads
  tokenizer.ggml.merges (and which tokenizer.ggml.pre excuses their absence), whether it reads
  tokenizer.ggml.precompiled_charsmap, whether it forces a pre-tokenizer  the if-chain on tokenizer_model
  the vocabulary type whose pre-tokenizer is read, and the pre-tokenizer names
  it accepts with the flags a name sets (escape_whitespaces)               the if-chain on tokenizer_pre
  the scalar keys load() reads with ml.get_key (a key of another type
  refuses the file), their C++ types and where in load() they are read    ml.get_key calls, special_token_types
  the key strings                                                          LLM_KV_NAMES (src/llama-arch.cpp)
  the C++ types of what get_key reads into                                 struct llama_vocab::impl, load()'s locals,
                                                                           struct normalizer_options (src/llama-vocab.h)
  the token texts load() marks as control or user-defined by their text   t.first == "..." in load()
  the rules that set attributes by model, pre-tokenizer or architecture
  name, and the tokens such a rule looks up without checking they exist    the _contains_any chain in load()

The rows are X-macros; vocab.cpp (validator/src/llama_loader) defines the ones it uses. Python 3.11,
standard library only. Anything in the source that does not have the expected shape fails
loudly (SourceError, naming the line), so that a new llama.cpp is not misread in silence.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cxx import SourceError, Token, find_function, match, tokenize  # noqa: E402

# The GGUF type ml.get_key requires for each C++ type it reads into (llama-model-loader.cpp,
# GGUFMeta::GKV_Base).
_GGUF_TYPE = {
    "bool": "Bool",
    "uint8_t": "Uint8",
    "uint16_t": "Uint16",
    "uint32_t": "Uint32",
    "uint64_t": "Uint64",
    "int8_t": "Int8",
    "int16_t": "Int16",
    "int32_t": "Int32",
    "int64_t": "Int64",
    "float": "Float32",
    "double": "Float64",
    "std::string": "String",
}

# Where load() reads a key: before it knows the vocabulary type (every vocabulary), in the branch
# of the vocabularies it returns early from ("no_vocab"), or after that (every other vocabulary).
_PHASES = ("All", "NoVocab", "Vocab")

MACROS = [
    "GGUFCHECK_LLAMA_TOKENIZER",
    "GGUFCHECK_LLAMA_PRE_TOKENIZERS_OF",
    "GGUFCHECK_LLAMA_PRE_TOKENIZER",
    "GGUFCHECK_LLAMA_VOCAB_KEY",
    "GGUFCHECK_LLAMA_MARKED_TOKEN",
    "GGUFCHECK_LLAMA_NAME_RULE",
    "GGUFCHECK_LLAMA_NAME_RULE_TOKEN",
]


def _texts(tokens: list[Token]) -> list[str]:
    return [t.text for t in tokens]


def _find(tokens: list[Token], seq: list[str], start: int = 0, end: int | None = None) -> int:
    """The index of the first occurrence of the token texts `seq` in tokens[start:end], or -1."""
    end = len(tokens) if end is None else end
    n = len(seq)
    for i in range(start, end - n + 1):
        if all(tokens[i + k].text == seq[k] for k in range(n)):
            return i
    return -1


def _literal(token: Token) -> str:
    if token.kind != "str":
        raise SourceError(f"line {token.line}: expected a string literal, found {token.text!r}")
    return token.text


def _unquote(literal: str) -> str:
    # The literals this module reads are plain (no escapes); anything else is refused.
    body = literal[1:-1]
    if "\\" in body:
        raise SourceError(f"a string literal with an escape: {literal}")
    return body


class Chain:
    """An if / else if / else chain: (condition tokens or None for the else, body tokens, line)."""

    def __init__(self, tokens: list[Token], i: int):
        self.branches: list[tuple[list[Token] | None, list[Token], int]] = []
        while True:
            if tokens[i].text != "if" or tokens[i + 1].text != "(":
                raise SourceError(f"line {tokens[i].line}: expected if (")
            close = match(tokens, i + 1)
            cond = tokens[i + 2 : close]
            if tokens[close + 1].text != "{":
                raise SourceError(f"line {tokens[close].line}: an if without braces")
            end = match(tokens, close + 1)
            self.branches.append((cond, tokens[close + 2 : end], tokens[i].line))
            self.end = end + 1
            if self.end < len(tokens) and tokens[self.end].text == "else":
                nxt = self.end + 1
                if tokens[nxt].text == "if":
                    i = nxt
                    continue
                if tokens[nxt].text != "{":
                    raise SourceError(f"line {tokens[nxt].line}: an else without braces")
                end = match(tokens, nxt)
                self.branches.append((None, tokens[nxt + 1 : end], tokens[nxt].line))
                self.end = end + 1
            return


def _compared(cond: list[Token], variable: str) -> list[str]:
    """The string literals `variable == "..."` compares with in a condition."""
    out = []
    for i in range(len(cond) - 2):
        if cond[i].text == variable and cond[i + 1].text == "==":
            out.append(_literal(cond[i + 2]))
    return out


def _assigned(body: list[Token], variable: str) -> list[tuple[str, int]]:
    """What `variable = X;` assigns in a body (X one token), with the line."""
    out = []
    for i in range(len(body) - 3):
        if body[i].text == variable and body[i + 1].text == "=" and body[i + 3].text == ";":
            if i > 0 and body[i - 1].text in (".", "->", "::"):
                continue
            out.append((body[i + 2].text, body[i].line))
    return out


def _names_and_one(cond, block, line, variable, target, prefix, what):
    """The names a branch compares `variable` with, and the one `target = PREFIX_X;` it sets (X)."""
    names = _compared(cond, variable)
    if not names:
        raise SourceError(f"line {line}: a {what} branch without names")
    values = [v for v, _ in _assigned(block, target)]
    if len(values) != 1 or not values[0].startswith(prefix):
        raise SourceError(f"line {line}: a {what} branch without one {target}")
    return names, values[0][len(prefix):]


def _ids(tokens: list[Token]) -> set[str]:
    return {t.text for t in tokens if t.kind == "id"}


def _kv_names(source: Path) -> dict[str, str]:
    text = (source / "src/llama-arch.cpp").read_text()
    m = re.search(r"static const std::map<llm_kv, const char \*> LLM_KV_NAMES = \{(.*?)\n\};", text, re.S)
    if not m:
        raise SourceError("LLM_KV_NAMES not found in src/llama-arch.cpp")
    names = dict(re.findall(r'\{\s*(LLM_KV_\w+)\s*,\s*("(?:[^"\\]|\\.)*")\s*\}', m.group(1)))
    if not names:
        raise SourceError("LLM_KV_NAMES has no rows")
    return names


def _declared_types(tokens: list[Token]) -> dict[str, str]:
    """name -> C++ type of the plain declarations `TYPE name [= ...];` / `TYPE name;` in tokens
    (TYPE one of the types ml.get_key reads), at any depth: the members of a struct, the locals
    of a function."""
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        ctype = None
        if t.text == "std" and i + 2 < len(tokens) and tokens[i + 1].text == "::" and tokens[i + 2].text == "string":
            ctype, j = "std::string", i + 3
        elif t.text in _GGUF_TYPE and t.kind == "id":
            ctype, j = t.text, i + 1
        if ctype is not None and j + 1 < len(tokens) and tokens[j].kind == "id" and tokens[j + 1].text in ("=", ";"):
            prev = tokens[i - 1].text if i > 0 else ";"
            if prev in (";", "{", "}", "const", ":", ")"):
                out.setdefault(tokens[j].text, ctype)
        i += 1
    return out


def _load_parts(source: Path):
    text = (source / "src/llama-vocab.cpp").read_text()
    tokens = tokenize(text)
    _, body, first_line = find_function(tokens, "llama_vocab::impl::load")
    impl = _find(tokens, ["struct", "llama_vocab", "::", "impl", "{"])
    if impl < 0:
        raise SourceError("struct llama_vocab::impl not found in src/llama-vocab.cpp")
    members = tokens[impl + 5 : match(tokens, impl + 4)]
    header = tokenize((source / "src/llama-vocab.h").read_text())
    opts = _find(header, ["struct", "normalizer_options", "{"])
    if opts < 0:
        raise SourceError("struct normalizer_options not found in src/llama-vocab.h")
    normalizer = _declared_types(header[opts + 3 : match(header, opts + 2)])
    return body, first_line, _declared_types(members), normalizer


def _tokenizer_rows(body: list[Token]):
    """The tokenizer models: (name, vocabulary type, reads merges, pre that excuses missing
    merges, reads the charsmap, forced pre, returns early, line); the index in body where the
    chain of names ends (its else throws); the line of the early return."""
    rows = []
    no_vocab_return = -1
    i = 0
    while i < len(body) - 1:
        if not (body[i].text == "if" and body[i + 1].text == "("):
            i += 1
            continue
        close = match(body, i + 1)
        if "tokenizer_model" not in _texts(body[i + 2 : close]):
            i = close
            continue
        chain = Chain(body, i)
        ends_in_throw = False
        for cond, block, line in chain.branches:
            if cond is None:
                if _find(block, ["throw"]) < 0:
                    raise SourceError(f"line {line}: the tokenizer chain's else does not throw")
                ends_in_throw = True
                continue
            names, vtype = _names_and_one(cond, block, line, "tokenizer_model", "type",
                                          "LLAMA_VOCAB_TYPE_", "tokenizer")
            excuse = '""'
            k = _find(block, ["is_kimi_k2", "=", "("])
            if k >= 0:
                if block[k + 3].text != "tokenizer_pre" or block[k + 4].text != "==":
                    raise SourceError(f"line {block[k].line}: an unexpected merges excuse")
                excuse = _literal(block[k + 5])
            forced = [v for v, _ in _assigned(block, "tokenizer_pre")]
            ret = _find(block, ["return", ";"])
            if ret >= 0:
                no_vocab_return = block[ret].line
            for name in names:
                rows.append((name, vtype,
                             "LLM_KV_TOKENIZER_MERGES" in _ids(block), excuse,
                             "LLM_KV_TOKENIZER_PRECOMPILED_CHARSMAP" in _ids(block),
                             forced[0] if forced else '""', ret >= 0, line))
        if ends_in_throw:
            return rows, chain.end, no_vocab_return
        i = chain.end
    raise SourceError("the tokenizer_model chain (ending in a throw) was not found in load()")


def _pre_rows(body: list[Token], start: int):
    """(vocabulary type that reads a pre-tokenizer, line), and the pre-tokenizer rows: (name,
    pre type, sets escape_whitespaces = true, line); the empty name is a missing pre."""
    k = _find(body, ["if", "(", "type", "=="], start)
    if k < 0:
        raise SourceError("the pre-tokenizer branch (if (type == ...)) was not found in load()")
    outer = Chain(body, k)
    cond, block, line = outer.branches[0]
    vtype = cond[2].text
    if not vtype.startswith("LLAMA_VOCAB_TYPE_") or len(cond) != 3:
        raise SourceError(f"line {line}: an unexpected pre-tokenizer condition")
    j = _find(block, ["if", "(", "tokenizer_pre"])
    if j < 0:
        raise SourceError(f"line {line}: no pre-tokenizer chain")
    rows = []
    for c, b, bline in Chain(block, j).branches:
        if c is None:
            if _find(b, ["throw"]) < 0:
                raise SourceError(f"line {bline}: the pre-tokenizer chain's else does not throw")
            continue
        if _texts(c) == ["tokenizer_pre", ".", "empty", "(", ")"]:
            # a missing or empty key: the name ""
            c = [Token("id", "tokenizer_pre", bline), Token("op", "==", bline), Token("str", '""', bline)]
        names, pre = _names_and_one(c, b, bline, "tokenizer_pre", "pre_type", "LLAMA_VOCAB_PRE_TYPE_",
                                    "pre-tokenizer")
        escape = "true" in [v for v, _ in _assigned(b, "escape_whitespaces")]
        for name in names:
            rows.append((name, pre, escape, bline))
    return (vtype[len("LLAMA_VOCAB_TYPE_"):], line), rows, outer.end


def _key_rows(body, members, normalizer, locals_, kv_names, no_vocab_block, after_chain):
    """The scalar keys load() reads with ml.get_key: (key, GGUF type, required, phase, line)."""
    rows = []
    special = _find(body, ["special_token_types", "=", "{"])
    special_keys = []
    if special >= 0:
        end = match(body, special + 2)
        for i in range(special + 3, end):
            if body[i].text == "{" and body[i + 1].text.startswith("LLM_KV_"):
                special_keys.append((body[i + 1].text, body[i + 1].line))
    for i in range(len(body) - 4):
        if not (body[i].text == "ml" and body[i + 1].text == "." and body[i + 2].text == "get_key"):
            continue
        close = match(body, i + 3)
        args, depth, cur = [], 0, []
        for t in body[i + 4 : close]:
            if t.text in "(<[{":
                depth += 1
            elif t.text in ")>]}":
                depth -= 1
            if depth == 0 and t.text == ",":
                args.append(cur)
                cur = []
            else:
                cur.append(t)
        args.append(cur)
        required = len(args) < 3 or _texts(args[2]) == ["true"]
        target = "".join(_texts(args[1]))
        if "." in target:
            owner, field = target.split(".", 1)
            if owner != "normalizer_opts" or field not in normalizer:
                raise SourceError(f"line {body[i].line}: get_key into an unknown field {target}")
            ctype = normalizer[field]
        elif target in locals_:
            ctype = locals_[target]
        elif target in members:
            ctype = members[target]
        else:
            raise SourceError(f"line {body[i].line}: get_key into {target}, whose type is not known")
        gtype = _GGUF_TYPE[ctype]
        phase = "All" if i < no_vocab_block[0] else "NoVocab" if i < no_vocab_block[1] else "Vocab"
        if i < after_chain and phase == "Vocab":
            raise SourceError(f"line {body[i].line}: a get_key inside a tokenizer branch")
        kid = _texts(args[0])
        if len(kid) == 1 and kid[0].startswith("LLM_KV_"):
            keys = [(kid[0], body[i].line)]
        elif "".join(kid) == "std::get<0>(it)":
            if not special_keys:
                raise SourceError(f"line {body[i].line}: get_key over a list that was not found")
            keys = special_keys
        else:
            raise SourceError(f"line {body[i].line}: get_key of an unexpected key {''.join(kid)}")
        for kid_name, line in keys:
            if kid_name not in kv_names:
                raise SourceError(f"line {line}: {kid_name} is not in LLM_KV_NAMES")
            rows.append((kv_names[kid_name], gtype, required, phase, line))
    return rows


def _marked_rows(body: list[Token]):
    """The texts load() compares token texts with (t.first == "..."): tokens it marks control or
    user-defined whatever their token type."""
    seen, rows = set(), []
    for i in range(len(body) - 4):
        if body[i].text == "t" and body[i + 1].text == "." and body[i + 2].text == "first" and body[i + 3].text == "==":
            lit = _literal(body[i + 4])
            if lit not in seen:
                seen.add(lit)
                rows.append((lit, body[i].line))
    if not rows:
        raise SourceError("no t.first == \"...\" comparisons in load()")
    return rows


def _name_rules(body: list[Token]):
    """The attribute rules by name: the chain whose conditions are _contains_any(subject, {...})
    calls. Rows (rule, subject, substring, line) and (rule, token, line) for the tokens a rule
    looks up with token_to_id.at without checking that they exist."""
    k = -1
    for i in range(len(body) - 3):
        if body[i].text == "if" and body[i + 1].text == "(":
            close = match(body, i + 1)
            if "_contains_any" in _texts(body[i + 2 : close]):
                k = i
                break
    if k < 0:
        raise SourceError("the attribute rules by name (_contains_any) were not found in load()")
    subjects = {"model_name": "ModelName", "tokenizer_pre": "TokenizerPre", "general_arch": "Architecture"}
    rules, required = [], []
    for index, (cond, block, line) in enumerate(Chain(body, k).branches):
        if cond is None:
            raise SourceError(f"line {line}: an else in the attribute rules")
        for i in range(len(cond) - 3):
            if cond[i].text == "_contains_any" and cond[i + 1].text == "(":
                subject = cond[i + 2].text
                if subject not in subjects or cond[i + 3].text != "," or cond[i + 4].text != "{":
                    raise SourceError(f"line {cond[i].line}: an unexpected _contains_any")
                end = match(cond, i + 4)
                for t in cond[i + 5 : end]:
                    if t.text != ",":
                        rules.append((index, subjects[subject], _literal(t), t.line))
        checked = set()
        for i in range(len(block) - 4):
            if block[i].text == "token_to_id" and block[i + 1].text == "." and block[i + 2].text == "count":
                checked.add(block[i + 4].text)
        for i in range(len(block) - 4):
            if block[i].text == "_set_token_attr" and block[i + 1].text == "(":
                arg = block[i + 2]
                if arg.kind == "str":
                    if arg.text not in checked:
                        required.append((index, arg.text, arg.line))
                elif arg.text == "token":
                    # for (const auto * token : {"...", ...}) { _set_token_attr(token, ...); }
                    f = i
                    while f >= 0 and not (block[f].text == "for" and block[f + 1].text == "("):
                        f -= 1
                    if f < 0:
                        raise SourceError(f"line {arg.line}: _set_token_attr(token) outside a for")
                    brace = _find(block, [":", "{"], f, i)
                    if brace < 0:
                        raise SourceError(f"line {block[f].line}: an unexpected for over tokens")
                    for t in block[brace + 2 : match(block, brace + 1)]:
                        if t.text != "," and t.text not in checked:
                            required.append((index, _literal(t), t.line))
                else:
                    raise SourceError(f"line {arg.line}: _set_token_attr of {arg.text}")
    return rules, required


def _flag(b: bool) -> str:
    return "true" if b else "false"


def generate(source: Path, version: str = "llama.cpp") -> str:
    """The text of validator/src/llama_loader/generated/llama_vocab.inc from the llama.cpp source."""
    body, first_line, members, normalizer = _load_parts(source)
    kv_names = _kv_names(source)
    locals_ = _declared_types(body)
    tokenizers, chain_end, no_vocab_return = _tokenizer_rows(body)
    (pre_of, pre_of_line), pres, pre_end = _pre_rows(body, chain_end)
    # The no_vocab branch: the first if of the tokenizer chain that returns.
    nv_start = nv_end = -1
    for i in range(len(body) - 1):
        if body[i].text == "if" and body[i + 1].text == "(":
            close = match(body, i + 1)
            if "tokenizer_model" in _texts(body[i + 2 : close]):
                nv_start, nv_end = i, match(body, close + 1)
                if _find(body, ["return", ";"], nv_start, nv_end) < 0:
                    raise SourceError(f"line {body[i].line}: the first tokenizer branch does not return")
                break
    keys = _key_rows(body, members, normalizer, locals_, kv_names, (nv_start, nv_end), chain_end)
    marked = _marked_rows(body)
    rules, required = _name_rules(body)
    last_line = body[-1].line

    out = []
    out.append(f"// Generated by validator/tools/llama_tables/vocab.py from {version}:\n")
    out.append(f"// llama_vocab::impl::load (src/llama-vocab.cpp lines {first_line}-{last_line}).\n")
    out.append("// Do not edit: run validator/tools/llama_tables/generate.py (docs/model-checks.md).\n")
    out.append("// Each include site defines the rows it uses; the others expand to nothing.\n")
    for m in MACROS:
        out.append(f"#ifndef {m}\n#define {m}(...)\n#endif\n")
    out.append("\n// Tokenizer models: the if-chain on tokenizer_model (any other name throws \"unknown\n")
    out.append(f"// tokenizer\"; \"no_vocab\" and \"none\" return before the vocabulary is read, line {no_vocab_return}).\n")
    out.append("// GGUFCHECK_LLAMA_TOKENIZER(name, vocabulary type, reads tokenizer.ggml.merges (missing: throws),\n")
    out.append("//     the tokenizer.ggml.pre that excuses missing merges, reads tokenizer.ggml.precompiled_charsmap,\n")
    out.append("//     the pre-tokenizer it forces, returns early, source line)\n")
    for name, vtype, merges, excuse, charsmap, forced, returns, line in tokenizers:
        out.append(f"GGUFCHECK_LLAMA_TOKENIZER({name}, {vtype}, {_flag(merges)}, {excuse}, {_flag(charsmap)}, {forced}, {_flag(returns)}, {line})\n")
    out.append(f"\n// Pre-tokenizers: read for this vocabulary type only (line {pre_of_line}); any other name throws\n")
    out.append("// \"unknown pre-tokenizer type\". The empty name is a missing or empty tokenizer.ggml.pre.\n")
    out.append(f"GGUFCHECK_LLAMA_PRE_TOKENIZERS_OF({pre_of}, {pre_of_line})\n")
    out.append("// GGUFCHECK_LLAMA_PRE_TOKENIZER(name, pre type, sets escape_whitespaces, source line)\n")
    for name, pre, escape, line in pres:
        out.append(f"GGUFCHECK_LLAMA_PRE_TOKENIZER({name}, {pre}, {_flag(escape)}, {line})\n")
    out.append("\n// Scalar keys load() reads with ml.get_key, which throws on any other GGUF type (and on a\n")
    out.append("// missing required key). Phase: All (every vocabulary), NoVocab (the \"no_vocab\" branch),\n")
    out.append("// Vocab (every vocabulary with tokens). \"%s\" is the architecture's name.\n")
    out.append("// GGUFCHECK_LLAMA_VOCAB_KEY(key, GGUF type, required, phase, source line)\n")
    for key, gtype, required_, phase, line in keys:
        out.append(f"GGUFCHECK_LLAMA_VOCAB_KEY({key}, {gtype}, {_flag(required_)}, {phase}, {line})\n")
    out.append("\n// Token texts load() compares with (t.first == \"...\"): it marks such a token control or\n")
    out.append("// user-defined whatever its token type. GGUFCHECK_LLAMA_MARKED_TOKEN(text, source line)\n")
    for lit, line in marked:
        out.append(f"GGUFCHECK_LLAMA_MARKED_TOKEN({lit}, {line})\n")
    out.append("\n// Attributes set by name: the first rule one of whose substrings the subject contains applies\n")
    out.append("// (general.name lower-cased: ModelName; tokenizer.ggml.pre; general.architecture).\n")
    out.append("// GGUFCHECK_LLAMA_NAME_RULE(rule, subject, substring, source line)\n")
    for index, subject, lit, line in rules:
        out.append(f"GGUFCHECK_LLAMA_NAME_RULE({index}, {subject}, {lit}, {line})\n")
    out.append("// The tokens a rule looks up with token_to_id.at (a missing one throws std::out_of_range).\n")
    out.append("// GGUFCHECK_LLAMA_NAME_RULE_TOKEN(rule, token text, source line)\n")
    for index, lit, line in required:
        out.append(f"GGUFCHECK_LLAMA_NAME_RULE_TOKEN({index}, {lit}, {line})\n")
    out.append("\n")
    for m in MACROS:
        out.append(f"#undef {m}\n")
    return "".join(out)
