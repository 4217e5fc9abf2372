/**
 * Kinference cloud fallback: external OpenAI- and Anthropic-compatible providers as fleet members, with request,
 * response and stream translation between the two formats. The wire dialects are {@link
 * dev.kinference.cloud.ProviderApi} plugins.
 */
module dev.kinference.cloud {
  requires transitive dev.kinference.core;
  requires transitive java.net.http;
  requires static transitive org.jspecify;

  exports dev.kinference.cloud;
  exports dev.kinference.cloud.translate;

  uses dev.kinference.cloud.ProviderApi;

  provides dev.kinference.cloud.ProviderApi with
      dev.kinference.cloud.OpenAiApi,
      dev.kinference.cloud.AnthropicApi;
}
