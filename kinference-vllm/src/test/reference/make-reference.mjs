// Writes ../resources/reference/chat-reference.json: every case of corpus.json rendered by Hugging Face's own
// JavaScript Jinja implementation (@huggingface/jinja), and, for the Qwen3 cases, tokenized by Hugging Face's
// JavaScript tokenizers (@huggingface/tokenizers) from the Qwen3 tokenizer files. An independent implementation
// of what vLLM does with a chat request: apply the chat template, then encode without adding special tokens.
//
//   cd kinference-vllm/src/test/reference && npm ci && node make-reference.mjs [path/to/qwen3]
//
// The tokenizer directory defaults to ../../../../../shared/data/tokenizers/qwen3 (the workspace copy), or
// $QWEN3_TOKENIZER. Without it, the ids are left out and only renderings are written.
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const corpus = JSON.parse(readFileSync(join(here, "corpus.json"), "utf8"));
const templates = {};
for (const name of ["qwen3", "llama-3.1", "mistral-v0.3"]) {
  templates[name] = readFileSync(join(here, "..", "resources", "templates", `${name}.jinja`), "utf8");
}

const tokenizerDir = process.argv[2] ?? process.env.QWEN3_TOKENIZER
    ?? join(here, "..", "..", "..", "..", "..", "..", "shared", "data", "tokenizers", "qwen3");
let qwen3 = null;
if (existsSync(join(tokenizerDir, "tokenizer.json"))) {
  qwen3 = new Tokenizer(JSON.parse(readFileSync(join(tokenizerDir, "tokenizer.json"), "utf8")),
      JSON.parse(readFileSync(join(tokenizerDir, "tokenizer_config.json"), "utf8")));
} else {
  console.error(`no Qwen3 tokenizer at ${tokenizerDir}: writing renderings only`);
}

const out = [];
for (const c of corpus.cases) {
  const entry = { name: c.name, template: c.template };
  try {
    entry.rendered = new Template(templates[c.template]).render(c.context);
    if (qwen3 && c.template === "qwen3") {
      entry.ids = qwen3.encode(entry.rendered, { add_special_tokens: false }).ids;
    }
  } catch (e) {
    entry.error = String(e.message ?? e);
  }
  out.push(entry);
}
mkdirSync(join(here, "..", "resources", "reference"), { recursive: true });
const target = join(here, "..", "resources", "reference", "chat-reference.json");
writeFileSync(target, JSON.stringify({
  generator: "make-reference.mjs with @huggingface/jinja 0.5.11 and @huggingface/tokenizers 0.2.0",
  tokenizer: qwen3 ? "Qwen3 tokenizer.json" : null,
  cases: out,
}, null, 1) + "\n");
console.log(`wrote ${out.length} cases to ${target}`);
