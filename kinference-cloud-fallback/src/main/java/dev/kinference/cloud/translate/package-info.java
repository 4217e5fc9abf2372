/**
 * Translation between the OpenAI and Anthropic wire formats: request bodies, non-streaming responses, server-sent
 * event streams (text, tool calls, stop reasons, usage) and error bodies, plus an incremental SSE parser.
 *
 * <p>Translation never loses meaning silently: a request feature the other format cannot express (several choices,
 * log probabilities, a JSON response format, documents) is refused with an
 * {@link dev.kinference.cloud.translate.UnsupportedTranslationException} naming the field; parameters that only
 * tune sampling and have no counterpart (penalties, seed, logit bias) are dropped, as documented on
 * {@link dev.kinference.cloud.translate.Translation}.
 */
@NullMarked
package dev.kinference.cloud.translate;

import org.jspecify.annotations.NullMarked;
