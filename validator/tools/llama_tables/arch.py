"""Architectures, keys, tensor names and the model loading code of the pinned llama.cpp, read
from its source into validator/src/loader/generated/llama_arch.inc.

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
  <class>::load_arch_hparams / load_arch_tensors                     src/models/*.cpp
The functions become S-expressions (cxx.py) that ggufcheck's interpreter runs against a file's
keys and tensors (validator/src/loader/interpreter.cpp).
"""

from __future__ import annotations

import re
from pathlib import Path

from cxx import SourceError, find_function, parse_body, quote, tokenize

# The architectures whose tensor sets ggufcheck models (issue 15): their load_arch_tensors runs.
# Every other architecture gets the common hyperparameter reads and its own load_arch_hparams.
MODELLED = ["llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3", "gpt-oss",
            "mistral3", "deepseek2", "command-r", "cohere2", "glm4"]


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


def _model_file(source: Path, cls: str) -> str:
    for path in sorted((source / "src" / "models").glob("*.cpp")):
        if f"void {cls}::load_arch_tensors" in path.read_text():
            return f"src/models/{path.name}"
    raise SourceError(f"no source file defines {cls}::load_arch_tensors")


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

    factory = _factory(model_cpp)
    by_name = {text.strip('"'): enum_name for enum_name, text, _ in names}
    for arch in sorted(by_name):
        enum_name = by_name[arch]
        cls = factory.get(enum_name)
        if cls is None:
            continue
        try:
            path = _model_file(source, cls)
        except SourceError:
            continue
        text = (source / path).read_text()
        if f"void {cls}::load_arch_hparams" in text:
            try:
                where, params, body = _function(source, path, f"{cls}::load_arch_hparams")
                emit(_function_row(f"{arch}:load_arch_hparams", params, where, body))
            except SourceError as error:
                if arch in MODELLED:
                    raise
                emit(f"// {arch}: load_arch_hparams not read ({error}): keys checked by the common code only")
                emit(f'GGUFCHECK_LLAMA_UNREAD({quote(arch)})')
        if arch in MODELLED:
            where, params, body = _function(source, path, f"{cls}::load_arch_tensors")
            emit(_function_row(f"{arch}:load_arch_tensors", params, where, body))
    missing = [a for a in MODELLED if a not in by_name]
    if missing:
        raise SourceError(f"modelled architectures unknown to this llama.cpp: {missing}")
    return "\n".join(out) + "\n"


def _function_row(name: str, params: list[str], where: str, body: str) -> str:
    return (f"GGUFCHECK_LLAMA_FUNCTION({quote(name)}, {quote(','.join(params))}, {quote(where)},\n"
            f"    R\"sx({body})sx\")")
