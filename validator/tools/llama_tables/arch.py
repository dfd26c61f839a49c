"""Architectures, keys, tensor names and the model loading code of the pinned llama.cpp, read
from its source into validator/src/llama_loader/generated/llama_arch.inc.

What is read, and from where:
  LLM_ARCH_NAMES, LLM_KV_NAMES, LLM_TENSOR_NAMES, LLM_TENSOR_INFOS  src/llama-arch.cpp
  enum llm_arch (the architectures' order)                           src/llama-arch.h
  the llama_hparams fields, their types and defaults                 src/llama-hparams.h
  the loader's constants (TENSOR_NOT_REQUIRED, ...)                  src/llama-model-loader.h
  enum constants used by the loading code                            include/llama.h, src/llama-hparams.h
  LLAMA_ROPE_SCALING_TYPES                                           src/llama-model.cpp
  the architecture -> model class map (the factory's switch)         src/llama-model.cpp
  llama_model_base::load_hparams, create_tensor_qkv, load_swa_pattern src/llama-model.cpp
  LLAMA_LOAD_LOCALS                                                  src/llama-model.h
  the model classes' bases (a class may inherit its loading code)   src/models/models.h
  <class>::load_arch_hparams / load_arch_tensors                     src/models/*.cpp
  what load_tensors runs around load_arch_tensors                    src/llama-model.cpp
  enum ggml_type (the loader compares tensor types)                  ggml/include/ggml.h
The functions become S-expressions (cxx.py) that ggufcheck's interpreter runs against a file's
keys and tensors (validator/src/llama_loader/interpreter.cpp).
"""

from __future__ import annotations

import re
from pathlib import Path

from cxx import SourceError, find_function, match, parse_body, quote, tokenize

# Every architecture's loading code is written into the table: its load_arch_hparams and its
# load_arch_tensors, found in its model class or the class it inherits them from. One the reader
# cannot translate becomes a function whose body is (unread "why"): running it is GGUF7016.


def _map(text: str, name: str) -> list[tuple[str, str, int]]:
    m = re.search(r"static const std::map<\w+, (?:const char \*|llm_tensor_info)> " + name + r" = \{(.*?)\n\};", text, re.S)
    if not m:
        raise SourceError(f"{name} not found")
    start = text[: m.start(1)].count("\n") + 1
    rows = []
    for i, line in enumerate(m.group(1).split("\n")):
        r = re.match(r'\s*\{\s*(\w+),\s*(.*?)\s*\},?\s*(?://.*)?$', line)
        if r:
            rows.append((r.group(1), r.group(2), start + i))
    return rows


def _enum(text: str, name: str) -> list[tuple[str, int]]:
    m = re.search(r"enum " + name + r"\s*(?::\s*\w+\s*)?\{(.*?)\};", text, re.S)
    if not m:
        raise SourceError(f"enum {name} not found")
    values, next_value = [], 0
    for item in re.sub(r"//[^\n]*", "", m.group(1)).split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            key, value = (s.strip() for s in item.split("=", 1))
            known = dict(values)
            next_value = known[value] if value in known else int(value, 0)
        else:
            key = item
        values.append((key, next_value))
        next_value += 1
    return values


def _hparams_fields(text: str) -> list[tuple[str, str, int, str]]:
    """(name, element type, element count (0: scalar), default) of struct llama_hparams."""
    body = re.search(r"struct llama_hparams \{(.*?)\n\};", text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    fields = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        m = re.fullmatch(r"std::array<\s*(\w+)\s*,\s*(\w+)\s*> (\w+)(?: = .*)?", decl)
        if m:
            fields.append((m.group(3), m.group(1), 512 if m.group(2) == "LLAMA_MAX_LAYERS" else int(m.group(2)) if m.group(2).isdigit() else -1, "0"))
            continue
        m = re.fullmatch(r"struct (llama_hparams_\w+) (\w+)", decl)
        if m:
            # a nested struct (posnet, convnext): its fields as "posnet.n_embd"
            inner = re.search(r"struct " + m.group(1) + r" \{(.*?)\};", text, re.S).group(1)
            for part in re.sub(r"//[^\n]*", "", inner).split(";"):
                f = re.fullmatch(r"(u?int32_t|float|bool) (\w+)", " ".join(part.split()))
                if f:
                    fields.append((f"{m.group(2)}.{f.group(2)}", f.group(1), 0, "0"))
            continue
        m = re.fullmatch(r"std::bitset<\s*LLAMA_MAX_LAYERS\s*> (\w+)", decl)
        if m:
            fields.append((m.group(1), "bool", 512, "0"))
            continue
        m = re.fullmatch(r"(?:enum )?(bool|float|double|u?int(?:8|16|32|64)_t|int|llama_\w+|std::string) (\w+)(?: = (.+))?", decl)
        if m and "(" not in decl:
            default = (m.group(3) or "0").rstrip("fF")
            default = {"true": "1", "false": "0"}.get(default, default)
            fields.append((m.group(2), m.group(1), 0, default))
    return [f for f in fields if f[2] != -1]


def _factory(model_cpp: str) -> dict[str, str]:
    return dict(re.findall(r"case (LLM_ARCH_\w+):\s*return new (llama_model_\w+)\(", model_cpp))


def _function(source: Path, path: str, qualified: str) -> tuple[str, list[str], str]:
    text = (source / path).read_text()
    params, body, line = find_function(tokenize(text), qualified)
    return f"{path}:{line}", params, parse_body(body, f"{path}")


def _macro(source: Path, path: str, name: str) -> tuple[str, str]:
    text = (source / path).read_text()
    m = re.search(r"#define " + name + r" \\\n((?:.*\\\n)*.*\n)", text)
    if not m:
        raise SourceError(f"macro {name} not found in {path}")
    line = text[: m.start()].count("\n") + 1
    body = m.group(1).replace("\\\n", "\n")
    return f"{path}:{line}", parse_body(tokenize(body, line + 1), path)


def _bases(models_h: str) -> dict[str, str]:
    """Each model class's base class (struct llama_model_x : public llama_model_y)."""
    return dict(re.findall(r"^struct (llama_model_\w+)\s*:\s*public (llama_model_\w+)\s*\{", models_h, re.M))


def _constructors_are_empty(models_h: str, classes: set[str]) -> None:
    """The model classes' constructors run nothing but their base's: were one to do more (an
    assertion), the table would have to hold it. Fails loudly instead of missing it."""
    for cls in sorted(classes):
        m = re.search(cls + r"\(const struct llama_model_params & params\)\s*:\s*(\w+)\(params\)\s*(\{[^}]*\})", models_h)
        if not m or m.group(2).replace(" ", "") != "{}":
            raise SourceError(f"src/models/models.h: the constructor of {cls} is not empty: model it")


def _definition(source: Path, files: dict[str, str], bases: dict[str, str], cls: str,
                method: str) -> tuple[str, str] | None:
    """(source path, defining class) of `cls::method`, or of the base class it inherits it from."""
    seen = set()
    while cls and cls not in seen and cls != "llama_model_base":
        seen.add(cls)
        for path, text in files.items():
            if re.search(rf"\b{cls}::{method}\s*\(", text):
                return path, cls
        cls = bases.get(cls, "")
    return None


def _arch_predicate(arch_cpp: str, name: str) -> tuple[str, str]:
    """bool NAME(const llm_arch & arch) { switch (arch) { case A: case B: return true; default:
    return false; } } as (return (arch == A || arch == B))."""
    m = re.search(r"bool " + name + r"\(const llm_arch & arch\) \{\s*switch \(arch\) \{((?:\s*case \w+:)+)\s*return true;\s*default:\s*return false;\s*\}\s*\}", arch_cpp)
    if not m:
        raise SourceError(f"src/llama-arch.cpp: {name} is not a switch of the architectures that returns true")
    line = arch_cpp[: m.start()].count("\n") + 1
    test = "(n 0)"
    for arch in re.findall(r"case (\w+):", m.group(1)):
        test = f'(bin "||" {test} (bin "==" (id arch) (id {arch})))'
    return f"src/llama-arch.cpp:{line}", f"(block (return {test}))"


def _model_tensor_members(source: Path) -> tuple[str, str]:
    """The tensor pointers of struct llama_model (src/llama-model.h), null until created, and its
    lists of strings (classifier_labels), empty until read: as assignments, which the
    interpreter runs before loading."""
    text = (source / "src/llama-model.h").read_text()
    m = re.search(r"^struct llama_model \{\n(.*?)^\};", text, re.S | re.M)
    if not m:
        raise SourceError("src/llama-model.h: struct llama_model not found")
    first = text[: m.start(1)].count("\n") + 1
    out = []
    for i, line in enumerate(m.group(1).split("\n")):
        for name in re.findall(r"^\s*struct ggml_tensor \* (\w+)\s*=\s*nullptr;", line):
            out.append(f'(expr (assign "=" (id {name}) (n 0)) {first + i})')
        for name in re.findall(r"^\s*std::vector<std::string> (\w+);", line):
            out.append(f'(expr (assign "=" (id {name}) (list)) {first + i})')  # empty
    return f"src/llama-model.h:{first}", "(block " + " ".join(out) + ")"


def _unread(name: str, where: str, why: str) -> str:
    return _function_row(name, ["ml"], where, f"(block (unread {quote(why)}))")


def _load_tensors_block(source: Path) -> tuple[str, str]:
    """The block of llama_model_base::load_tensors that creates the tensors: the expert check
    before load_arch_tensors, the call, and the generic pass for the optional .scale and
    .input_scale tensors after it."""
    path = "src/llama-model.cpp"
    tokens = tokenize((source / path).read_text())
    _, body, _ = find_function(tokens, "llama_model_base::load_tensors")
    call = next(i for i in range(len(body) - 3)
                if body[i].text == "load_arch_tensors" and body[i + 1].text == "(")
    depth, start = 0, None
    for i in range(call, -1, -1):
        if body[i].text == "}":
            depth += 1
        elif body[i].text == "{":
            if depth == 0:
                start = i
                break
            depth -= 1
    if start is None:
        raise SourceError(f"{path}: load_arch_tensors is not called in a block of load_tensors")
    end = match(body, start)
    return f"{path}:{body[start].line}", parse_body(body[start + 1 : end], path)


def generate(source: Path) -> str:
    arch_cpp = (source / "src/llama-arch.cpp").read_text()
    arch_h = (source / "src/llama-arch.h").read_text()
    hparams_h = (source / "src/llama-hparams.h").read_text()
    loader_h = (source / "src/llama-model-loader.h").read_text()
    llama_h = (source / "include/llama.h").read_text()
    model_cpp = (source / "src/llama-model.cpp").read_text()

    out = []
    emit = out.append

    emit("// Architectures: LLM_ARCH_NAMES (src/llama-arch.cpp), numbered as enum llm_arch (src/llama-arch.h).")
    arch_ids = dict(_enum(arch_h, "llm_arch"))
    names = _map(arch_cpp, "LLM_ARCH_NAMES")
    for enum_name, text, line in names:
        emit(f"GGUFCHECK_LLAMA_ARCH({quote(enum_name)}, {text}, {arch_ids[enum_name]})")

    emit("// Keys: LLM_KV_NAMES (src/llama-arch.cpp); %s is the architecture's name.")
    for enum_name, text, line in _map(arch_cpp, "LLM_KV_NAMES"):
        emit(f"GGUFCHECK_LLAMA_KEY({quote(enum_name)}, {text})")

    emit("// Tensor names: LLM_TENSOR_NAMES (src/llama-arch.cpp); %d is the layer. `unused`: the")
    emit("// tensor's LLM_TENSOR_INFOS op is GGML_OP_NONE, so the loader counts it and drops it.")
    infos = {e: v for e, v, _ in _map(arch_cpp, "LLM_TENSOR_INFOS")}
    for enum_name, text, line in _map(arch_cpp, "LLM_TENSOR_NAMES"):
        unused = "GGML_OP_NONE" in infos.get(enum_name, "GGML_OP_NONE")
        emit(f"GGUFCHECK_LLAMA_TENSOR({quote(enum_name)}, {text}, {'true' if unused else 'false'})")

    emit("// Constants the loading code compares with.")
    constants: list[tuple[str, int]] = []
    for m in re.finditer(r"static const int (TENSOR_\w+)\s*= 1 << (\d+);", loader_h):
        constants.append((m.group(1), 1 << int(m.group(2))))
    for enum_name in ("llama_rope_scaling_type", "llama_pooling_type", "llama_vocab_type"):
        constants += _enum(llama_h, enum_name)
    for enum_name in ("llama_expert_gating_func_type", "llama_swa_type"):
        constants += _enum(hparams_h, enum_name)
    for m in re.finditer(r"#define (LLAMA_MAX_\w+)\s+(\d+)", hparams_h):
        constants.append((m.group(1), int(m.group(2))))
    constants += [(name, value) for name, value in arch_ids.items()]
    constants += _enum((source / "ggml/include/ggml.h").read_text(), "ggml_type")
    seen = set()
    for name, value in constants:
        if name not in seen:
            seen.add(name)
            emit(f"GGUFCHECK_LLAMA_CONSTANT({quote(name)}, {value})")

    emit("// RoPE scaling type names: LLAMA_ROPE_SCALING_TYPES (src/llama-model.cpp).")
    for enum_name, text, line in _map(model_cpp, "LLAMA_ROPE_SCALING_TYPES"):
        emit(f"GGUFCHECK_LLAMA_ROPE_SCALING({text}, {quote(enum_name)})")

    emit("// struct llama_hparams (src/llama-hparams.h): name, element type, elements (0: scalar), default.")
    for name, ctype, count, default in _hparams_fields(hparams_h):
        emit(f"GGUFCHECK_LLAMA_HPARAM({quote(name)}, {quote(ctype)}, {count}, {quote(default)})")

    emit("// The loading code, as S-expressions (validator/tools/llama_tables/cxx.py): name, parameters,")
    emit("// where it comes from, body.")
    functions = [
        ("load_hparams", "src/llama-model.cpp", "llama_model_base::load_hparams"),
        ("create_tensor_qkv", "src/llama-model.cpp", "llama_model_base::create_tensor_qkv"),
        ("create_tensor_gate_up_exps", "src/llama-model.cpp", "llama_model_base::create_tensor_gate_up_exps"),
        ("load_swa_pattern", "src/llama-model.cpp", "llama_model_base::load_swa_pattern"),
    ]
    for name, path, qualified in functions:
        where, params, body = _function(source, path, qualified)
        emit(_function_row(name, params, where, body))
    hparams_cpp = (source / "src/llama-hparams.cpp").read_text()
    for method in sorted(set(re.findall(r"^\w[\w:<> ]* llama_hparams::(\w+)\(", hparams_cpp, re.M))):
        try:
            where, params, body = _function(source, "src/llama-hparams.cpp", f"llama_hparams::{method}")
        except SourceError as error:
            emit(f"// hparams.{method} not read ({error}): calls to it are not followed")
            continue
        emit(_function_row(f"hparams.{method}", params, where, body))
    where, body = _macro(source, "src/llama-model.h", "LLAMA_LOAD_LOCALS")
    emit(_function_row("LLAMA_LOAD_LOCALS", [], where, body))

    where, body = _load_tensors_block(source)
    emit(_function_row("load_tensors", ["ml"], where, body))
    where, body = _model_tensor_members(source)
    emit(_function_row("model_tensor_members", [], where, body))
    for predicate in ("llm_arch_is_recurrent", "llm_arch_is_hybrid"):
        where, body = _arch_predicate(arch_cpp, predicate)
        emit(_function_row(predicate, ["arch"], where, body))

    factory = _factory(model_cpp)
    models_h = (source / "src/models/models.h").read_text()
    bases = _bases(models_h)
    _constructors_are_empty(models_h, set(factory.values()))
    files = {f"src/models/{p.name}": p.read_text() for p in sorted((source / "src" / "models").glob("*.cpp"))}
    unsupported = re.search(r'throw std::runtime_error\(std::string\("unsupported model architecture', model_cpp)
    unsupported_line = model_cpp[: unsupported.start()].count("\n") + 1 if unsupported else 0
    by_name = {text.strip('"'): enum_name for enum_name, text, _ in names}
    coverage = []
    helpers: set[str] = set()
    for arch in sorted(by_name):
        enum_name = by_name[arch]
        cls = factory.get(enum_name)
        row = {"arch": arch, "class": cls}
        coverage.append(row)
        if cls is None:
            # llama_model_mapping's default: the architecture has a name but no loader
            where = f"src/llama-model.cpp:{unsupported_line}"
            emit(_function_row(f"{arch}:create", [], where,
                               f'(block (throw "unsupported model architecture" {unsupported_line}))'))
            row["hparams"] = row["tensors"] = ("refused", "no model class: llama_model_mapping throws \"unsupported model architecture\"")
            continue
        for method, key in (("load_arch_hparams", "hparams"), ("load_arch_tensors", "tensors")):
            found = _definition(source, files, bases, cls, method)
            name = f"{arch}:{method}"
            if found is None:
                emit(_unread(name, "src/models/models.h", f"no definition of {cls}::{method}"))
                row[key] = ("lost", f"no definition of {cls}::{method}")
                continue
            path, owner = found
            try:
                where, params, body = _function(source, path, f"{owner}::{method}")
            except SourceError as error:
                emit(_unread(name, path, str(error)))
                row[key] = ("lost", str(error))
                continue
            emit(_function_row(name, params, where, body))
            row[key] = ("followed", where + ("" if owner == cls else f" (inherited from {owner})"))
            row[key + "_body"] = body
            # the file's own helpers it calls (static functions): they may refuse too
            for helper in sorted(set(re.findall(r"\(call \(id (\w+)\)", body))):
                if helper in helpers or not re.search(rf"^static [^=;(]*\b{helper}\(", files[path], re.M):
                    continue
                helpers.add(helper)
                try:
                    hwhere, hparams_, hbody = _function(source, path, helper)
                    emit(_function_row(helper, hparams_, hwhere, hbody))
                except SourceError as error:
                    emit(_unread(helper, path, str(error)))
    generate.coverage = coverage
    return "\n".join(out) + "\n"


def _function_row(name: str, params: list[str], where: str, body: str) -> str:
    return (f"GGUFCHECK_LLAMA_FUNCTION({quote(name)}, {quote(','.join(params))}, {quote(where)},\n"
            f"    R\"sx({body})sx\")")


def _refusals(body: str) -> list[str]:
    """The refusals an S-expression body holds, as `assert:LINE` and `throw:LINE` (a throw or a
    GGML_ABORT), in source order."""
    out = []
    tokens = re.findall(r'"(?:\\.|[^"\\])*"|\(|\)|[^\s()]+', body)
    stack: list[list[str]] = []
    for t in tokens:
        if t == "(":
            stack.append([])
        elif t == ")":
            node = stack.pop()
            if node and node[0] in ("assert", "throw") and node[-1].isdigit():
                out.append(f"{node[0]}:{node[-1]}")
            if stack:
                stack[-1].append("(...)")
        elif stack:
            stack[-1].append(t)
    return out


def coverage_markdown(version: str) -> str:
    """docs/architectures.md: what ggufcheck models of each architecture, from the table."""
    rows = getattr(generate, "coverage", None)
    if rows is None:
        raise SourceError("generate() has not run")
    lines = [
        "# Architectures: what ggufcheck models of each",
        "",
        f"Generated by `validator/tools/llama_tables/generate.py` from {version}; do not edit (ctest",
        "`llama_tables_are_current` fails when it is not what the generator writes).",
        "",
        "For every architecture of the pinned llama.cpp, ggufcheck runs the common hyperparameter",
        "reads (`llama_model_base::load_hparams`), the architecture's `load_arch_hparams`, the block",
        "of `load_tensors` around its `load_arch_tensors` (the expert check before it, the optional",
        "`.scale` and `.input_scale` tensors after it) and its `load_arch_tensors` itself, translated",
        "from llama.cpp's source (see [model-checks.md](model-checks.md)). The model classes'",
        "constructors run nothing else (the generator checks that they are empty). Of what",
        "`llama_model_load` runs besides, with `no_alloc`: `load_vocab` is the vocabulary checks'",
        "(GGUF7006 to GGUF7010), and `print_info` only logs (the `llama_hparams` methods it calls",
        "abort only for a layer past `n_layer_all`, which it never asks for, and `n_gqa` does not",
        "divide by a zero `n_head_kv`).",
        "",
        "- **hparams**, **tensors**: where the function comes from (`followed`: translated whole;",
        "  `inherited from`: the class reuses its base class's), or why it is not followed. A function",
        "  that is not followed makes every file of the architecture GGUF7016 loader-not-predicted",
        "  (an error in the strict and llama.cpp profiles), never a pass.",
        "- **refusals**: the source lines of the assertions (`GGML_ASSERT`), throws and aborts of",
        "  the two functions, each a GGUF7005 (or GGUF7002 / GGUF7003 for a key) when a file breaks",
        "  it. An integer division or modulo by a value that is 0 is a refusal too (llama.cpp dies",
        "  of SIGFPE), wherever the code divides.",
        "",
        "Being translated is not being followed for every file: where a value the code depends on is",
        "one ggufcheck does not model (a tensor's contents, a map of token substitutions), the",
        "interpreter stops at that line and the report is GGUF7016, naming it.",
        "",
        "| architecture | model class | hparams | tensors | refusals (hparams; tensors) |",
        "|---|---|---|---|---|",
    ]
    followed = 0
    for row in rows:
        cells = []
        for key in ("hparams", "tensors"):
            state, what = row[key]
            cells.append(what if state == "followed" else f"**{state}**: {what}")
        if row["hparams"][0] == "followed" and row["tensors"][0] == "followed":
            followed += 1
        refusals = "; ".join(", ".join(_refusals(row.get(k + "_body", ""))) or "-" for k in ("hparams", "tensors"))
        cls = f"`{row['class']}`" if row["class"] else "-"
        lines.append(f"| `{row['arch']}` | {cls} | {cells[0]} | {cells[1]} | {refusals} |")
    lines += [
        "",
        f"{len(rows)} architectures; {followed} with both functions translated; "
        f"{len(rows) - followed} refused by llama.cpp for want of a model class.",
        "",
    ]
    return "\n".join(lines)
