#!/usr/bin/env python3
"""Renders every chat template of the corpus with Python's Jinja2, configured as transformers configures it.

The Java test ChatTemplateCorpusTest compares kinference's renderings with the files this script writes, byte for
byte; it does not need Python. ChatTemplateCorpusFreshnessTest runs this script with --check to prove the committed
renderings are still what Jinja2 produces.

Inputs (kinference-vllm/src/test/resources/templates/corpus/):
  <model>.jinja   real chat templates (SOURCES.md says where each one comes from)
  chats.json      the chats (with their tools, documents and template_kwargs), special tokens and the clock
                  strftime_now reads
Output:
  expected/<model>.json   {"template": ..., "renderings": [{"chat": name, "rendered": text} or
                           {"chat": name, "error": "ExceptionType: message", "raised": bool}]}
It also renders ../features/cases.json (one small template per Jinja2 feature, with its values) into
../features/expected.json, which ChatTemplateFeatureCorpusTest compares with.

Regenerate (needs Jinja2: apt-get install python3-jinja2, or pip install jinja2):
  python3 kinference-vllm/src/test/python/render_corpus.py            # rewrite expected/
  python3 kinference-vllm/src/test/python/render_corpus.py --check    # exit 1 if expected/ is stale (renderings
                                                                       # exactly; errors by kind, not message)

The environment mirrors transformers' src/transformers/utils/chat_template_utils.py (_compile_jinja_template and
render_jinja_template): ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension and an extension for the {% generation %} block (transformers' AssistantTracker, which only records
offsets), the tojson filter replaced by json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...),
and the globals raise_exception and strftime_now; render() receives messages, tools, documents,
add_generation_prompt, the special tokens and the chat's template_kwargs (transformers passes its extra keyword
arguments, vLLM its chat_template_kwargs, the same way).
"""

import argparse
import datetime
import json
import os
import sys

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("render_corpus.py needs Jinja2: apt-get install python3-jinja2 (or pip install jinja2)")

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "templates")
CORPUS = os.path.join(TEMPLATES, "corpus")
FEATURES = os.path.join(TEMPLATES, "features")


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    """What raise_exception raises (transformers raises jinja2.exceptions.TemplateError)."""


class GenerationBlock(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %} renders its body, as transformers' AssistantTracker does."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


def environment(now):
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render_all():
    with open(os.path.join(CORPUS, "chats.json"), encoding="utf-8") as f:
        spec = json.load(f)
    env = environment(datetime.datetime.fromisoformat(spec["clock"]))
    outputs = {}
    for file in sorted(os.listdir(CORPUS)):
        if not file.endswith(".jinja"):
            continue
        name = file[: -len(".jinja")]
        with open(os.path.join(CORPUS, file), encoding="utf-8", newline="") as f:
            source = f.read()
        renderings = []
        try:
            template = env.from_string(source)
        except jinja2.exceptions.TemplateError as e:
            template = None
            compile_error = f"{type(e).__name__}: {e}"
        for chat in spec["chats"]:
            if template is None:
                renderings.append({"chat": chat["name"], "error": compile_error, "raised": False})
                continue
            context = dict(spec["special_tokens"])
            context.update(messages=chat["messages"], tools=chat.get("tools"), documents=chat.get("documents"),
                           add_generation_prompt=chat["add_generation_prompt"])
            context.update(chat.get("template_kwargs", {}))
            try:
                renderings.append({"chat": chat["name"], "rendered": template.render(**context)})
            except Exception as e:  # what Jinja2 raises is what the Java side must refuse too
                renderings.append({"chat": chat["name"], "error": f"{type(e).__name__}: {e}",
                                   "raised": isinstance(e, RaisedByTemplate)})
        outputs[os.path.join(CORPUS, "expected", name + ".json")] = json.dumps(
            {"template": file, "renderings": renderings}, ensure_ascii=False, indent=1) + "\n"
    with open(os.path.join(FEATURES, "cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    renderings = []
    for case in cases:
        try:
            renderings.append({"rendered": env.from_string(case["template"]).render(**case["context"])})
        except Exception as e:
            renderings.append({"error": f"{type(e).__name__}: {e}", "raised": isinstance(e, RaisedByTemplate)})
    outputs[os.path.join(FEATURES, "expected.json")] = json.dumps(
        {"renderings": renderings}, ensure_ascii=False, indent=1) + "\n"
    return outputs


def outcomes(expected):
    """What --check compares: renderings exactly, errors by kind (Python's own messages vary across versions)."""
    result = []
    for r in expected["renderings"]:
        if "rendered" in r:
            result.append(("rendered", r["rendered"]))
        elif r["raised"]:
            result.append(("raised", r["error"]))
        else:
            result.append(("error",))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with expected/ instead of writing it")
    args = parser.parse_args()
    outputs = render_all()
    expected_dir = os.path.join(CORPUS, "expected")
    if args.check:
        stale = []
        for path, text in outputs.items():
            if not os.path.exists(path):
                stale.append(os.path.basename(path))
                continue
            with open(path, encoding="utf-8") as f:
                if outcomes(json.load(f)) != outcomes(json.loads(text)):
                    stale.append(os.path.basename(path))
        extra = sorted(set(os.path.join(expected_dir, f) for f in os.listdir(expected_dir) if f.endswith(".json"))
                       - set(outputs))
        if stale or extra:
            print(f"Jinja2 {jinja2.__version__} renders differently from expected/ for: {', '.join(stale + extra)}; "
                  "run render_corpus.py without --check to regenerate")
            return 1
        print(f"expected/ matches Jinja2 {jinja2.__version__} for {len(outputs) - 1} templates and the feature cases")
        return 0
    os.makedirs(expected_dir, exist_ok=True)
    for path, text in outputs.items():
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    print(f"wrote {len(outputs)} files with Jinja2 {jinja2.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
