/**
 * Chat templates: {@link dev.kinference.vllm.template.ChatTemplate} renders the Jinja2 chat template of a Hugging
 * Face model exactly as transformers (and so vLLM) does, or fails with a
 * {@link dev.kinference.vllm.template.TemplateException} naming what it cannot render.
 */
@NullMarked
package dev.kinference.vllm.template;

import org.jspecify.annotations.NullMarked;
