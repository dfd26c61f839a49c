"""What mtmd's clip loader (tools/mtmd/clip.cpp of the pinned llama.cpp) asks of each projector
type, read from its source: the keys of the type's case of load_hparams' "model-specific params"
switch, the tensors of its case of load_tensors' switch, the tensor clip_n_mmproj_embd reads the
width of, and whether clip_get_graph_builder makes its graph without more.

Only a small language is followed: get_u32(KEY, hparams.x[, required]); hparams.x = constant;
hparams.n_merge = constant; set_limit_image_tokens(min, max); set_warmup_n_tokens(n*n);
conditions on the projector type (model.proj_type == PROJECTOR_TYPE_X, ||, &&, bool locals);
conditions on values whose branches set nothing a check reads; GGML_ASSERT of comparisons of
hparams members whose values the case set (a constant, or a key read after one or required) with
constants or each other (|| of && of comparisons, `x % k == v`, string literals as messages);
InternVL's set_internvl_dhr_res_candidates; model.x = get_tensor(name[, required]) with a name of
TN_ macros, string literals, integers and the modality's prefix; MLP's "if (model.x)
model.proj_type = Y". A type whose code has anything else is not followed: the reason is returned
instead, and ggufcheck says GGUF7016 for it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

SOURCE = "tools/mtmd/clip.cpp"
HEADER = "tools/mtmd/clip-impl.h"
MTMD = "tools/mtmd/mtmd.cpp"

# hparams fields the common checks of load_hparams and init_ctx read: a type that sets one in a
# way the table cannot carry is not followed.
CHECKED_FIELDS = {
    "image_size", "patch_size", "n_embd", "image_min_pixels", "image_max_pixels",
    "attn_window_size", "n_mel_bins", "n_layer", "warmup_image_size", "n_head",
    "custom_image_min_tokens", "custom_image_max_tokens", "audio_sample_rate", "audio_n_fft",
    "audio_hop_len", "audio_window_len", "feature_layers", "image_res_candidates",
    "warmup_audio_size",
}
AUDIO_FIELDS = ("audio_sample_rate", "audio_n_fft", "audio_window_len", "audio_hop_len")
# What a key read into these fields takes part in (the rest are read and not checked).
KEY_ROLES = {"n_merge": "NMerge", "image_min_pixels": "MinPixels",
             "image_max_pixels": "MaxPixels", "attn_window_size": "WindowSize"}
# The comparisons of a GGML_ASSERT, as the table's AssertOp names them.
COMPARISONS = {"==": "Eq", "!=": "Ne", "<": "Lt", "<=": "Le", ">": "Gt", ">=": "Ge"}
# The named constants an assert may compare with.
NAMED_CONSTANTS = {"INT32_MAX": 2**31 - 1}


class NotFollowed(Exception):
    """The type's code goes beyond what this reader follows; the message says where."""


@dataclass
class Projector:
    enumerator: str
    name: str
    # What the type's case does, in order: ("Key", key, required, role, member), ("Merge", n),
    # ("Limit", min_tokens, max_tokens), ("Warmup", side), ("WarmupImage",), ("Set", member,
    # value), ("Assert", index, text), ("TileCandidates",).
    steps: list = field(default_factory=list)
    # Assert index -> alternatives (||), each a list of (member, modulus, op, other member,
    # constant) comparisons (&&): `member [% modulus] op (other member or constant)`.
    asserts: list = field(default_factory=list)
    known: set = field(default_factory=set)        # members whose value the case set
    tensors: list = field(default_factory=list)   # (member, name, required)
    audio: dict = field(default_factory=dict)
    embd_tensor: str = ""
    embd_dim: int = 0
    embd_exact: bool = True
    becomes: tuple = ()                            # (tensor present, its embd tensor, its dim)
    vision: bool = False                           # init_vision has a preprocessor for it
    audio_input: bool = False                      # init_audio has one
    why_not: str = ""


def strip_comments(text: str) -> str:
    """Removes // and /* */ comments, leaving string and character literals whole."""
    token = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)
    return token.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else " ", text)


def match_close(text: str, i: int, opening: str, closing: str) -> int:
    depth = 0
    for j in range(i, len(text)):
        if text[j] == opening:
            depth += 1
        elif text[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {opening}")


def skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def if_statement(body: str, i: int):
    """The if statement at i (with its else chain): (condition, then, else or None, end)."""
    m = re.match(r"if\s*\(", body[i:])
    p = i + m.end() - 1
    close = match_close(body, p, "(", ")")
    condition = body[p + 1:close]
    j = skip_space(body, close + 1)
    if body[j] == "{":
        end = match_close(body, j, "{", "}")
        then, j = body[j + 1:end], end + 1
    else:
        end = body.index(";", j)
        then, j = body[j:end + 1], end + 1
    k = skip_space(body, j)
    otherwise = None
    if body.startswith("else", k):
        k = skip_space(body, k + 4)
        if body.startswith("if", k):
            *_, chain_end = if_statement(body, k)
            otherwise, j = body[k:chain_end], chain_end
        elif body[k] == "{":
            end = match_close(body, k, "{", "}")
            otherwise, j = body[k + 1:end], end + 1
        else:
            raise NotFollowed("else without braces")
    return condition.strip(), then, otherwise, j


def statements(body: str) -> list:
    """The top-level statements: ("stmt", text), ("if", cond, then, else), ("block", body) or
    ("loop", text)."""
    out = []
    i = 0
    while True:
        i = skip_space(body, i)
        if i >= len(body):
            return out
        if body[i] == "{":
            end = match_close(body, i, "{", "}")
            out.append(("block", body[i + 1:end]))
            i = end + 1
            continue
        if re.match(r"if\s*\(", body[i:]):
            condition, then, otherwise, i = if_statement(body, i)
            out.append(("if", condition, then, otherwise))
            continue
        m = re.match(r"(for|while)\s*\(", body[i:])
        if m:
            close = match_close(body, i + m.end() - 1, "(", ")")
            j = skip_space(body, close + 1)
            end = match_close(body, j, "{", "}") if body[j] == "{" else body.index(";", j)
            out.append(("loop", body[i:end + 1]))
            i = end + 1
            continue
        depth, j = 0, i
        while j < len(body):
            c = body[j]
            if c == '"':
                j += 1
                while body[j] != '"':
                    j += 2 if body[j] == "\\" else 1
            elif c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
            elif c == ";" and depth == 0:
                break
            j += 1
        out.append(("stmt", " ".join(body[i:j].split())))
        i = j + 1


def switch_cases(body: str) -> dict:
    """{PROJECTOR_TYPE_X: case body} of a switch whose cases are `case A: case B: { ... }`."""
    out = {}
    pattern = re.compile(r"((?:\s*case\s+PROJECTOR_TYPE_\w+\s*:)+)\s*\{", re.S)
    i = 0
    while m := pattern.search(body, i):
        end = match_close(body, m.end() - 1, "{", "}")
        for label in re.findall(r"PROJECTOR_TYPE_\w+", m.group(1)):
            out[label] = body[m.end():end]
        i = end + 1
    return out


def switch_body(text: str, anchor: str, switch: str = "switch (model.proj_type)") -> str:
    at = text.index(switch, text.index(anchor))
    opening = text.index("{", at)
    return strip_comments(text[opening + 1:match_close(text, opening, "{", "}")])


def preprocessor_types(mtmd: str, function: str) -> set:
    """The projector types mtmd_context's init_vision or init_audio has a preprocessor for (its
    switch's default throws "unexpected ... projector type")."""
    at = mtmd.index(f"void {function}()")
    opening = mtmd.index("{", mtmd.index("switch (proj)", at))
    body = strip_comments(mtmd[opening + 1:match_close(mtmd, opening, "{", "}")])
    if "default:" not in body or "throw" not in body[body.index("default:"):]:
        raise ValueError(f"{function}: no default that throws")
    return set(re.findall(r"case\s+(PROJECTOR_TYPE_\w+)\s*:", body))


class Reader:
    def __init__(self, source: str, header: str, mtmd: str):
        self.vision_types = preprocessor_types(mtmd, "init_vision")
        self.audio_types = preprocessor_types(mtmd, "init_audio")
        self.macros = dict(re.findall(r'#define\s+((?:KEY|TN)_\w+)\s+"([^"]*)"', header))
        self.names = re.findall(r'\{\s*(PROJECTOR_TYPE_\w+)\s*,\s*"([^"\\]*)"\s*\}',
                                re.search(r"PROJECTOR_TYPE_NAMES\s*=\s*\{(.*?)\n\};", header,
                                          re.S).group(1))
        self.hparams = switch_cases(switch_body(source, "// model-specific params"))
        self.tensors = switch_cases(switch_body(source, "if (is_ffn_swapped)"))
        self.common_tensors = self.common_tensor_names(source)
        self.embd = {}
        body = switch_body(source, "int clip_n_mmproj_embd(const struct clip_ctx * ctx)",
                           "switch (ctx->model.proj_type)")
        for m in re.finditer(r"((?:\s*case\s+PROJECTOR_TYPE_\w+\s*:)+)\s*return ([^;]*);", body):
            for label in re.findall(r"PROJECTOR_TYPE_\w+", m.group(1)):
                self.embd[label] = " ".join(m.group(2).split())
        self.builders = {}
        body = switch_body(source, "clip_get_graph_builder(clip_ctx * ctx",
                           "switch (ctx->proj_type())")
        for label, case in switch_cases(body).items():
            parsed = statements(case)
            self.builders[label] = len(parsed) == 1 and parsed[0][0] == "stmt" and bool(
                re.fullmatch(r"builder = std::make_unique<\w+>\(ctx, img\)", parsed[0][1]))

    def common_tensor_names(self, source: str) -> list:
        """The names load_tensors asks for before the type's case: a type that asks for one again
        throws (tensor already loaded) when the file has it."""
        start = source.index("model.class_embedding = get_tensor(")
        end = source.index("switch (model.proj_type)", start)
        names = []
        for m in re.finditer(r"get_tensor\((string_format\([^;]*?\)|TN_\w+)\s*(?:,[^;]*)?\);",
                             strip_comments(source[start:end])):
            names.append(re.sub(r"%[sd]", "*", self.macro_of(m.group(1))))
        return names

    def macro_of(self, expression: str) -> str:
        m = re.match(r"(?:string_format\()?((?:KEY|TN)_\w+)", expression)
        return self.macros[m.group(1)]

    # --- load_hparams ---

    def condition(self, text: str, enumerator: str, local: dict) -> bool:
        """A condition on the projector type only; NotFollowed for one on values."""
        expression = re.sub(
            r"model\.proj_type\s*(==|!=)\s*(PROJECTOR_TYPE_\w+)",
            lambda m: str((m.group(2) == enumerator) == (m.group(1) == "==")), text)
        for name, value in local.items():
            expression = re.sub(rf"\b{re.escape(name)}\b", str(value), expression)
        expression = expression.replace("||", " or ").replace("&&", " and ").replace("!", " not ")
        if not re.fullmatch(r"[\s()]*(?:(?:True|False|or|and|not)[\s()]*)+", expression):
            raise NotFollowed(f"condition ({' '.join(text.split())})")
        return bool(eval(expression))  # only True, False, and, or, not and parentheses

    def key(self, expression: str) -> str:
        if m := re.fullmatch(r"(KEY_\w+)", expression):
            return self.macros[m.group(1)]
        if m := re.fullmatch(r'string_format\((KEY_\w+),\s*"(\w+)"\)', expression):
            return self.macros[m.group(1)] % m.group(2)
        raise NotFollowed(f"key {expression}")

    @staticmethod
    def constant(expression: str) -> int:
        if not re.fullmatch(r"[\d\s*+]+", expression):
            raise NotFollowed(f"value {expression}")
        return eval(expression)  # digits, spaces, * and + only

    def read_hparams(self, body: str, p: Projector, local: dict) -> None:
        for statement in statements(body):
            kind = statement[0]
            if kind == "if":
                _, condition, then, otherwise = statement
                try:
                    taken = self.condition(condition, p.enumerator, local)
                except NotFollowed:
                    # A condition on values: followed when neither branch sets what is checked.
                    for branch in (then, otherwise or ""):
                        scratch = Projector(p.enumerator, p.name)
                        self.read_hparams(branch, scratch, dict(local))
                        if scratch.audio or any(step[0] != "Set" for step in scratch.steps):
                            raise
                        # What a branch set is not known after it.
                        p.known -= {step[1] for step in scratch.steps}
                    continue
                self.read_hparams(then if taken else (otherwise or ""), p, local)
                continue
            if kind != "stmt":
                raise NotFollowed(f"{kind} in load_hparams")
            s = statement[1]
            if not s or s.startswith("LOG_") or re.fullmatch(r'log_ffn_op = "\w+"', s):
                continue
            if m := re.fullmatch(r"(get_\w+)\((.*?),\s*hparams\.(\w+)(?:,\s*(.*))?\)", s):
                reader, key, member, required = m.groups()
                if reader != "get_u32" or member in CHECKED_FIELDS - set(KEY_ROLES):
                    raise NotFollowed(f"{reader} into hparams.{member}")
                if required is None or required in ("true", "false"):
                    required = required != "false"
                else:
                    required = self.condition(required, p.enumerator, local)
                p.steps.append(("Key", self.key(key), required, KEY_ROLES.get(member, "Read"),
                                member))
                if required:
                    p.known.add(member)  # an optional key keeps what the case set before
                continue
            if m := re.fullmatch(r"GGML_ASSERT\((.*)\)", s):
                self.assertion(m.group(1), p)
                continue
            if s == "set_internvl_dhr_res_candidates(model)":
                for member in ("preproc_min_tiles", "preproc_max_tiles"):
                    if member not in p.known:
                        raise NotFollowed(f"set_internvl_dhr_res_candidates with hparams.{member}"
                                          " unknown")
                p.steps.append(("TileCandidates",))
                continue
            if m := re.fullmatch(r"bool (\w+) = (.*)", s):
                local[m.group(1)] = self.condition(m.group(2), p.enumerator, local)
                continue
            if re.fullmatch(r"const int \w+ = [\w\s.*+]*", s):
                continue  # a value only a condition on values reads (whose branches only log)
            if m := re.fullmatch(r"hparams\.set_limit_image_tokens\((\d+),\s*(\d+)\)", s):
                p.steps.append(("Limit", int(m.group(1)), int(m.group(2))))
                continue
            if s == "hparams.set_limit_image_tokens()":
                continue  # only custom token counts, which the judge does not give
            if m := re.fullmatch(r"hparams\.set_warmup_n_tokens\(([\d\s*]+)\)", s):
                n = self.constant(m.group(1))
                side = math.isqrt(n)
                if side * side != n:
                    raise NotFollowed("set_warmup_n_tokens of a number that is not a square")
                p.steps.append(("Warmup", side))
                continue
            if m := re.fullmatch(r"hparams\.(\w+) = (.*)", s):
                member, value = m.groups()
                if member == "n_merge":
                    p.steps.append(("Merge", self.constant(value)))
                    p.known.add(member)
                    continue
                if member in AUDIO_FIELDS:
                    p.audio[member] = self.constant(value)
                    continue
                if member == "warmup_image_size" and value == "hparams.image_size":
                    p.steps.append(("WarmupImage",))
                    continue
                if member in CHECKED_FIELDS:
                    raise NotFollowed(f"sets hparams.{member}")
                if "hparams." in value or "(" in value:
                    raise NotFollowed(f"hparams.{member} from other values")
                if re.fullmatch(r"\d+", value):
                    p.steps.append(("Set", member, int(value)))
                    p.known.add(member)
                else:
                    p.known.discard(member)
                continue
            raise NotFollowed(f"statement {s}")

    @staticmethod
    def split_top(text: str, operator: str) -> list:
        """text split at `operator` outside parentheses."""
        parts, depth, start, i = [], 0, 0, 0
        while i < len(text):
            c = text[i]
            if c == '"':
                i = text.index('"', i + 1)
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif depth == 0 and text.startswith(operator, i):
                parts.append(text[start:i].strip())
                start = i = i + len(operator)
                continue
            i += 1
        parts.append(text[start:].strip())
        return parts

    def assertion(self, text: str, p: Projector) -> None:
        """GGML_ASSERT(text) as alternatives of comparisons; NotFollowed for anything else."""
        alternatives = []
        for alternative in self.split_top(text, "||"):
            comparisons = []
            for atom in self.split_top(alternative, "&&"):
                if re.fullmatch(r'"(?:\\.|[^"\\])*"', atom):
                    continue  # the message: a string literal is true
                m = re.fullmatch(r"hparams\.(\w+)(?:\s*%\s*(\d+))?\s*(==|!=|<=|>=|<|>)\s*"
                                 r"(?:hparams\.(\w+)|(\d+)|(INT32_MAX))", atom)
                if not m:
                    raise NotFollowed(f"GGML_ASSERT({' '.join(text.split())})")
                member, modulus, op, other, number, named = m.groups()
                for read in (member, other):
                    if read and read not in p.known:
                        raise NotFollowed(f"GGML_ASSERT on hparams.{read}, a value the case did"
                                          " not set")
                constant = int(number) if number else NAMED_CONSTANTS.get(named, 0)
                comparisons.append((member, int(modulus or 0), COMPARISONS[op], other or "",
                                    constant))
            if not comparisons:
                raise NotFollowed(f"GGML_ASSERT({' '.join(text.split())})")
            alternatives.append(comparisons)
        shown = re.sub(r'\s*&&\s*"(?:\\.|[^"\\])*"', "", text)
        p.steps.append(("Assert", len(p.asserts), " ".join(shown.split())))
        p.asserts.append(alternatives)

    # --- load_tensors ---

    def tensor_name(self, expression: str) -> str:
        if m := re.fullmatch(r"(TN_\w+)", expression):
            return self.macros[m.group(1)]
        m = re.fullmatch(r'string_format\((TN_\w+)((?:,\s*(?:"[^"]*"|\d+|prefix))*)\)', expression)
        if not m:
            raise NotFollowed(f"tensor name {expression}")
        arguments = tuple("{prefix}" if a == "prefix" else a[1:-1] if a.startswith('"') else int(a)
                          for a in re.findall(r'"[^"]*"|\d+|prefix', m.group(2)))
        return self.macros[m.group(1)] % arguments

    def read_tensors(self, body: str, p: Projector) -> None:
        for statement in statements(body):
            if statement[0] == "if":
                _, condition, then, otherwise = statement
                inner = statements(then)
                m = re.fullmatch(r"model\.(\w+)", condition)
                switch = (len(inner) == 1 and inner[0][0] == "stmt" and
                          re.fullmatch(r"model\.proj_type = (PROJECTOR_TYPE_\w+)", inner[0][1]))
                if not (m and switch and otherwise is None):
                    raise NotFollowed(f"if ({condition}) in load_tensors")
                p.becomes = (m.group(1), switch.group(1))
                continue
            if statement[0] != "stmt":
                raise NotFollowed(f"{statement[0]} in load_tensors")
            s = statement[1]
            if not s or s.startswith("LOG_"):
                continue
            m = re.fullmatch(r"model\.(\w+) = get_tensor\((.*?)(?:,\s*(true|false))?\)", s)
            if not m:
                raise NotFollowed(f"statement {s}")
            member, name, required = m.groups()
            p.tensors.append((member, self.tensor_name(name), required != "false"))

    def embd_of(self, enumerator: str, p: Projector):
        """The tensor clip_n_mmproj_embd reads for this type, its dim, and whether that dim is
        the width itself."""
        expression = self.embd.get(enumerator, "")
        m = re.match(r"ctx->model\.(\w+)->ne\[(\d)\]", expression)
        if not m:
            raise NotFollowed(f"clip_n_mmproj_embd: {expression or 'no case'}")
        for member, name, _ in p.tensors:
            if member == m.group(1):
                return name, int(m.group(2)), m.end() == len(expression)
        raise NotFollowed(f"clip_n_mmproj_embd reads model.{m.group(1)}, not one of the type's")

    def projector(self, enumerator: str, name: str) -> Projector:
        p = Projector(enumerator, name)
        p.vision = enumerator in self.vision_types
        p.audio_input = enumerator in self.audio_types
        try:
            if enumerator == "PROJECTOR_TYPE_QWEN25O":
                raise NotFollowed("read as qwen2.5vl_merger or qwen2a by modality")
            if enumerator not in self.hparams:
                raise NotFollowed("no case in load_hparams")
            self.read_hparams(self.hparams[enumerator], p, {})
            self.read_tensors(self.tensors.get(enumerator, ""), p)
            names = [tensor for _, tensor, _ in p.tensors]
            if len(set(names)) != len(names):
                raise NotFollowed("asks for a tensor twice")
            if not self.builders.get(enumerator):
                raise NotFollowed("clip_get_graph_builder does more than make the graph")
            for _, tensor, _ in p.tensors:
                for common in self.common_tensors:
                    if re.fullmatch(re.escape(common).replace(r"\*", ".*"),
                                    tensor.replace("{prefix}", "v")):
                        raise NotFollowed(f"asks for {tensor} again")
            read = {name for alternatives in p.asserts for comparisons in alternatives
                    for member, _, _, other, _ in comparisons for name in (member, other)}
            read |= {"preproc_min_tiles", "preproc_max_tiles"} if ("TileCandidates",) in p.steps \
                else set()
            p.steps = [s for s in p.steps if s[0] != "Set" or s[1] in read]
            p.embd_tensor, p.embd_dim, p.embd_exact = self.embd_of(enumerator, p)
            if p.becomes:
                member, target = p.becomes
                present = next((t for m, t, _ in p.tensors if m == member), None)
                if present is None or not self.builders.get(target):
                    raise NotFollowed(f"becomes {target}")
                tensor, dim, exact = self.embd_of(target, p)
                p.becomes = (present, tensor, dim)
                p.embd_exact = p.embd_exact and exact
        except NotFollowed as e:
            p.why_not = str(e)
        return p

    def projectors(self) -> list:
        return [self.projector(enumerator, name) for enumerator, name in self.names]
