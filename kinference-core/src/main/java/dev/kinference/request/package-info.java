/**
 * The request model: an {@link dev.kinference.request.InferenceRequest} parsed from the JSON body of an OpenAI
 * chat or completions request or an Anthropic messages request, plus what the caller knows about it (tenant,
 * session, priority, headers).
 *
 * <p>Parsing never lets bad input through silently: every problem is an
 * {@link dev.kinference.request.InvalidRequestException} naming the field, which a gateway maps to HTTP 400 or 413.
 */
@NullMarked
package dev.kinference.request;

import org.jspecify.annotations.NullMarked;
