"""The runner of the GGUF conformance suite (conformance/README.md; the adapter protocol is
conformance/adapters/PROTOCOL.md): runs parser adapters on the cases of
conformance/manifest.json, judges each (case, parser, profile) against the expected verdict
and the canonical output, checks the expected-failure lists, and writes the results (JSON,
summary.md, index.html).

Modules:
  cli        options, the run as a whole, the console report
  suite      the manifest, case files, canonical outputs (fetched ones materialised)
  registry   conformance/adapters/parsers.json, ad-hoc adapters, --capabilities
  limits     the memory cap (RLIMIT_DATA + resident-memory watch) and OOM signs
  execute    running an adapter: one-shot and batch processes, raw results
  compare    trimming a canonical output to a level, value comparison, first differing path
  judge      outcome of a raw result in a profile
  xfail      expected-failure lists: reading, checking, --fix
  results    the machine JSON and the scores
  markdown   summary.md
  html       index.html
"""

VERSION = "1.0"


class SetupError(Exception):
    """A usage or setup problem: reported as one line, exit status 2, no traceback."""


def load_json(path, missing):
    """The JSON file at path; a SetupError saying `missing` when it does not exist, or what is
    wrong with it when it cannot be read or parsed."""
    import json
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise SetupError(missing) from None
    except (OSError, ValueError) as error:
        raise SetupError(f"cannot read {path}: {error}") from None
