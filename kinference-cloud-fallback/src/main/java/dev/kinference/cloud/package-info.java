/**
 * External (cloud) providers as fleet members: {@link dev.kinference.cloud.CloudProvider} describes an OpenAI-
 * or Anthropic-compatible API (base URL, the environment variable holding its key, models and their prices,
 * timeouts); {@link dev.kinference.cloud.ExternalProviders} turns providers into core
 * {@link dev.kinference.endpoint.Endpoint}s labelled {@code kinference.dev/external=true} and prepares the HTTP
 * request for one, translating the body when the provider speaks the other format; {@link
 * dev.kinference.cloud.ProviderClient} sends it over {@code java.net.http}. The wire dialects are
 * {@link dev.kinference.cloud.ProviderApi} plugins found with {@link java.util.ServiceLoader}: {@code openai} and
 * {@code anthropic} are built in.
 */
@NullMarked
package dev.kinference.cloud;

import org.jspecify.annotations.NullMarked;
